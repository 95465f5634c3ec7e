"""Notebook semantics: what a name means in a marimo notebook's cell.

A marimo notebook is a Python file that runs as a dataflow graph of cells:

    import marimo
    app = marimo.App()

    @app.cell
    def _():
        import torch.nn as nn
        return (nn,)

    @app.cell
    def _(nn):
        class Network(nn.Module): ...
        return (Network,)

Each cell is a function decorated with `@app.cell`; what it returns (`return (nn,)`) are the names it
defines for the notebook, and its PARAMETERS are the names it reads from the cells that define them.
marimo lets one cell only define a name, so a cell parameter `nn` is the `nn` that cell imports: the
module `torch.nn`, not an unknown argument.  Read as plain Python, every cell's `nn`, `F` and `torch`
would be an unbound parameter, and nothing in the notebook would be torch.

The fact, with its evidence: the file imports `marimo` at module level, binds `app = marimo.App(...)`,
and decorates module-level functions with `@app.cell`; a cell parameter is bound to what exactly one
cell's top-level statements bind and return: an import (its qualified name), a class or a function.
Anything else a cell exports (`device = torch.device(...)`, an agent) stays unknown.  A plain function
whose parameter happens to be called `nn` is not a cell and stays unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional

import libcst as cst

from memlint.analysis.walk import code_descendants, dotted_name, nested_blocks

# A Jupyter notebook is linted as one module of its code cells, each after this comment
# (memlint/pipeline/notebooks.py writes it): the cell a top-level statement is in, for a rule whose
# unit of report is what a user runs and edits at once.
JUPYTER_CELL_MARKER = "# <memlint cell {}>"
JUPYTER_CELL = re.compile(r"^# <memlint cell (\d+)>$", re.MULTILINE)


@dataclass(frozen=True)
class CellExport:
    """A name a cell defines for the notebook: `kind` "import" (`qualified` is what it imports:
    "torch.nn"), "class" or "function"; `cell` is the defining cell (the evidence)."""

    name: str
    kind: str
    qualified: Optional[str]
    cell: cst.FunctionDef = field(repr=False, compare=False)


@dataclass(frozen=True)
class MarimoNotebook:
    app: str  # the name bound to `marimo.App(...)`
    cells: frozenset[int]  # ids of the cell functions
    exports: Mapping[str, CellExport]  # what each defined name is, for the cells that take it

    def is_cell(self, node: cst.FunctionDef) -> bool:
        return id(node) in self.cells

    def parameter(self, node: cst.FunctionDef, name: str) -> Optional[CellExport]:
        """What the parameter `name` of a cell is bound to, when the notebook says (else None)."""
        return self.exports.get(name) if id(node) in self.cells else None

    def top_level(self, module: cst.Module) -> Iterator[cst.BaseStatement]:
        """The statements at the top of each cell: a notebook's module level (its classes are the
        notebook's classes, as a script's top-level classes are the script's)."""
        for statement in module.body:
            if id(statement) in self.cells and isinstance(statement.body, cst.IndentedBlock):  # type: ignore[attr-defined]
                yield from statement.body.body  # type: ignore[attr-defined]

    def imports(self) -> dict[str, str]:
        """Local name -> what it imports, for the names the cells import and export: in a notebook
        these are the notebook's globals (one defining cell each), as a module's imports are."""
        return {name: e.qualified for name, e in self.exports.items() if e.kind == "import" and e.qualified}


def marimo_notebook(module: cst.Module, text: Optional[str] = None) -> Optional[MarimoNotebook]:
    """The notebook's cells and what they define, or None where the file is not a marimo notebook."""
    if text is not None and "marimo" not in text:
        return None
    marimo_names = _module_imports_of_marimo(module.body)
    if not marimo_names:
        return None
    app = _app_name(module.body, marimo_names)
    if app is None:
        return None
    cells = [s for s in module.body if type(s) is cst.FunctionDef and any(_is_cell_decorator(d.decorator, app) for d in s.decorators)]
    if not cells:
        return None
    exports: dict[str, CellExport] = {}
    defined_twice: set[str] = set()
    for cell in cells:
        for name, export in _cell_exports(cell).items():
            if name in exports:
                defined_twice.add(name)  # marimo refuses it; the file cannot say which one is meant
            exports[name] = export
    for name in defined_twice:
        del exports[name]
    return MarimoNotebook(app, frozenset(id(c) for c in cells), exports)


