"""memlint's import graph: no cycles, and the layers depend one way (issue 14).

The graph is read from the sources (every `import` and `from ... import`, at module level or inside a
function; only `if TYPE_CHECKING:` blocks are left out, since they never run), so a lazy import that
closes a cycle counts as much as a top-level one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "memlint"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_names(path: Path, name: str) -> set[str]:
    """Every dotted name an import in `path` can load (`from a.b import c` gives a.b and a.b.c)."""
    found: set[str] = set()
    is_package = path.name == "__init__.py"

    class Imports(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if "TYPE_CHECKING" in ast.unparse(node.test):
                for child in node.orelse:
                    self.visit(child)
                return
            self.generic_visit(node)

        def visit_Import(self, node: ast.Import) -> None:
            found.update(alias.name for alias in node.names)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)

    Imports().visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {name: {m for m in imported_names(path, name) if m in modules and m != name} for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_is_read_from_the_sources():
    graph = import_graph()
    assert "memlint.pipeline.checker" in graph["memlint.pipeline.engine"]  # a lazy import inside lint_text
    assert "memlint.commands.check" in graph["memlint.cli"]


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_memlint_has_no_import_cycle():
    assert cycles(import_graph()) == []


# The core (pipeline, analysis, screens, rules' shared API) never reaches out to the layers built on it.
CORE = ("memlint.pipeline", "memlint.analysis", "memlint.prescreen", "memlint.rule", "memlint.diagnostics", "memlint.config")
OUTER = ("memlint.cli", "memlint.commands", "memlint.integrations", "memlint.confirm", "memlint.estimate")


@pytest.mark.parametrize("layer", CORE)
def test_the_core_does_not_import_the_outer_layers(layer):
    graph = import_graph()
    wrong = sorted(
        f"{module} imports {imported}"
        for module, imports in graph.items() if module == layer or module.startswith(layer + ".")
        for imported in imports if imported.startswith(OUTER)
    )  # fmt: skip
    assert not wrong
