"""Running a check (or a fix) over many files, in worker processes when there are enough of them."""

from __future__ import annotations

import os
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from memlint import registry
from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.engine import lint_text, reserved_diagnostic
from memlint.fixes import FileChangedError, fix_text, write_atomically
from memlint.notebooks import fix_notebook, is_notebook, lint_notebook
from memlint.source import UndecodableSource, decode

# Below this many files, starting worker processes costs more than it saves.
PARALLEL_THRESHOLD = 8


@dataclass(frozen=True)
class Mode:
    fix: bool = False  # compute fixes
    write: bool = False  # write fixed files back (False for --diff)
    unsafe: bool = False


@dataclass
class FileResult:
    filename: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    original: Optional[str] = None  # set when fixes changed the text
    fixed_text: Optional[str] = None
    fixed: Counter = field(default_factory=Counter)
    dropped: list[Diagnostic] = field(default_factory=list)
    error: Optional[str] = None  # an I/O problem, reported on stderr


def display_name(path: Path) -> str:
    """Paths are shown relative to the working directory when they are under it."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path.cwd()).as_posix()
    except ValueError:
        return Path(path).as_posix()


def process_text(text: str, filename: str, settings: Settings, mode: Mode) -> FileResult:
    lint, fix = (lint_notebook, fix_notebook) if is_notebook(filename) else (lint_text, fix_text)
    if not mode.fix:
        return FileResult(filename, lint(text, filename, settings))
    outcome = fix(text, filename, settings, unsafe=mode.unsafe)
    result = FileResult(filename, outcome.remaining, fixed=outcome.fixed, dropped=outcome.dropped)
    if outcome.text != text:
        result.original, result.fixed_text = text, outcome.text
    return result


def process_file(path: Path, settings: Settings, mode: Mode) -> FileResult:
    filename = display_name(path)
    try:
        data = path.read_bytes()
    except OSError as error:
        return FileResult(filename, error=f"{filename}: cannot read: {error.strerror or error}")
    try:
        source = decode(data)
    except UndecodableSource as error:
        return FileResult(filename, [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error}", filename)])
    result = process_text(source.text, filename, settings, mode)
    if mode.write and result.fixed_text is not None:
        try:
            write_atomically(path, source.encode(result.fixed_text), expected=data)
        except (FileChangedError, OSError) as error:
            result.error = f"{filename}: fixes not written: {error}"
    return result


def _process_many(args: tuple[Path, Settings, Mode]) -> FileResult:
    return process_file(*args)


def run(files: Sequence[Path], settings: Settings, mode: Mode, *, jobs: Optional[int] = None) -> list[FileResult]:
    """Results in the order of `files` (which discovery sorted), whatever the number of jobs."""
    jobs = jobs or os.cpu_count() or 1
    if jobs <= 1 or len(files) < PARALLEL_THRESHOLD:
        return [process_file(path, settings, mode) for path in files]
    registry.all_rules()  # import the rules once, before forking
    chunk = max(1, len(files) // (jobs * 8))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(_process_many, [(path, settings, mode) for path in files], chunksize=chunk))
