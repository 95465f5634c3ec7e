"""ML001's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

Beyond the trigger words (`for` / `while`): an accumulation of a value that could carry autograd
history, into a name or `self.<attr>` (or a subscript of one) that some assignment could have
started as a number, a container or `None`, in a function not named like a forward pass:

- `+=` / `-=`, `x = <sum holding x>` (`x + v`, `0.98 * x + 0.02 * v`), `x = torch.cat([x, v])`
  (also as a branch of `a if c else b`), `.append(v)` / `.extend(v)` (the elements of a display):
  inside a loop of the same function that does not run layers, or, with no loop, into `self.<attr>`
  or a name the function does not bind itself (what a per-batch function such as `training_step`
  keeps between calls);
- `.update(v)` / `.add(v)` on a name or `self.<attr>` made by a capitalised class (a running meter);
- a comprehension over something named like a data loader whose element could carry history.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping, Optional

from memlint.analysis.naming import BATCH_SOURCE, is_forward_name
from memlint.prescreen.history import History
from memlint.prescreen.source import FUNCTIONS, LOOPS, Source, argument_count, is_self_attribute, words_in

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    history = source.memo("history", lambda: History(source))
    for node in source.nodes(*_COMPREHENSIONS):
        if _comprehension_may_collect(node, history) and not _in_forward(source, node):
            return True
    started = _possible_statistics(source)
    meters = _possible_meters(source)
    for node in source.nodes(ast.AugAssign, ast.Assign, ast.Call):
        found = _accumulation(node) or _meter_update(node, meters)
        if found is None:
            continue
        accumulator, values = found
        key = _statistic_key(accumulator)
        if (key not in started and key not in meters) or not any(history.possible(v) for v in values):
            continue
        if _in_a_loop_that_steps(source, node, accumulator):
            return True
    return False


# Expressions it never values as a number or a container: what an accumulator cannot start as.
_NOT_A_STATISTIC = (ast.Compare, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                    ast.GeneratorExp, ast.Subscript, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred)  # fmt: skip


def _could_start_statistic(value) -> bool:
    if value is None or isinstance(value, _NOT_A_STATISTIC):
        return False
    if isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return False
    return not (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not))


def _possible_statistics(source: Source) -> set[str]:
    """Names, and `self.<attr>` as ".attr", that some binding could start as a number, a container
    or `None` (alone, or as an element of a tuple assignment: `running_loss, seen = 0.0, 0`)."""
    found: set[str] = set()
    for node in source.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:  # type: ignore[attr-defined]
            if isinstance(target, (ast.Tuple, ast.List)):
                values = value.elts if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts) else None
                for index, element in enumerate(target.elts):
                    if values is None or _could_start_statistic(values[index]):
                        _note(element, found)
            elif _could_start_statistic(value):
                _note(target, found)
    for item in source.nodes(ast.withitem):
        if isinstance(item.optional_vars, ast.Name):  # type: ignore[attr-defined]
            found.add(item.optional_vars.id)  # type: ignore[attr-defined]
    return found


def _possible_meters(source: Source) -> set[str]:
    """Names and ".attr"s assigned an instance of a capitalised class (`losses = AverageMeter()`)."""
    found: set[str] = set()
    for node in source.nodes(ast.Assign):
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, ast.Call) and len(node.targets) == 1:  # type: ignore[attr-defined]
            func = value.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name[:1].isupper():
                _note(node.targets[0], found)  # type: ignore[attr-defined]
    return found


def _meter_update(node: ast.AST, meters: set[str]) -> Optional[tuple[ast.AST, list]]:
    """`losses.update(loss, n)`, `logger.update(loss=loss)` on a name made by a class: (receiver, values)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "add")):
        return None
    if not (node.args or node.keywords) or _statistic_key(node.func.value) not in meters:
        return None
    return node.func.value, [*node.args[:1], *(k.value for k in node.keywords)]


def _note(target: ast.AST, found: set[str]) -> None:
    if isinstance(target, ast.Starred):
        target = target.value
    if isinstance(target, ast.Name):
        found.add(target.id)
    elif is_self_attribute(target):
        found.add("." + target.attr)  # type: ignore[attr-defined]


def _accumulation(node: ast.AST) -> Optional[tuple[ast.AST, list]]:
    """(accumulator, the values accumulated) of `+=`, `x = <sum holding x>`, `x = torch.cat([x, v])`,
    `.append(v)` / `.extend(v)`; None for anything else."""
    if isinstance(node, ast.AugAssign):
        return (node.target, [node.value]) if isinstance(node.op, (ast.Add, ast.Sub)) else None
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
        key = ast.dump(target, annotate_fields=False).replace("Store()", "Load()")
        value = node.value
        if isinstance(value, ast.BinOp):
            parts = [n for n in ast.walk(value) if ast.dump(n, annotate_fields=False) == key]
            return (target, [value]) if parts else None
        for branch in ([value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]):
            if isinstance(branch, ast.Call) and branch.args and isinstance(branch.args[0], (ast.List, ast.Tuple)):
                elements = branch.args[0].elts
                if any(ast.dump(e, annotate_fields=False) == key for e in elements):
                    return target, list(elements)
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        if argument_count(node) != 1:
            return None
        value = node.args[0] if node.args else node.keywords[0].value
        if isinstance(value, ast.Starred):
            value = value.value
        return node.func.value, _elements(value)
    return None


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


def _in_a_loop_that_steps(source: Source, node: ast.AST, accumulator: ast.AST) -> bool:
    """Is the innermost loop around `node` in its own function (the analysis keeps one loop stack
    per function and class) not a loop over layers, in a function not named like a forward?  With
    no loop in the function, could the accumulator outlive the call (`self.<attr>`, or a name the
    function does not bind itself)?"""
    loop = None
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, FUNCTIONS):
            if is_forward_name(ancestor.name):
                return False
            if loop is None:
                return _outlives(accumulator, ancestor)
            return not _runs_layers(loop)
        if isinstance(ancestor, ast.ClassDef):
            break
        if loop is None and isinstance(ancestor, LOOPS):
            loop = ancestor
    return loop is not None and not _runs_layers(loop)  # at module or class level


def _outlives(accumulator: ast.AST, function: ast.AST) -> bool:
    while isinstance(accumulator, ast.Subscript):
        accumulator = accumulator.value
    if is_self_attribute(accumulator):
        return True
    if not isinstance(accumulator, ast.Name):
        return False
    arguments = function.args  # type: ignore[attr-defined]
    return accumulator.id not in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}


def _statistic_key(accumulator: ast.AST):
    while isinstance(accumulator, ast.Subscript):
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
