"""Running a check (or a fix) over many files, in worker processes when there are enough of them.

What only some runs need is imported where it is used, so that checking one file (a pre-commit hook,
an editor) starts fast: the process pool (40-50 ms of multiprocessing imports here) only when workers
start, the fix code only when fixing, the notebook code only for a notebook.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from memlint import registry
from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.engine import lint_text, reserved_diagnostic
from memlint.source import UndecodableSource, decode
from memlint.workers import new_pool, worker_count

if TYPE_CHECKING:
    from memlint.cache import Cache

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 8


@dataclass(frozen=True)
class Mode:
    fix: bool = False  # compute fixes
    write: bool = False  # write fixed files back (False for --diff)
    unsafe: bool = False
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


def process_text(text: str, filename: str, settings: Settings, mode: Mode) -> FileResult:
    if filename.endswith(".ipynb"):  # the notebook and fix code are imported only when used
        from memlint.notebooks import fix_notebook as fix, lint_notebook as lint
    else:
        lint = lint_text
        if mode.fix:
            from memlint.fixes import fix_text as fix
    if not mode.fix:
        return FileResult(filename, lint(text, filename, settings))
    outcome = fix(text, filename, settings, unsafe=mode.unsafe)
    result = FileResult(filename, outcome.remaining, fixed=outcome.fixed, dropped=outcome.dropped)
    if outcome.text != text:
        result.original, result.fixed_text = text, outcome.text
    return result


def process_file(path: Path, settings: Settings, mode: Mode, cache: Optional[Cache] = None) -> FileResult:
    filename = display_name(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        return FileResult(filename, error=f"{filename}: cannot read: {error.strerror or error}")
    if cache is not None and not mode.fix:  # runs that fix are never cached
        key = cache.key(data, filename)
        cached = cache.get(key)
        if cached is not None:
            return FileResult(filename, cached)
        result = _process_data(path, filename, data, settings, mode)
        if result.error is None and not any(d.code == registry.INTERNAL_ERROR[0] for d in result.diagnostics):
            cache.put(key, result.diagnostics)
        return result
    return _process_data(path, filename, data, settings, mode)


def _process_data(path: Path, filename: str, data: bytes, settings: Settings, mode: Mode) -> FileResult:
    try:
        source = decode(data)
    except UndecodableSource as error:
        return FileResult(filename, [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error}", filename)])
    try:
        result = process_text(source.text, filename, settings, mode)
    except Exception as error:  # a bug in memlint must cost one file, not the run
        message = f"memlint raised {type(error).__name__} while checking this file: {error}"
        return FileResult(filename, [reserved_diagnostic(registry.INTERNAL_ERROR, message, filename)])
    if mode.write and result.fixed_text is not None:
        from memlint.fixes import FileChangedError, write_atomically

        try:
            write_atomically(path, source.encode(result.fixed_text), expected=data, roots=mode.roots)
        except (FileChangedError, OSError) as error:
            # The file keeps its findings: report those of the text on disk, and nothing as fixed.
            unfixed = process_text(source.text, filename, settings, Mode())
            result = FileResult(filename, unfixed.diagnostics, unwritten=True)
            result.error = f"{filename}: fixes not written: {error}"
    return result


def _size_of(path: Path) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _process_chunk(paths: Sequence[Path], settings: Settings, mode: Mode, cache: Optional[Cache] = None) -> list[FileResult]:
    return [process_file(path, settings, mode, cache) for path in paths]


def _cached(path: Path, cache: Cache) -> Optional[FileResult]:
    """The stored result for an unchanged file, looked up in this process (no worker needed)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    filename = display_name(path)
    diagnostics = cache.get(cache.key(data, filename))
    return FileResult(filename, diagnostics) if diagnostics is not None else None


def _isolated(paths: Sequence[Path], settings: Settings, mode: Mode, cache: Optional[Cache] = None) -> list[FileResult]:
    """One file at a time in a worker of its own, after a worker died: the file that kills a worker
    again (a segfault in the parser, the memory killer, os._exit) becomes an ML900 finding."""
    from concurrent.futures.process import BrokenProcessPool

    results = []
    pool = new_pool(1)
    try:
        for path in paths:
            try:
                results.append(pool.submit(process_file, path, settings, mode, cache).result())
            except BrokenProcessPool:
                pool.shutdown(wait=False)
                pool = new_pool(1)
                name = display_name(path)
                message = "the worker process checking this file died (a crash or out of memory); other files were checked"
                results.append(FileResult(name, [reserved_diagnostic(registry.INTERNAL_ERROR, message, name)]))
    finally:
        pool.shutdown(wait=True)
    return results


def run(
    files: Sequence[Path],
    settings: Settings,
    mode: Mode,
    *,
    jobs: Optional[int] = None,
    cache: Optional[Cache] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> list[FileResult]:
    """Results in the order of `files` (which discovery sorted), whatever the number of jobs.

    With a cache, unchanged files are answered from it here and only the rest go to workers.
    `progress(n)` is called as each batch of n files is done.
    """
    jobs = jobs or os.cpu_count() or 1
    done: dict[int, FileResult] = {}
    if cache is not None and not mode.fix:
        for index, path in enumerate(files):
            hit = _cached(path, cache)
            if hit is not None:
                done[index] = hit
        if done and progress:
            progress(len(done))
    todo = [index for index in range(len(files)) if index not in done]
    jobs = worker_count(jobs, len(todo))
    if jobs <= 1 or len(todo) < PARALLEL_THRESHOLD:
        for index in todo:
            done[index] = process_file(files[index], settings, mode, cache)
            if progress:
                progress(1)
        return [done[index] for index in range(len(files))]
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    registry.all_rules()  # import the rules and libcst once, before forking
    # Largest files first, in small chunks, so that no worker is left with a long tail at the end
    # (the results go back in discovery order whatever order they come in).
    todo.sort(key=lambda index: -_size_of(files[index]))
    size = max(1, len(todo) // (jobs * 32))
    chunks = [todo[start : start + size] for start in range(0, len(todo), size)]
    with new_pool(jobs) as pool:
        futures = {
            pool.submit(_process_chunk, [files[i] for i in chunk], settings, mode, cache): chunk for chunk in chunks
        }
        for future in as_completed(futures):
            chunk = futures[future]
            try:
                chunk_results = future.result()
            except BrokenProcessPool:  # a worker died: the chunks it took down are checked again
                chunk_results = _isolated([files[i] for i in chunk], settings, mode, cache)
            done.update(zip(chunk, chunk_results))
            if progress:
                progress(len(chunk))
    return [done[index] for index in range(len(files))]
