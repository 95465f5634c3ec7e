"""`--add-noqa`: write `# noqa: CODE` on the line of each current finding, so that memlint can be
adopted on legacy code and only new findings are reported.

Codes are merged into a `# noqa: ...` comment already on the line (including other tools' codes);
a line whose end lies inside a multi-line string or after a backslash continuation cannot carry a
comment, and is left alone (counted as skipped). In notebooks the comments go into the cells'
sources, leaving the rest of the JSON as it was.
"""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.notebooks import NotebookError, code_cells, is_notebook, write_sources
from memlint.pipeline.reading import read_regular
from memlint.pipeline.source import UndecodableSource, decode
from memlint.pipeline.suppressions import NOQA_WITH_CODES, line_suppresses, split_codes
from memlint.pipeline.writing import FileChangedError, write_atomically

_NOT_SUPPRESSIBLE = registry.RESERVED_CODES  # findings about the file, not a line: a comment cannot suppress them


@dataclass
class NoqaOutcome:
    added: int = 0  # codes written
    skipped: int = 0  # findings whose line cannot take a comment
    problems: list[str] = field(default_factory=list)  # files that could not be read: warnings
    unwritten: list[str] = field(default_factory=list)  # files that could not be written: errors (exit 2)


def _rows_that_cannot_end_with_a_comment(text: str) -> set[int]:
    rows: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return set(range(1, text.count("\n") + 2))
    for token in tokens:
        if token.start[0] != token.end[0] and token.type not in (tokenize.NEWLINE, tokenize.NL):
            rows.update(range(token.start[0], token.end[0]))  # a string spanning lines
    for number, line in enumerate(text.splitlines(), start=1):
        if line.rstrip().endswith("\\"):
            rows.add(number)
    return rows


def with_noqa(line: str, codes: Iterable[str]) -> str:
    """The line (without its newline) with `codes` in its noqa comment."""
    codes = [code for code in codes if not line_suppresses(line, code)]
    if not codes:
        return line
    match = NOQA_WITH_CODES.search(line)
    if match:
        existing = split_codes(match.group("codes"))
        merged = ", ".join(dict.fromkeys([*existing, *sorted(codes)]))
        return line[: match.start("codes")] + merged + line[match.end("codes") :]
    return f"{line.rstrip()}  # noqa: {', '.join(sorted(codes))}"


def add_noqa(text: str, diagnostics: Iterable[Diagnostic], *, python: Optional[str] = None) -> tuple[str, int, int]:
    """(new text, codes added, findings skipped) for one file's text.

    `python` is the same text as Python can tokenize it, line for line (a notebook cell with its
    IPython lines masked), when `text` itself cannot be.
    """
    by_row: dict[int, set[str]] = defaultdict(set)
    skipped = 0
    blocked = _rows_that_cannot_end_with_a_comment(text if python is None else python)
    for d in diagnostics:
        if d.code in _NOT_SUPPRESSIBLE:
            continue
        if d.location.row in blocked:
            skipped += 1
        else:
            by_row[d.location.row].add(d.code)
    lines = text.splitlines(keepends=True)
    added = 0
    for row, codes in by_row.items():
        if row > len(lines):
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        new_body = with_noqa(body, codes)
        if new_body != body:
            added += len([c for c in codes if not line_suppresses(body, c)])
            lines[row - 1] = new_body + line[len(body) :]
    return "".join(lines), added, skipped


def _add_noqa_to_notebook(text: str, diagnostics: Iterable[Diagnostic]) -> tuple[str, int, int]:
    """Comments in the cells the findings are in; only those cells' sources change."""
    cells = {cell.index: cell for cell in code_cells(text, "notebook.ipynb")}
    by_cell: dict[int, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        if d.cell is not None:
            by_cell[d.cell].append(d)
    sources: dict[int, str] = {}
    added = skipped = 0
    for index, found in by_cell.items():
        cell = cells.get(index)
        if cell is None:
            continue
        new_source, cell_added, cell_skipped = add_noqa(cell.source, found, python=cell.masked)
        added, skipped = added + cell_added, skipped + cell_skipped
        if new_source != cell.source:
            sources[index] = new_source
    return (write_sources(text, sources) if sources else text), added, skipped


def add_noqa_to_files(diagnostics: Iterable[Diagnostic], roots: Optional[Sequence[str]] = None) -> NoqaOutcome:
    """`roots`: the real paths named on the command line; a symlink found in a directory is written
    only when the file it names is inside them, as `--fix` does (memlint/pipeline/writing.py)."""
    outcome = NoqaOutcome()
    by_file: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        by_file[d.filename].append(d)
    for filename, found in sorted(by_file.items()):
        path = Path(filename)
        try:
            data = read_regular(path, None)
            source = decode(data)
            edit = _add_noqa_to_notebook if is_notebook(filename) else add_noqa
            new_text, added, skipped = edit(source.text, found)
        except (OSError, UndecodableSource, NotebookError) as error:
            outcome.problems.append(f"{filename}: cannot read: {error}")
            continue
        outcome.skipped += skipped
        if new_text == source.text:
            continue
        try:
            write_atomically(path, source.encode(new_text), expected=data, roots=roots)
        except (FileChangedError, OSError) as error:
            outcome.unwritten.append(f"{filename}: noqa comments not written: {error}")
            continue
        outcome.added += added
    return outcome
