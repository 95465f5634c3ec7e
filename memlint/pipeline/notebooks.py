"""Jupyter notebooks: lint and fix the code cells of an `.ipynb` file.

The code cells are joined, in order, into one virtual module (one boundary comment before each cell),
so that an import in the first cell and a model built in the third are known in the training loop of
the fifth, as they are when the notebook runs. That module is linted or fixed like a Python file, and
findings are mapped back: `cell` is the 1-based index among all cells (markdown included, as Jupyter
shows them) and rows and columns are within the cell.

IPython syntax (`%timeit f()`, `%%time`, `!pip install x`, `files = !ls`, `obj?`, `torch.*Tensor?`)
is masked with a placeholder statement of one line before parsing, and put back after fixing. A cell
indented as a whole is dedented as IPython does before running it (its `leading_indent` step: the
first line's indentation is removed from every line) and indented again after fixing. Cells whose
cell magic runs another language (`%%bash`, `%%writefile`, ...) are skipped; a cell that still does
not parse gets its own ML000 and is left out of the module, so the other cells are still linted.

A fix rewrites only the `source` of the cells it changed, in the notebook's own JSON text: outputs,
metadata, key order, indentation and the trailing newline stay byte for byte as they were.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Iterator, Optional

from memlint.analysis.notebooks import JUPYTER_CELL, JUPYTER_CELL_MARKER
from memlint.config import Settings
from memlint.diagnostics import Diagnostic, Edit, Location
from memlint.pipeline import registry
from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import FixOutcome, fix_text, parses
from memlint.pipeline.reserved import reserved_diagnostic, syntax_error

if TYPE_CHECKING:
    from memlint.pipeline.project import FileView

NOTEBOOK_SUFFIX = ".ipynb"
# Cell magics whose body is Python that IPython runs (timed, captured, profiled).
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "memit", "debug"})

_MAGIC_START = re.compile(r"^[ \t]*(?:%|!|\?)")
_MAGIC_ASSIGNMENT = re.compile(r"^[ \t]*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*[%!]")
# `obj?`, `obj.attr??` and the wildcard search `torch.*Tensor?`
_HELP_SUFFIX = re.compile(r"^[ \t]*[A-Za-z_*][\w.*]*\?\??[ \t]*$")
_LEADING_INDENT = re.compile(r"^[ \t]+")
_PLACEHOLDER = re.compile(r"^([ \t]*)pass  # memlint-magic-(\d+)$")
_BOUNDARY = JUPYTER_CELL
_WHITESPACE = re.compile(r"[ \t\n\r]*")


def is_notebook(filename: str) -> bool:
    return filename.endswith(NOTEBOOK_SUFFIX)


class NotebookError(Exception):
    """The text is not a notebook memlint can read (not JSON, or not nbformat 4)."""


# ---------------------------------------------------------------------------- reading


@dataclass
class _Cell:
    index: int  # 1-based among all cells
    source: str  # the cell's original source
    masked: str  # parseable Python, ending with a newline
    magics: dict[int, tuple[str, str]]  # placeholder number -> (its indentation, the IPython line)
    start_row: int = 0  # where the cell's first line is in the virtual module
    offset: int = 0
    indent: str = ""  # the indentation removed from every line of a cell indented as a whole


@dataclass
class _Notebook:
    text: str
    cells: list[dict]  # the notebook's cells, as parsed
    code: list[_Cell] = field(default_factory=list)  # code cells in the virtual module
    broken: list[_Cell] = field(default_factory=list)  # code cells that do not parse

    @property
    def module(self) -> str:
        return "".join(f"{JUPYTER_CELL_MARKER.format(cell.index)}\n{cell.masked}" for cell in self.code)


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        return "".join(source)
    if isinstance(source, str):
        return source
    raise NotebookError(f"cell source is neither a string nor a list of strings: {source!r:.40}")


def mask_magics(source: str) -> Optional[tuple[str, dict[int, tuple[str, str]]]]:
    """The cell with each IPython line replaced by a placeholder statement, or None when the cell
    is not Python at all (a cell magic that runs something else).

    The mapping gives, per placeholder, the indentation it was written with and the original line.
    """
    lines = source.splitlines(keepends=True)
    magics: dict[int, tuple[str, str]] = {}
    first = lines[0].strip() if lines else ""
    continuing, indent = False, ""
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        if number == 0 and first.startswith("%%"):
            name = first[2:].split(maxsplit=1)[0] if first[2:].strip() else ""
            if name not in PYTHON_CELL_MAGICS:
                return None
        elif not (continuing or _MAGIC_START.match(body) or _MAGIC_ASSIGNMENT.match(body) or _HELP_SUFFIX.match(body)):
            continue
        if not continuing:  # continuation lines of a magic keep its indentation, whatever theirs
            indent = body[: len(body) - len(body.lstrip(" \t"))]
        continuing = body.endswith("\\")
        placeholder = len(magics)
        magics[placeholder] = (indent, body)
        lines[number] = f"{indent}pass  # memlint-magic-{placeholder}" + line[len(body):]
    return "".join(lines), magics


def _read(text: str, filename: str) -> _Notebook:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise NotebookError(f"not valid JSON: {error}") from None
    except RecursionError:  # json's parser recurses per level of nesting
        raise NotebookError("not a notebook: its JSON is nested too deeply to read") from None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        raise NotebookError("no `cells` list (only nbformat 4 notebooks are supported)")
    notebook = _Notebook(text, data["cells"])
    for index, cell in enumerate(data["cells"], start=1):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        if not source.strip():
            continue
        masked, magics, indent = source, {}, ""
        if not parses(source, filename):
            indent = _uniform_indent(source)
            result = mask_magics(_dedent(source, indent))
            if result is None:
                continue
            masked, magics = result
        if not masked.endswith(("\n", "\r")):
            masked += "\n"
        entry = _Cell(index, source, masked, magics, indent=indent)
        (notebook.code if parses(masked, filename) else notebook.broken).append(entry)
    row, offset = 1, 0
    for cell in notebook.code:
        marker = len(JUPYTER_CELL_MARKER.format(cell.index) + "\n")
        row, offset = row + 1, offset + marker
        cell.start_row, cell.offset = row, offset
        row, offset = row + cell.masked.count("\n"), offset + len(cell.masked)
    return notebook


def _uniform_indent(source: str) -> str:
    """The first line's indentation when every non-blank line starts with it (IPython removes it
    before running the cell), else ""."""
    match = _LEADING_INDENT.match(source)
    if match is None:
        return ""
    indent = match.group(0)
    lines = source.splitlines()
    return indent if all(line.startswith(indent) for line in lines if line.strip()) else ""


def _dedent(source: str, indent: str) -> str:
    if not indent:
        return source
    return "".join(line[len(indent):] if line.startswith(indent) else line for line in source.splitlines(keepends=True))


def _indent(source: str, indent: str) -> str:
    """The inverse of `_dedent` for a uniformly indented cell: every non-blank line gets `indent` back."""
    if not indent:
        return source
    return "".join(indent + line if line.strip() else line for line in source.splitlines(keepends=True))


def notebook_module(text: str, filename: str) -> Optional[str]:
    """The notebook's code cells as the one module they run as (what `lint_notebook` lints), or
    None when it is not a notebook memlint can read: the project pass summarises it from this."""
    try:
        return _read(text, filename).module
    except NotebookError:
        return None


def code_cells(text: str, filename: str) -> list[_Cell]:
    """The notebook's code cells that parse (IPython lines masked); NotebookError if unreadable."""
    return _read(text, filename).code


