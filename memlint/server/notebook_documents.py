"""Notebook documents for `memlint server` (LSP 3.17 `notebookDocument/*`): the pure part.

An editor that synchronises notebooks (VS Code's Jupyter does) sends the notebook's structure (its
cells, their kind, in order) and one text document per cell. memlint lints the cells as ONE program,
as `memlint check notebook.ipynb` does: the cells are written out as an nbformat 4 notebook (code cells
for the notebook's Python code cells, markdown cells for its markup cells, a raw cell for a code cell in
another language, so that cell numbers stay the notebook's) and linted through `memlint.api`; each
finding comes back with `cell`, the 1-based index among ALL the cells (memlint.pipeline.notebooks), and
rows and columns within that cell. Here they are split per cell text document.

A finding's fix is kept only when each of its edits lies inside the finding's own cell (the pipeline
maps the edits into the cell of the finding; an edit that belongs to another cell, such as an import
added at the top of the notebook, cannot be offered as an edit of this cell): else the finding is
reported without a fix, and `# noqa` remains the way to act on it.

No pygls here: memlint/server/app.py wires these functions to the server.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlparse

from lsprotocol import types

from memlint.diagnostics import Diagnostic, Edit, Fix
from memlint.pipeline.text import Positions

PYTHON = "python"

# What the server advertises: notebooks of any type whose cells are Python.
SYNC_OPTIONS = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="*", cells=[types.NotebookCellLanguage(language=PYTHON)]
        )
    ],
    save=True,
)


def notebook_filename(uri: str) -> tuple[str, Optional[str]]:
    """(the filename to lint the notebook as, ending with .ipynb; the local path or None)."""
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        path = unquote(parsed.path)
        local = str(Path(path)) if path else None
        name = local or "untitled.ipynb"
    else:
        local = None
        name = unquote(parsed.path).rsplit("/", 1)[-1] or "untitled.ipynb"
    if not name.endswith(".ipynb"):
        name += ".ipynb"
    return name, local


def is_code(cell: types.NotebookCell, language: Optional[str]) -> bool:
    """A cell memlint lints: a code cell whose text document is Python (or says no language)."""
    return cell.kind == types.NotebookCellKind.Code and (not language or language == PYTHON)


def notebook_json(cells: list[tuple[types.NotebookCell, str, Optional[str]]]) -> str:
    """An nbformat 4 notebook of these cells, in order: (cell, its text, its language id)."""
    out = []
    for cell, text, language in cells:
        source = text.splitlines(keepends=True)
        if is_code(cell, language):
            out.append({"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [], "source": source})
        elif cell.kind == types.NotebookCellKind.Markup:
            out.append({"cell_type": "markdown", "metadata": {}, "source": source})
        else:  # a code cell in another language: kept, so the cells keep their numbers
            out.append({"cell_type": "raw", "metadata": {}, "source": source})
    notebook = {
        "cells": out,
        "metadata": {"language_info": {"name": PYTHON}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1) + "\n"


def edit_in_cell(edit: Edit, text: str) -> bool:
    """Does this edit (already in cell coordinates) lie inside the cell's text, its offsets where its
    rows and columns say?"""
    if not 0 <= edit.start <= edit.end <= len(text):
        return False
    lines = Positions(text)
    return lines.location(edit.start) == edit.location and lines.location(edit.end) == edit.end_location


def cell_fix(fix: Optional[Fix], text: str) -> Optional[Fix]:
    """The fix when every edit lies in the cell's text, else None."""
    if fix is None or not fix.edits:
        return None
    return fix if all(edit_in_cell(edit, text) for edit in fix.edits) else None


def split_by_cell(found: list[Diagnostic], cells: list[tuple[str, str]], fallback: Optional[int] = None) -> dict[str, list[Diagnostic]]:
    """Cell text document URI -> its findings (every cell gets a list, empty when it has none).

    `cells` are (URI, text) in notebook order; a finding's `cell` is the 1-based index among them.
    A finding with no cell (the notebook as a whole could not be read) goes to the cell numbered
    `fallback` (1-based), when given. Fixes that do not stay in their cell are dropped.
    """
    result: dict[str, list[Diagnostic]] = {uri: [] for uri, _ in cells}
    for finding in found:
        index = finding.cell if finding.cell is not None else fallback
        if index is None or not 1 <= index <= len(cells):
            continue
        uri, text = cells[index - 1]
        if finding.fix is not None:
            finding = replace(finding, fix=cell_fix(finding.fix, text))
        result[uri].append(finding)
    return result