def _module_imports_of_marimo(statements) -> set[str]:
    """The local names the module binds to the `marimo` package (`import marimo`, `import marimo as mo`)."""
    names: set[str] = set()
    for statement in statements:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is cst.Import:
                for alias in small.names:
                    if dotted_name(alias.name) == "marimo":
                        local = alias.asname.name if alias.asname is not None else alias.name
                        if type(local) is cst.Name:
                            names.add(local.value)
    return names


def _app_name(statements, marimo_names: set[str]) -> Optional[str]:
    """`app = marimo.App(...)` at module level -> "app"."""
    for statement in statements:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
                continue
            value = small.value
            if type(value) is cst.Call and dotted_name(value.func) in {f"{m}.App" for m in marimo_names}:
                return small.targets[0].target.value
    return None


def _is_cell_decorator(expr: cst.BaseExpression, app: str) -> bool:
    """`@app.cell` or `@app.cell(hide_code=True)`."""
    if type(expr) is cst.Call:
        expr = expr.func
    return dotted_name(expr) == f"{app}.cell"


def _cell_exports(cell: cst.FunctionDef) -> dict[str, CellExport]:
    """The imports, classes and functions a cell binds at its top level (under `if` / `try` / `with`
    too) and returns."""
    if not isinstance(cell.body, cst.IndentedBlock):
        return {}
    returned = _returned_names(cell.body.body)
    if not returned:
        return {}
    bound: dict[str, CellExport] = {}
    rebound: set[str] = set()

    def note(name: str, export: CellExport) -> None:
        if name in bound and bound[name] != export:
            rebound.add(name)
        bound[name] = export

    def scan(statements) -> None:
        for statement in statements:
            kind = type(statement)
            if kind is cst.ClassDef:
                note(statement.name.value, CellExport(statement.name.value, "class", None, cell))
            elif kind is cst.FunctionDef:
                note(statement.name.value, CellExport(statement.name.value, "function", None, cell))
            elif kind is cst.SimpleStatementLine:
                for small in statement.body:
                    for local, qualified in _imported(small):
                        note(local, CellExport(local, "import", qualified, cell))
            elif kind in (cst.If, cst.Try, cst.With, cst.TryStar):
                for block in nested_blocks(statement):
                    scan(block)

    scan(cell.body.body)
    return {name: export for name, export in bound.items() if name in returned and name not in rebound}


def _imported(small: cst.CSTNode) -> list[tuple[str, Optional[str]]]:
    """(local name, what it imports) for an import statement; relative imports name nothing known."""
    found: list[tuple[str, Optional[str]]] = []
    if type(small) is cst.Import:
        for alias in small.names:
            written = dotted_name(alias.name) or ""
            if alias.asname is not None and type(alias.asname.name) is cst.Name:
                found.append((alias.asname.name.value, written))
            else:
                top = written.partition(".")[0]
                found.append((top, top))
    elif type(small) is cst.ImportFrom and not isinstance(small.names, cst.ImportStar):
        base = dotted_name(small.module) if small.module is not None else None
        for alias in small.names:
            name = dotted_name(alias.name) or ""
            local = alias.asname.name.value if alias.asname is not None and type(alias.asname.name) is cst.Name else name
            found.append((local, f"{base}.{name}" if base and not small.relative else None))
    return found


def _returned_names(statements) -> frozenset[str]:
    """The names of a cell's final `return (a, b)` / `return a, b` / `return a`."""
    last = statements[-1] if statements else None
    if type(last) is not cst.SimpleStatementLine or type(last.body[-1]) is not cst.Return:
        return frozenset()
    value = last.body[-1].value
    if value is None:
        return frozenset()
    if type(value) is cst.Name:
        return frozenset({value.value})
    if type(value) in (cst.Tuple, cst.List):
        return frozenset(e.value.value for e in value.elements if type(e.value) is cst.Name)
    return frozenset()


def jupyter_cells(module: cst.Module) -> dict[int, int]:
    """id(node) -> the Jupyter cell (1-based among all cells, as the pipeline numbers them) of every
    node in the module's top-level statements, functions' bodies left out; empty for a file that is
    not a notebook joined by the pipeline (no cell markers)."""
    found: dict[int, int] = {}
    cell: Optional[int] = None
    for statement in module.body:
        for line in statement.leading_lines:
            marker = JUPYTER_CELL.match(line.comment.value) if line.comment is not None else None
            if marker is not None:
                cell = int(marker.group(1))
        if cell is None:
            continue
        found[id(statement)] = cell
        for node in code_descendants(statement, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            found[id(node)] = cell
    return found
