"""ML001's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

What the rule asks of the semantic model, read as cheap shapes: an accumulation (`+=` / `-=`,
`x = <sum holding x>`, `x = torch.cat([x, v])`, also as a branch of `a if c else b`, `.append(v)` /
`.extend(v)` of a value or of the elements of a display, `.update(v)` / `.add(v)` of a possible
meter, a comprehension over something named like a data loader) of a value that could carry
autograd history (memlint/prescreen/history.py: the model's history fact, loosened), outside a
function named like a forward pass.  How the accumulator started, which loop it is in and what
happens to it later are the rule's questions, not the screen's (issue 27: no screen re-implements
its rule); the trigger words ask for a loop or a per-batch function's lasting state.
"""

from __future__ import annotations

import ast
from typing import Any, Iterable, Mapping, Optional

from memlint.analysis.naming import BATCH_SOURCE, is_forward_name
from memlint.prescreen.history import History
from memlint.prescreen.source import FUNCTIONS, Source, argument_count, words_in

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    history = source.memo("history", lambda: History(source))
    for node in source.nodes(*_COMPREHENSIONS):
        if _comprehension_may_collect(node, history) and not _in_forward(source, node):
            return True
    for node in source.nodes(ast.AugAssign, ast.Assign, ast.Call):
        found = _accumulation(node) or _meter_update(node)
        if found is not None and any(history.possible(v) for v in found) and not _in_forward(source, node):
            return True
    return False


def _meter_update(node: ast.AST) -> Optional[list]:
    """The values of `losses.update(loss, n)`, `logger.update(loss=loss)` (the rule asks the model
    whether the receiver is a running meter)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "add")):
        return None
    if not (node.args or node.keywords):
        return None
    return [*node.args[:1], *(k.value for k in node.keywords)]


def _accumulation(node: ast.AST) -> Optional[list]:
    """The values accumulated by `+=`, `x = <sum holding x>`, `x = torch.cat([x, v])`, `.append(v)` /
    `.extend(v)`; None for anything else."""
    if isinstance(node, ast.AugAssign):
        return [node.value] if isinstance(node.op, (ast.Add, ast.Sub)) else None
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
        value = node.value
        if isinstance(value, ast.BinOp):
            return [value] if _mentions_target(ast.walk(value), target) else None
        for branch in ([value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]):
            if isinstance(branch, ast.Call) and branch.args and isinstance(branch.args[0], (ast.List, ast.Tuple)):
                elements = branch.args[0].elts
                if _mentions_target(elements, target):
                    return list(elements)
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        if argument_count(node) != 1:
            return None
        value = node.args[0] if node.args else node.keywords[0].value
        if isinstance(value, ast.Starred):
            value = value.value
        return _elements(value)
    return None


def _mentions_target(nodes: Iterable[ast.AST], target: ast.AST) -> bool:
    """Is one of `nodes` the assignment's target read back (`x` of `x = x + v`, compared as dumps)?
    Only nodes of the target's own type are dumped: a dump starts with the type's name, so no other
    could equal it (dumping every node of every assigned value took this function from 0.15 s to
    0.28 s CPU over timm's nodes)."""
    kind = type(target)
    same = [n for n in nodes if type(n) is kind]
    if not same:
        return False
    key = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
    return any(ast.dump(n, annotate_fields=False) == key for n in same)


def _elements(value: ast.AST) -> list:
    """The values inside a display (two levels deep), or the value itself."""
    if not isinstance(value, _DISPLAYS):
        return [value]
    inner = value.values if isinstance(value, ast.Dict) else value.elts  # type: ignore[attr-defined]
    found: list = []
    for element in inner:
        if isinstance(element, ast.Starred):
            element = element.value
        found.extend(_elements(element) if isinstance(element, _DISPLAYS) else [element])
    return found


def _comprehension_may_collect(node: ast.AST, history: History) -> bool:
    if not any(BATCH_SOURCE.search(word) for comp in node.generators for word in words_in(comp.iter)):  # type: ignore[attr-defined]
        return False
    element = node.value if isinstance(node, ast.DictComp) else node.elt  # type: ignore[attr-defined]
    return any(history.possible(v) for v in _elements(element))


def _in_forward(source: Source, node: ast.AST) -> bool:
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, FUNCTIONS):
            return is_forward_name(ancestor.name)
    return False