# ---------------------------------------------------------------------------- positions


def _cell_at(cells: list[_Cell], row: int) -> _Cell:
    found = cells[0]
    for cell in cells:
        if cell.start_row <= row:
            found = cell
    return found


def _local(cell: _Cell, location: Location) -> Location:
    row = max(1, location.row - cell.start_row + 1)
    return Location(row, location.column + _shift(cell, row))


def _shift(cell: _Cell, row: int) -> int:
    """How many columns the cell's own line `row` has before what the virtual module holds of it."""
    if not cell.indent:
        return 0
    lines = cell.source.splitlines()
    return len(cell.indent) if row <= len(lines) and lines[row - 1].startswith(cell.indent) else 0


def _offset_in_cell(cell: _Cell, offset: int) -> int:
    """A character offset in the virtual module -> the same place in the cell's own source."""
    local = offset - cell.offset
    if not cell.indent:
        return local
    row = cell.masked.count("\n", 0, max(0, local)) + 1
    return local + len(cell.indent) * sum(1 for r in range(1, row + 1) if _shift(cell, r))


def _to_cell(d: Diagnostic, cells: list[_Cell]) -> Diagnostic:
    cell = _cell_at(cells, d.location.row)
    fix = d.fix
    if fix is not None:
        edits = tuple(
            Edit(
                _offset_in_cell(cell, e.start), _offset_in_cell(cell, e.end), _indented_content(cell, e),
                _local(cell, e.location), _local(cell, e.end_location),
            )
            for e in fix.edits
        )
        fix = replace(fix, edits=edits)
    original = cell.source.splitlines()
    frame = tuple(
        (local, original[local - 1] if local <= len(original) else text)
        for row, text in d.frame
        if 1 <= (local := row - cell.start_row + 1) <= cell.masked.count("\n")
    )
    related = tuple(
        replace(r, location=_local(at, r.location), end_location=_local(at, r.end_location), cell=at.index)
        for r in d.related
        for at in (_cell_at(cells, r.location.row),)
    )
    return replace(
        d, location=_local(cell, d.location), end_location=_local(cell, d.end_location), fix=fix, cell=cell.index,
        frame=frame, related=related,
    )  # fmt: skip


