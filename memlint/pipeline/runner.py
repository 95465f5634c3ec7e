"""Running a check (or a fix) over many files, in worker processes when there are enough of them.

What only some runs need is imported where it is used, so that checking one file (a pre-commit hook,
an editor) starts fast: the process pool (40-50 ms of multiprocessing imports here) only when workers
start, the fix code only when fixing, the notebook code only for a notebook.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.cache import content_digest
from memlint.pipeline.engine import lint_text
from memlint.pipeline.prepare import UNREADABLE, Prepared, prepare_chunk, prepare_file, project_pass
from memlint.pipeline.reading import read_regular  # never blocks on a FIFO put where a file was
from memlint.pipeline.reserved import depends_on_the_machine, reserved_diagnostic
from memlint.pipeline.source import UndecodableSource, decode
from memlint.pipeline.workers import fewer_collections, new_pool, worker_count

if TYPE_CHECKING:
    from memlint.pipeline.cache import Cache
    from memlint.pipeline.project import FileView

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 8


@dataclass(frozen=True)
class Mode:
    """What a run does with each file's findings. Whether unsafe fixes apply is not here: it is each
    file's `Settings.unsafe_fixes` (its closest configuration, the command line's flag over it)."""

    fix: bool = False  # compute fixes
    write: bool = False  # write fixed files back (False for --diff)
    # Real paths of the paths named on the command line: a fix is never written to a file outside
    # them (a symlink found in a directory that points elsewhere). None: no such limit.
    roots: Optional[tuple[str, ...]] = None


@dataclass
class FileResult:
    filename: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    original: Optional[str] = None  # set when fixes changed the text
    fixed_text: Optional[str] = None
    fixed: Counter = field(default_factory=Counter)
    dropped: list[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None  # an I/O problem, reported on stderr
    unwritten: bool = False  # its fixes could not be written: an error (exit 2), nothing counted as fixed


def fixed_count(results: Sequence[FileResult]) -> int:
    """The number every fix message shows (`Fixed N`, `Would fix N`, `(N fixed, ...)`, --show-fixes):
    findings whose fix was applied. A fix several findings share (ML016's per import line) counts once
    per finding, as `check`'s "[*] N fixable" counts the findings whose fix applies."""
    return sum(sum(result.fixed.values()) for result in results)


def display_name(path: Path) -> str:
    """Paths are shown relative to the working directory when they are under it."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return Path(path).as_posix()


@dataclass(frozen=True)
class Task:
    """What the project pass (phase one of `run`) hands to the lint of one file."""

    view: Optional[FileView] = None  # the project facts it depends on; None: the file is its own project
    digest: Optional[str] = None  # its bytes' digest in phase one: findings of other bytes are not cached
    screened: bool = False  # phase one compiled it and its screens let it through
    rules: Optional[frozenset[str]] = None  # where screened: the rules whose screens did (Prepared.rules)


def process_text(text: str, filename: str, settings: Settings, mode: Mode, task: Task = Task()) -> FileResult:
    settings = settings.for_path(filename)  # the closest configuration file's (config.ConfigTree)
    unsafe = settings.unsafe_fixes  # the command line's --[no-]unsafe-fixes is in it
    if filename.endswith(".ipynb"):  # the notebook and fix code are imported only when used
        from memlint.pipeline.notebooks import fix_notebook as fix
        from memlint.pipeline.notebooks import lint_notebook as lint

        if not mode.fix:  # a notebook is a project of its own
            return FileResult(filename, lint(text, filename, settings, task.view))
        outcome = fix(text, filename, settings, unsafe=unsafe, project=task.view)
    elif not mode.fix:
        return FileResult(filename, lint_text(text, filename, settings, task.view, screened=task.screened, rules=task.rules))
    else:
        from memlint.pipeline.fixes import fix_text

        outcome = fix_text(text, filename, settings, unsafe=unsafe, project=task.view)
    result = FileResult(filename, outcome.remaining, fixed=outcome.fixed, dropped=outcome.dropped)
    if outcome.text != text:
        result.original, result.fixed_text = text, outcome.text
    return result


def process_file(
    path: Path, settings: Settings, mode: Mode, cache: Optional[Cache] = None, task: Task = Task()
) -> FileResult:
    filename = display_name(path)
    try:
        data = read_regular(path, None)
    except OSError as error:
        return FileResult(filename, error=f"{filename}: cannot read: {error.strerror or error}")
    if task.digest is not None and content_digest(data) != task.digest:
        task = Task(task.view)  # changed since phase one: not screened with these bytes, not cached
    elif cache is not None and not mode.fix:  # runs that fix are never cached
        key = cache.key(data, filename, task.view.digest if task.view is not None else "")
        cached = cache.get(key)
        if cached is not None:
            return FileResult(filename, cached)
        result = _process_data(path, filename, data, settings, mode, task)
        if result.error is None and not any(map(depends_on_the_machine, result.diagnostics)):
            cache.put(key, result.diagnostics)
        return result
    return _process_data(path, filename, data, settings, mode, task)


def _process_data(path: Path, filename: str, data: bytes, settings: Settings, mode: Mode, task: Task = Task()) -> FileResult:
    try:
        source = decode(data)
    except UndecodableSource as error:
        return FileResult(filename, [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error}", filename)])
    try:
        result = process_text(source.text, filename, settings, mode, task)
    except Exception as error:  # a bug in memlint must cost one file, not the run
        message = f"memlint raised {type(error).__name__} while checking this file: {error}"
        return FileResult(filename, [reserved_diagnostic(registry.INTERNAL_ERROR, message, filename)])
    if mode.write and result.fixed_text is not None:
        from memlint.pipeline.writing import FileChangedError, write_atomically

        try:
            write_atomically(path, source.encode(result.fixed_text), expected=data, roots=mode.roots)
        except (FileChangedError, OSError) as error:
            # The file keeps its findings: report those of the text on disk, and nothing as fixed.
            unfixed = process_text(source.text, filename, settings, Mode(), Task(task.view))
            result = FileResult(filename, unfixed.diagnostics, unwritten=True)
            result.error = f"{filename}: fixes not written: {error}"
    return result


def _size_of(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _process_chunk(
    paths: Sequence[Path], settings: Settings, mode: Mode, cache: Optional[Cache] = None, tasks: Optional[Sequence[Task]] = None
) -> list[FileResult]:
    fewer_collections()  # in a worker: for the rest of its life
    tasks = tasks or [Task()] * len(paths)
    return [process_file(path, settings, mode, cache, task) for path, task in zip(paths, tasks)]


def _isolated(
    paths: Sequence[Path], settings: Settings, mode: Mode, cache: Optional[Cache] = None, tasks: Optional[Sequence[Task]] = None
) -> list[FileResult]:
    """One file at a time in a worker of its own, after a worker died: the file that kills a worker
    again (a segfault in the parser, the memory killer, os._exit) becomes an ML900 finding."""
    from concurrent.futures.process import BrokenProcessPool

    results = []
    pool = new_pool(1)
    try:
        for path, task in zip(paths, tasks or [Task()] * len(paths)):
            try:
                results.append(pool.submit(process_file, path, settings, mode, cache, task).result())
            except BrokenProcessPool:
                pool.shutdown(wait=False)
                pool = new_pool(1)
                name = display_name(path)
                message = "the worker process checking this file died (a crash or out of memory); other files were checked"
                results.append(FileResult(name, [reserved_diagnostic(registry.INTERNAL_ERROR, message, name)]))
    except BaseException:  # Ctrl-C: end the worker now rather than after its task
        pool.stop()
        raise
    finally:
        pool.shutdown(wait=True)
    return results


def _chunks(indices: list[int], files: Sequence[Path], jobs: int) -> list[list[int]]:
    """Largest files first, in small chunks, so that no worker is left with a long tail at the end
    (results go back in discovery order whatever order they come in)."""
    indices = sorted(indices, key=lambda index: -_size_of(files[index]))
    size = max(1, len(indices) // (jobs * 32))
    return [indices[start : start + size] for start in range(0, len(indices), size)]


class _Workers:
    """The process pool both phases share, started on first need (with the rules and libcst imported
    first, so that no worker imports them again), and started afresh if a worker died."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.pool = None

    def get(self):
        if self.pool is None:
            registry.all_rules()  # import the rules and libcst once, before forking
            self.pool = new_pool(self.jobs)
        return self.pool

    def broken(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False)
            self.pool = None

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None

    def stop(self) -> None:
        """Ctrl-C: drop the queued files and interrupt the workers' current ones (workers.py)."""
        if self.pool is not None:
            self.pool.stop()
            self.pool = None


def _prepare_in_workers(
    files: Sequence[Path], names: Sequence[str], settings: Settings, cache: Optional[Cache], workers: _Workers
) -> Callable[[list[int]], dict[int, Prepared]]:
    """Phase one's worker share (memlint/pipeline/prepare.py): the files whose summaries the cache lacks."""

    def prepare(todo: list[int]) -> dict[int, Prepared]:
        if workers.jobs <= 1 or len(todo) < PARALLEL_THRESHOLD:
            return {index: prepare_file(files[index], names[index], settings, cache) for index in todo}
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        pool = workers.get()
        futures = {
            pool.submit(prepare_chunk, [files[i] for i in chunk], [names[i] for i in chunk], settings, cache): chunk
            for chunk in _chunks(todo, files, workers.jobs)
        }
        prepared: dict[int, Prepared] = {}
        broken = False
        for future in as_completed(futures):
            chunk = futures[future]
            try:
                prepared.update(zip(chunk, future.result()))
            except BrokenProcessPool:  # phase two checks these files one by one and reports the crash
                prepared.update((index, UNREADABLE) for index in chunk)
                broken = True
        if broken:
            workers.broken()
        return prepared

    return prepare


def run(
    files: Sequence[Path],
    settings: Settings,
    mode: Mode,
    *,
    jobs: Optional[int] = None,
    cache: Optional[Cache] = None,
    progress: Optional[Callable[[int], None]] = None,
    context: Sequence[Path] = (),
) -> list[FileResult]:
    """Results in the order of `files` (which discovery sorted), whatever the number of jobs.
    `context`: more files for the project pass to summarise, not linted (--project-context).

    Two phases: every file's summary (memlint/pipeline/prepare.py), resolved into the project's facts in this
    process (memlint/pipeline/project.py); then the lint of each file with the facts it depends on.  With a
    cache, unchanged summaries and findings (keyed on the file and on those facts) are answered here
    and only the rest go to workers.  `progress(n)` is called as each batch of n files is done.
    """
    jobs = jobs or os.cpu_count() or 1
    workers = _Workers(worker_count(jobs, len(files) + len(context)))
    summarised = [*files, *context]
    names = [display_name(path) for path in summarised]
    thresholds = fewer_collections()
    try:
        entries = cache if not mode.fix else None  # runs that fix read and write no entry
        facts = project_pass(summarised, names, settings, entries, _prepare_in_workers(summarised, names, settings, entries, workers))
        facts = facts[: len(files)]
        done: dict[int, FileResult] = {}
        tasks: dict[int, Task] = {}
        for index, known in enumerate(facts):
            if known.screened is False and not known.view.widens_screens:
                done[index] = FileResult(names[index])  # no rule can report, whatever the facts
            elif entries is not None and known.digest is not None:
                hit = entries.get(entries.key_for(known.digest, names[index], known.view.digest))
                if hit is not None:
                    done[index] = FileResult(names[index], hit)
            if index not in done:
                # Phase one's screens ran without the project facts: where these widen them, the
                # rules are chosen again in phase two (from the words: lint_text).
                rules = None if known.view.widens_screens else known.rules
                tasks[index] = Task(known.view, known.digest, known.screened is True, rules)
        if done and progress:
            progress(len(done))
        todo = [index for index in range(len(files)) if index not in done]
        if workers.jobs <= 1 or len(todo) < PARALLEL_THRESHOLD:
            for index in todo:
                done[index] = process_file(files[index], settings, mode, cache, tasks[index])
                if progress:
                    progress(1)
            return [done[index] for index in range(len(files))]
        from concurrent.futures import as_completed
        from concurrent.futures.process import BrokenProcessPool

        pool = workers.get()
        futures = {
            pool.submit(_process_chunk, [files[i] for i in chunk], settings, mode, cache, [tasks[i] for i in chunk]): chunk
            for chunk in _chunks(todo, files, workers.jobs)
        }
        for future in as_completed(futures):
            chunk = futures[future]
            try:
                chunk_results = future.result()
            except BrokenProcessPool:  # a worker died: the chunks it took down are checked again
                chunk_results = _isolated([files[i] for i in chunk], settings, mode, cache, [tasks[i] for i in chunk])
            done.update(zip(chunk, chunk_results))
            if progress:
                progress(len(chunk))
        return [done[index] for index in range(len(files))]
    except BaseException:  # Ctrl-C (or a bug): do not wait for the files still queued
        workers.stop()
        raise
    finally:
        workers.close()
        gc.set_threshold(*thresholds)
