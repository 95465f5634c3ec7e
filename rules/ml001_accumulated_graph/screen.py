"""ML001's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

Beyond the trigger words (`for` / `while`): an accumulation (`+=`, `-=`, `x = x + v`,
`.append(v)`, `.extend(v)`) inside a loop of the same function, that loop not running layers, the
function not named like a forward pass, into a name or `self.<attr>` that some assignment could
have started as a number or a container, of a value that could carry autograd history.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.naming import is_forward_name
from memlint.prescreen.history import History
from memlint.prescreen.source import FUNCTIONS, LOOPS, Source, argument_count, is_self_attribute


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    started = _possible_statistics(source)
    if not started:
        return False
    history = source.memo("history", lambda: History(source))
    for node in source.nodes(ast.AugAssign, ast.Assign, ast.Call):
        if _accumulates(node, started, history) and _in_a_loop_that_steps(source, node):
            return True
    return False


# Expressions it never values as a number or a container: what an accumulator cannot start as.
_NOT_A_STATISTIC = (ast.Tuple, ast.Compare, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                    ast.GeneratorExp, ast.Subscript, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred)  # fmt: skip


def _could_start_statistic(value) -> bool:
    if value is None or isinstance(value, _NOT_A_STATISTIC):
        return False
    if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, bool)):
        return False
    return not (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not))


def _possible_statistics(source: Source) -> set[str]:
    """Names, and `self.<attr>` as ".attr", that some binding could start as a number or container."""
    found: set[str] = set()
    for node in source.nodes(ast.Assign, ast.AnnAssign):
        if not _could_start_statistic(node.value):  # type: ignore[attr-defined]
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:  # type: ignore[attr-defined]
            if isinstance(target, ast.Name):
                found.add(target.id)
            elif is_self_attribute(target):
                found.add("." + target.attr)  # type: ignore[attr-defined]
    for item in source.nodes(ast.withitem):
        if isinstance(item.optional_vars, ast.Name):  # type: ignore[attr-defined]
            found.add(item.optional_vars.id)  # type: ignore[attr-defined]
    return found


def _in_a_loop_that_steps(source: Source, node: ast.AST) -> bool:
    """Is the innermost loop around `node` in its own function (the analysis keeps one loop stack
    per function and class) not a loop over layers, in a function not named like a forward?"""
    loop = None
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, FUNCTIONS):
            return loop is not None and not is_forward_name(ancestor.name) and not _runs_layers(loop)
        if isinstance(ancestor, ast.ClassDef):
            break
        if loop is None and isinstance(ancestor, LOOPS):
            loop = ancestor
    return loop is not None and not _runs_layers(loop)  # at module or class level


def _accumulates(node: ast.AST, started: set[str], history: History) -> bool:
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        accumulator, value = node.target, node.value
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        value = node.value
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
            return False
        name = node.targets[0].id
        sides = [(l, r) for l, r in ((value.left, value.right), (value.right, value.left)) if isinstance(l, ast.Name) and l.id == name]
        if not sides:
            return False
        accumulator, value = sides[0]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        if argument_count(node) != 1:
            return False
        accumulator = node.func.value
        value = node.args[0] if node.args else node.keywords[0].value
        if isinstance(value, ast.Starred):
            value = value.value
    else:
        return False
    return _statistic_key(accumulator) in started and history.possible(value)


def _statistic_key(accumulator: ast.AST):
    if isinstance(accumulator, ast.Subscript):
        accumulator = accumulator.value
    if isinstance(accumulator, ast.Name):
        return accumulator.id
    if is_self_attribute(accumulator):
        return "." + accumulator.attr  # type: ignore[attr-defined]
    return None


def _runs_layers(loop: ast.AST) -> bool:
    """`analysis.iteration.iterates_layers` on CPython's AST: the loop's body calls the loop
    variable (`block(x)`, `self.blocks[i](x)`, an index tuple by its first element).  The screen
    answers "no" where it holds, so it must not hold where the analysis's test does not."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for statement in loop.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Subscript):
                index = func.slice
                func = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if isinstance(func, ast.Name) and func.id in targets:
                return True
    return False