def _indented_content(cell: _Cell, edit: Edit) -> str:
    """An edit's text for the cell's own source: lines it starts get the cell's indentation back."""
    if not cell.indent or "\n" not in edit.content:
        return edit.content
    first, _, rest = edit.content.partition("\n")
    return first + "\n" + _indent(rest, cell.indent)


def _broken_cell(cell: _Cell, filename: str) -> Diagnostic:
    error = syntax_error(cell.masked, filename)
    location = replace(error.location, column=error.location.column + _shift(cell, error.location.row))
    return replace(error, location=location, cell=cell.index)


# ---------------------------------------------------------------------------- linting and fixing


def lint_notebook(text: str, filename: str, settings: Settings, project: Optional["FileView"] = None) -> list[Diagnostic]:
    """The notebook's findings, as a project of its own; `project` (its view in the project pass of
    the run) adds only what calling the project's models does: which of them compute gradients
    (`gradient_view`)."""
    try:
        notebook = _read(text, filename)
    except NotebookError as error:
        return [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: notebook {error}", filename)]
    found = [_broken_cell(cell, filename) for cell in notebook.broken]
    if notebook.code:
        view = gradient_view(notebook.module, filename, project)
        found += [_to_cell(d, notebook.code) for d in lint_text(notebook.module, filename, settings, view)]
    return sorted(found, key=Diagnostic.sort_key)


def gradient_view(module: str, filename: str, project: Optional["FileView"]) -> Optional["FileView"]:
    """The view of a notebook linted as a project of its own, with the project's gradient facts:
    the classes whose forward computes gradients and the functions returning one
    (`model, _ = make_and_restore_model(...)` in robustness's notebooks, whose `model(x,
    make_adv=True)` runs a PGD attack).  None (lint_text's own view) where the project knows none."""
    if project is None or not (project.gradient_classes or project.gradient_switches or project.gradient_factories):
        return None
    from memlint.analysis.summaries import summarize
    from memlint.prescreen.source import Source
    from memlint.pipeline.project import single_file_view

    source = Source(module)
    if source.tree is None:
        return None
    try:
        summary = summarize(source)
    except (RecursionError, MemoryError):
        summary = None
    own = single_file_view(summary, filename)
    return replace(
        own, gradient_classes=project.gradient_classes, gradient_switches=project.gradient_switches,
        gradient_factories=project.gradient_factories,
    )


def _unmask(chunk: str, cell: _Cell) -> Optional[str]:
    """The fixed cell text with the IPython lines put back; None if a fix touched one of them."""
    seen: list[int] = []
    lines = chunk.splitlines(keepends=True)
    for number, line in enumerate(lines):
        body = line.rstrip("\r\n")
        match = _PLACEHOLDER.match(body)
        if match:
            placeholder = int(match.group(2))
            if placeholder not in cell.magics:
                return None
            indent, original = cell.magics[placeholder]
            if match.group(1) != indent:  # a fix re-indented the block: move the line along
                original = match.group(1) + original.lstrip(" \t")
            seen.append(placeholder)
            lines[number] = original + line[len(body):]
    if sorted(seen) != sorted(cell.magics):
        return None
    result = _indent("".join(lines), cell.indent)
    if not cell.source.endswith(("\n", "\r")) and result.endswith("\n"):
        result = result[:-1]
    return result


def _fixed_sources(notebook: _Notebook, fixed_module: str) -> dict[int, str]:
    """Cell index -> new source, for the cells the fixes changed."""
    markers = list(_BOUNDARY.finditer(fixed_module))
    if [int(m.group(1)) for m in markers] != [cell.index for cell in notebook.code]:
        return {}  # a fix moved code across cells: leave the notebook alone
    changed = {}
    # Code a fix put above the first boundary (an import at the top of the module) joins the first cell.
    preamble = fixed_module[: markers[0].start()] if markers else ""
    for number, (cell, marker) in enumerate(zip(notebook.code, markers)):
        end = markers[number + 1].start() if number + 1 < len(markers) else len(fixed_module)
        chunk = (preamble if number == 0 else "") + fixed_module[marker.end() + 1 : end]
        source = _unmask(chunk, cell)
        if source is not None and source != cell.source:
            changed[cell.index] = source
    return changed


def fix_notebook(text: str, filename: str, settings: Settings, *, unsafe: bool, project: Optional["FileView"] = None) -> FixOutcome:
    try:
        notebook = _read(text, filename)
    except NotebookError:
        return FixOutcome(text, remaining=lint_notebook(text, filename, settings, project))
    if not notebook.code:
        return FixOutcome(text, remaining=lint_notebook(text, filename, settings, project))
    outcome = fix_text(notebook.module, filename, settings, unsafe=unsafe, project=gradient_view(notebook.module, filename, project))
    changed = _fixed_sources(notebook, outcome.text) if outcome.fixed else {}
    new_text = write_sources(text, changed) if changed else text
    return FixOutcome(
        new_text,
        fixed=outcome.fixed if changed else type(outcome.fixed)(),
        remaining=lint_notebook(new_text, filename, settings, project),
        dropped=[_to_cell(d, notebook.code) for d in outcome.dropped],
    )


# ---------------------------------------------------------------------------- writing


def _skip(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _members(text: str, index: int, scan) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of the JSON object starting at `index`."""
    index = _skip(text, index + 1)
    if text[index] == "}":
        return
    while True:
        key, index = scan(text, index)
        index = _skip(text, _skip(text, index) + 1)  # past the colon
        _, end = scan(text, index)
        yield key, index, end
        index = _skip(text, end)
        if text[index] != ",":
            return
        index = _skip(text, index + 1)


def _elements(text: str, index: int, scan) -> Iterator[tuple[int, int]]:
    index = _skip(text, index + 1)
    if text[index] == "]":
        return
    while True:
        _, end = scan(text, index)
        yield index, end
        index = _skip(text, end)
        if text[index] != ",":
            return
        index = _skip(text, index + 1)


def source_spans(text: str) -> dict[int, tuple[int, int]]:
    """1-based cell index -> (start, end) of its `source` value in the notebook's JSON text."""
    scan = json.JSONDecoder().scan_once
    spans: dict[int, tuple[int, int]] = {}
    for key, start, _ in _members(text, _skip(text, 0), scan):
        if key == "cells":
            for index, (cell_start, _) in enumerate(_elements(text, start, scan), start=1):
                for cell_key, value_start, value_end in _members(text, cell_start, scan):
                    if cell_key == "source":
                        spans[index] = (value_start, value_end)
    return spans


def _encode(source: str, old_value: str, ensure_ascii: bool) -> str:
    """The new source in the style of the old value: a string, or a list of lines laid out alike."""
    if not old_value.startswith("["):
        return json.dumps(source, ensure_ascii=ensure_ascii)
    lines = [json.dumps(line, ensure_ascii=ensure_ascii) for line in source.splitlines(keepends=True)]
    layout = re.match(r"\[(\s*)", old_value)
    inner = layout.group(1) if layout and old_value.strip() != "[]" else ""
    closing = re.search(r"(\s*)\]$", old_value).group(1) if inner else ""
    if not lines:
        return "[]"
    return "[" + inner + ("," + inner).join(lines) + closing + "]"


def write_sources(text: str, sources: dict[int, str]) -> str:
    """The notebook text with these cells' sources replaced and every other byte kept."""
    spans = source_spans(text)
    ensure_ascii = text.isascii() and "\\u" in text
    pieces, cursor = [], 0
    for index in sorted(sources, key=lambda i: spans[i][0]):
        start, end = spans[index]
        pieces += [text[cursor:start], _encode(sources[index], text[start:end], ensure_ascii)]
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)
