"""ML001's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

What the rule asks of the semantic model, read as cheap shapes: an accumulation (`+=` / `-=`,
`x = <sum holding x>`, `x = torch.cat([x, v])`, also as a branch of `a if c else b`, `.append(v)` /
`.extend(v)` of a value or of the elements of a display, `.update(v)` / `.add(v)` of a possible
meter, a comprehension over something named like a data loader) of a value that could carry
autograd history (memlint/prescreen/history.py: the model's history fact, loosened), outside a
function named like a forward pass (unless it steps an optimizer itself: a training step).  How the accumulator started, which loop it is in and what
happens to it later are the rule's questions, not the screen's (issue 27: no screen re-implements
its rule); the trigger words ask for a loop or a per-batch function's lasting state.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping, Optional

from memlint.analysis.naming import BATCH_SOURCE, OPTIMIZER_NAME, is_forward_name
from memlint.analysis.tables import COMBINING_METHODS
from memlint.prescreen.history import History
from memlint.prescreen.source import FUNCTIONS, LOOPS, Source, argument_count, child_nodes, subtree, words_in

_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    for node in source.nodes(*_COMPREHENSIONS):
        if _comprehension_may_collect(node, source) and not _in_forward(source, node):
            return True
    for node in source.nodes(ast.AugAssign, ast.Assign, ast.Call):
        found = _accumulation(node) or _meter_update(node) or _slot_per_iteration(node, source)
        # The cheapest question first: a model's `forward` (`x = x + self.drop_path(...)`, most of a
        # model zoo's accumulation shapes) is left before its names and their history are read.
        if found is not None and not _in_forward(source, node) and _may_repeat(node, source) and any(_kept_possible(v, _history(source)) for v in found):
            return True
    return False


def _history(source: Source) -> History:
    """The file's history fact, built on the first question (many files ask none: no accumulation
    shape outside a forward) and shared with the other screens."""
    return source.memo("history", lambda: History(source))


def _may_repeat(node: ast.AST, source: Source) -> bool:
    """Can the accumulation keep values across runs of itself?  The rule asks for a loop around it
    in its function, or a function run once per batch whose accumulator outlives the call: `self.<x>`
    or a name the function does not bind itself (`accumulation.outlives_the_call`).  Outside both
    (`x = x + pos_embed` in a model's method, any statement of a script outside its loops) it
    accumulates nothing; loosened where the shape is unusual (a lambda, a class body)."""
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, (*LOOPS, *_COMPREHENSIONS, ast.Lambda, ast.ClassDef)):
            return True
        if isinstance(ancestor, FUNCTIONS):
            root = _root(_accumulator(node))
            return not isinstance(root, ast.Name) or root.id == "self" or root.id not in _bound_here(ancestor, source)
    return False  # module level, outside every loop


def _accumulator(node: ast.AST) -> Optional[ast.AST]:
    if isinstance(node, ast.AugAssign):
        return node.target
    if isinstance(node, ast.Assign):
        return node.targets[0]
    return node.func.value if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None


def _root(expr: Optional[ast.AST]) -> Optional[ast.AST]:
    """`stats` of `stats["loss"]`, `stats.setdefault("loss", [])`, `stats.loss`; `self` of `self.x`."""
    while True:
        if isinstance(expr, ast.Call):
            expr = expr.func
        elif isinstance(expr, (ast.Subscript, ast.Attribute)):
            expr = expr.value
        else:
            return expr


def _bound_here(function: ast.AST, source: Source) -> frozenset:
    """The names a function binds as its own (parameters, `=`, `for`, `with ... as`, imports,
    `except ... as`, `:=`), less those it declares global or nonlocal.  A name bound only by `+=`
    is left out: the rule's context may take it for the module's."""
    return source.memo(("bound-here", id(function)), lambda: _local_names(function))


def _local_names(function: ast.AST) -> frozenset:
    arguments = function.args  # type: ignore[attr-defined]
    names = {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg) if a}
    declared: set = set()
    stack = list(function.body)  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, (*FUNCTIONS, ast.ClassDef)):
            names.add(node.name)  # type: ignore[attr-defined]
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        if isinstance(node, ast.AugAssign):
            stack.append(node.value)  # its target is left out (above)
            continue
        stack.extend(child_nodes(node))  # (no context or operator node is asked about)
    return frozenset(names - declared)


def _kept_possible(value: ast.AST, history: History) -> bool:
    """May the kept value carry history?  A call of a plain name kept in a display grown by `+=`
    (`layers += [block_fn(chs)]`: building layers) counts only where the name is one the analysis
    takes for a model or a loss (by name, by evidence, a functional loss, a project callee that
    returns history); a method call keeps its receiver's answer."""
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and getattr(value, "_memlint_in_display", False):
        return history.names_model_or_loss(value.func.id) and history.possible(value)
    return history.possible(value)


def _meter_update(node: ast.AST) -> Optional[list]:
    """The values of `losses.update(loss, n)`, `logger.update(loss=loss)` (the rule asks the model
    whether the receiver is a running meter)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("update", "add")):
        return None
    if not (node.args or node.keywords):
        return None
    return [*node.args[:1], *(k.value for k in node.keywords)]


def _accumulation(node: ast.AST) -> Optional[list]:
    """The values accumulated by `+=` (a display's elements: `losses += [loss]`), `x = <sum holding
    x>` (`stats["loss"] = stats.get("loss", 0) + loss` too), `x = torch.cat([x, v])`, `x =
    torch.add(x, v)` / `x.add(v)` / `torch.max(x, v)` (COMBINING_METHODS), either as a branch of `a if c else b`, `.append(v)` / `.extend(v)`,
    `x.add_(v)` / `x.sub_(v)`; None for anything else (`x[i] = v`: `_slot_per_iteration`)."""
    if isinstance(node, ast.AugAssign):
        if not isinstance(node.op, (ast.Add, ast.Sub)):
            return None
        return _display_elements(node.value) if isinstance(node.value, _DISPLAYS) else [node.value]
    if isinstance(node, ast.Assign):
        if len(node.targets) != 1:
            return None
        target = node.targets[0]
        same = _same_as(target)
        value = node.value
        for branch in ([value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]):
            if isinstance(branch, ast.BinOp):
                if any(same(n) or _reads_entry(n, target) for n in subtree(branch)):
                    return [e for term in _terms(branch) for e in (_display_elements(term) if isinstance(term, _DISPLAYS) else [term])]
            elif isinstance(branch, ast.Call) and branch.args:
                arguments = [a.value if isinstance(a, ast.Starred) else a for a in branch.args]
                func = branch.func
                if isinstance(arguments[0], (ast.List, ast.Tuple)):
                    parts = list(arguments[0].elts)  # `torch.cat([x, v])`
                elif isinstance(func, ast.Attribute) and func.attr in COMBINING_METHODS and not branch.keywords:
                    # `torch.add(x, v)`, `x.add(v)`, `torch.max(x, v)` (accumulation.added_parts)
                    parts = [func.value, *arguments]
                elif isinstance(func, ast.Name) and func.id in _IMPORTED_COMBINATIONS and not branch.keywords:
                    parts = arguments  # `from torch import maximum`: `maximum(x, v)`
                else:
                    continue
                if any(same(n) for n in parts):
                    return parts
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("add_", "sub_"):
        # `total.add_(loss)` on a name or `self.<attr>` (an optimizer's `exp_avg.mul_(b).add_(g, alpha=a)` is no statistic)
        plain = isinstance(node.func.value, ast.Name) or (isinstance(node.func.value, ast.Attribute) and isinstance(node.func.value.value, ast.Name))
        return node.args[:1] if plain and len(node.args) == 1 and not node.keywords else None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        if argument_count(node) != 1:
            return None
        value = node.args[0] if node.args else node.keywords[0].value
        if isinstance(value, ast.Starred):
            value = value.value
        return _elements(value)
    return None


# Combinations called by a bare name (imported from torch); not `max` / `min`, the builtins a
# `best = max(best, acc)` calls on every line of many scripts.
_IMPORTED_COMBINATIONS = COMBINING_METHODS - {"max", "min"}


def _same_as(target: ast.AST):
    """A test of whether a node reads what `target` stores: dumps alike, `Store()` read as
    `Load()`.  Only a node of the target's own type can dump as it does (a dump starts with the
    type's name), and a plain name dumps alike exactly when it is the same name, read."""
    kind = type(target)
    if kind is ast.Name:
        name = target.id  # type: ignore[attr-defined]
        return lambda n: type(n) is ast.Name and n.id == name and type(n.ctx) is ast.Load
    keys: list[str] = []  # the target's dump, made on the first node of its type

    def same(n: ast.AST) -> bool:
        if type(n) is not kind:
            return False
        if not keys:
            keys.append(ast.dump(target, annotate_fields=False).replace("Store()", "Load()"))
        return ast.dump(n, annotate_fields=False) == keys[0]

    return same


def _reads_entry(node: ast.AST, target: ast.AST) -> bool:
    """`stats.get(...)` for the target `stats[...]` (loosened: any key)."""
    return (
        isinstance(target, ast.Subscript)
        and isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and ast.dump(node.func.value, annotate_fields=False) == ast.dump(target.value, annotate_fields=False).replace("Store()", "Load()")
    )


def _slot_per_iteration(node: ast.AST, source: Source) -> Optional[list]:
    """The value of `losses[i] = v` where `i` is bound by an enclosing `for` loop's target
    (accumulation.stored_at_loop_index)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
        return None
    target = node.targets[0]
    if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(target.slice, ast.Name)):
        return None
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, FUNCTIONS):
            return None
        if isinstance(ancestor, (ast.For, ast.AsyncFor)) and _position_name(ancestor) == target.slice.id:
            return _elements(node.value)
    return None


def _position_name(loop: ast.AST) -> Optional[str]:
    """The name a loop binds to its iteration's position: `i` of `for i in range(n)` or of
    `for i, batch in enumerate(loader)` (accumulation.loop_position)."""
    iterable, target = loop.iter, loop.target  # type: ignore[attr-defined]
    callee = iterable.func.id if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) else None
    if callee in ("range", "trange") and isinstance(target, ast.Name):
        return target.id
    if callee == "enumerate" and isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[0], ast.Name):
        return target.elts[0].id
    return None


def _terms(value: ast.AST) -> list:
    """The terms of a sum (`a + b - c` -> [a, b, c]); anything else is one term."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)):
        return [*_terms(value.left), *_terms(value.right)]
    return [value]


def _display_elements(value: ast.AST) -> list:
    """The elements of a display grown into a list by `+=` / `+`, marked for `_kept_possible`."""
    found = _elements(value)
    for element in found:
        element._memlint_in_display = True  # type: ignore[attr-defined]
    return found


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


def _comprehension_may_collect(node: ast.AST, source: Source) -> bool:
    if not any(BATCH_SOURCE.search(word) for comp in node.generators for word in words_in(comp.iter)):  # type: ignore[attr-defined]
        return False
    element = node.value if isinstance(node, ast.DictComp) else node.elt  # type: ignore[attr-defined]
    return any(_history(source).possible(v) for v in _elements(element))


def _in_forward(source: Source, node: ast.AST) -> bool:
    """In a function named like a forward pass that steps no optimizer itself (roles.in_forward_pass)."""
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, FUNCTIONS):
            return is_forward_name(ancestor.name) and not source.memo(("steps-an-optimizer", id(ancestor)), lambda: _steps_an_optimizer(ancestor))
    return False


def _steps_an_optimizer(function: ast.AST) -> bool:
    """`<optimizer>.step()` in the function (roles.steps_an_optimizer)."""
    for node in subtree(function):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "step":
            receiver = node.func.value
            name = receiver.id if isinstance(receiver, ast.Name) else receiver.attr if isinstance(receiver, ast.Attribute) else ""
            if OPTIMIZER_NAME.search(name):
                return True
    return False
