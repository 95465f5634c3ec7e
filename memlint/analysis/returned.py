"""Does a function hand back anything that can carry autograd history?

`hands_back_no_history(function, ctx)` answers "certainly not" (True) when every `return` of the
function (none at all, a bare `return`, `return None`) gives back a value that cannot hold a graph,
and it stores nothing on `self` or in a subscript: so nothing it computes can reach a backward or
an optimizer's step of its caller.  The evidence, per returned expression:

- literals, `None`, `True` / `False`; displays (tuple, list, dict, set) of such values;
- a call of a tensor method whose result has no history (`.item()`, `.tolist()`, `.numpy()`,
  `.detach()`, ...: tables.GRAPH_FREE_METHODS), of `numpy` / `math` (a tensor with history cannot
  become an array), of an array's `.astype(...)` (tensors have none), or of `float` / `int` /
  `bool` / `str` / `len` / `round`;
- an attribute without history (`.shape`, `.dtype`: tables.GRAPH_FREE_ATTRIBUTES);
- arithmetic of such values;
- a local name whose last binding before the `return`, a plain `name = value` statement of the same
  block or of a block around it, with nothing in between rebinding it, is such a value
  (`total_loss = np.average(total_loss); return total_loss`: Informer2020's `vali`).

Anything else (a name bound in a loop or a branch, `self.x`, a call of the project's own code)
may carry history: the answer is False, and a rule asking it stays as silent as before.

The evaluation rule (ML002) asks it of a function that puts its model in eval mode and is called by
training code: such a function is evaluation whoever calls it, unless what it returns could be
backpropagated (a meta-learning inner loop's validation loss).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.bindings import target_names
from memlint.analysis.delegation import binds, top_function
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Builtins whose result is a Python value (a tensor with history cannot pass through them with it).
_PLAIN_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "round", "repr", "format"})
_PLAIN_MODULES = ("numpy.", "math.", "scipy.")  # (numpy cannot take a tensor that requires grad)
_LITERALS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_DEPTH = 6
# Methods of numpy arrays (and pandas objects) that torch tensors lack: their result is an array.
_ARRAY_METHODS = frozenset({"astype"})


def hands_back_no_history(function: cst.FunctionDef, ctx: "Context") -> bool:
    """Is every value the function returns certainly free of autograd history, with nothing stored on
    `self` or into a subscript?"""
    return ctx.memo(("returned.no-history", id(function)), lambda: _check(function, ctx))  # type: ignore[return-value]


def _check(function: cst.FunctionDef, ctx: "Context") -> bool:
    if not isinstance(function.body, cst.IndentedBlock):
        return False
    active = _active(ctx)
    if id(function) in active:
        return False  # (recursion: not known yet, so not certain)
    active.add(id(function))
    try:
        return _block(list(function.body.body), [], ctx, _locals(function))
    finally:
        active.discard(id(function))


def _active(ctx: "Context") -> set:
    """The functions being checked now (a helper that calls itself, directly or not, is not certain)."""
    return ctx.memo(("returned.active", id(ctx.module)), set)  # type: ignore[return-value]


def _locals(function: cst.FunctionDef) -> frozenset[str]:
    """Names the function's body binds by assignment or loop (not its parameters, not `global`)."""
    found = set()
    declared = set()
    for node in code_descendants(function.body, skip=_NESTED):
        kind = type(node)
        if kind in (cst.AssignTarget, cst.For, cst.CompFor):
            found.update(target_names(node.target))  # type: ignore[attr-defined]
        elif kind in (cst.Global, cst.Nonlocal):
            declared.update(item.name.value for item in node.names)  # type: ignore[attr-defined]
    params = {p.name.value for p in [*function.params.params, *function.params.posonly_params, *function.params.kwonly_params]}
    return frozenset(found - declared - params - {"self"})


def _block(statements: Sequence[cst.CSTNode], outer: list, ctx: "Context", local: frozenset[str]) -> bool:
    """Check the returns and stores of a block; `outer` holds the statements that certainly ran before
    it, in enclosing blocks (innermost last)."""
    for position, statement in enumerate(statements):
        before = [*outer, list(statements[:position])]
        if type(statement) is cst.SimpleStatementLine:
            for small in statement.body:  # type: ignore[attr-defined]
                kind = type(small)
                if kind is cst.Return and small.value is not None and not _free(small.value, before, ctx, 0):  # type: ignore[attr-defined]
                    return False
                if kind in (cst.Assign, cst.AugAssign, cst.AnnAssign) and _stores_outside(small, local):
                    return False
                if kind is cst.Expr and type(small.value) in (cst.Yield, cst.Await):  # type: ignore[attr-defined]
                    return False
            continue
        if isinstance(statement, _NESTED):
            continue
        for inner in _inner_blocks(statement):
            if not _block(inner, before, ctx, local):
                return False
        if any(type(n) in (cst.Yield, cst.Await) for n in _expressions(statement)):
            return False
    return True


def _inner_blocks(statement: cst.CSTNode) -> list:
    found = []
    for name in ("body", "orelse", "finalbody"):
        part = getattr(statement, name, None)
        if isinstance(part, cst.If):  # `elif`
            found.extend(_inner_blocks(part))
            continue
        if isinstance(part, cst.Else):
            part = part.body
        if isinstance(part, cst.IndentedBlock):
            found.append(list(part.body))
        elif isinstance(part, cst.SimpleStatementSuite):
            found.append([cst.SimpleStatementLine(body=part.body)])
    for handler in getattr(statement, "handlers", ()) or ():
        if isinstance(handler.body, cst.IndentedBlock):
            found.append(list(handler.body.body))
    if type(statement) is cst.Match:
        for case in statement.cases:  # type: ignore[attr-defined]
            if isinstance(case.body, cst.IndentedBlock):
                found.append(list(case.body.body))
    return found


def _expressions(statement: cst.CSTNode):
    """The expressions of a compound statement's own header (test, iterable, with items)."""
    for name in ("test", "iter", "items"):
        part = getattr(statement, name, None)
        if part is None:
            continue
        stack = list(part) if isinstance(part, (list, tuple)) else [part]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(code_children(node))  # (asked for yields and awaits: layout holds neither)


def _stores_outside(small: cst.CSTNode, local: frozenset[str]) -> bool:
    """`self.x = ...`, `cache[k] = ...` on a parameter or a global: a value the caller may read back
    after the call (`z[:, row] = val` on a local tensor is not)."""
    targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target]  # type: ignore[attr-defined]
    stack = list(targets)
    while stack:
        target = stack.pop()
        if type(target) in (cst.Attribute, cst.Subscript):
            root = target
            while type(root) in (cst.Attribute, cst.Subscript):
                root = root.value  # type: ignore[attr-defined]
            if type(root) is not cst.Name or root.value not in local:  # type: ignore[attr-defined]
                return True
        if type(target) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in target.elements)  # type: ignore[attr-defined]
    return False


def _free(expr: cst.BaseExpression, before: list, ctx: "Context", depth: int) -> bool:
    if depth > _DEPTH:
        return False
    kind = type(expr)
    if kind is cst.Name:
        if expr.value in ("None", "True", "False"):  # type: ignore[attr-defined]
            return True
        bound, earlier = _last_binding(expr.value, before)  # type: ignore[attr-defined]
        return bound is not None and _free(bound, earlier, ctx, depth + 1)
    if isinstance(expr, _LITERALS):
        return True
    if kind in (cst.Tuple, cst.List, cst.Set):
        return all(type(e) is not cst.StarredElement and _free(e.value, before, ctx, depth + 1) for e in expr.elements)  # type: ignore[attr-defined]
    if kind is cst.Dict:
        return all(
            type(e) is cst.DictElement and _free(e.value, before, ctx, depth + 1)  # type: ignore[attr-defined]
            for e in expr.elements  # type: ignore[attr-defined]
        )
    if kind is cst.BinaryOperation:
        return _free(expr.left, before, ctx, depth + 1) and _free(expr.right, before, ctx, depth + 1)  # type: ignore[attr-defined]
    if kind is cst.Comparison:
        return True  # (a comparison's result, even of tensors, has no history)
    if kind is cst.UnaryOperation:
        return type(expr.operator) is cst.Not or _free(expr.expression, before, ctx, depth + 1)  # type: ignore[attr-defined]
    if kind is cst.Attribute:
        return expr.attr.value in tables.GRAPH_FREE_ATTRIBUTES  # type: ignore[attr-defined]
    if kind is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in tables.GRAPH_FREE_METHODS:
            return True
        if type(func) is cst.Attribute and func.attr.value in _ARRAY_METHODS:
            return True  # (`(pred / count).astype(np.float32)`: a tensor has no `astype`)
        qualified = ctx.resolve(func)
        if qualified is not None and qualified.startswith(_PLAIN_MODULES):
            return True
        if type(func) is not cst.Name or qualified is not None:
            return False
        if func.value in _PLAIN_BUILTINS:
            return True
        # a module-level function of the file that itself hands back nothing with history
        # (`accuracy, sem = mean_confidence_interval(accs)`: MAML-Pytorch's statistics helper)
        helper = top_function(ctx, func.value)
        return helper is not None and hands_back_no_history(helper, ctx)
    return False


def _last_binding(name: str, before: list) -> tuple[Optional[cst.BaseExpression], list]:
    """The value of the last statement before the return that binds `name`, when that statement is a
    plain `name = value`; with the statements that ran before it (for its own names)."""
    for level in range(len(before) - 1, -1, -1):
        statements = before[level]
        for position in range(len(statements) - 1, -1, -1):
            statement = statements[position]
            if not binds(statement, name):
                continue
            if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
                return None, []
            small = statement.body[0]  # type: ignore[attr-defined]
            if type(small) is not cst.Assign or len(small.targets) != 1:
                return None, []
            value = _bound_part(small.targets[0].target, small.value, name)
            if value is None:
                return None, []
            return value, [*before[:level], list(statements[:position])]
    return None, []


def _bound_part(target: cst.BaseExpression, value: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """What `name` gets from `target = value`: the value itself for `name = value`, the matching
    element for `a, name = x, y`, and the whole value for `a, name = f(...)` (a value free of
    history has no part that carries it)."""
    if type(target) is cst.Name:
        return value if target.value == name else None  # type: ignore[attr-defined]
    if type(target) not in (cst.Tuple, cst.List):
        return None
    elements = target.elements  # type: ignore[attr-defined]
    if any(type(e) is cst.StarredElement for e in elements):
        return None
    for position, element in enumerate(elements):
        if type(element.value) is cst.Name and element.value.value == name:
            if type(value) in (cst.Tuple, cst.List):
                parts = value.elements  # type: ignore[attr-defined]
                if len(parts) != len(elements) or any(type(p) is cst.StarredElement for p in parts):
                    return None
                return parts[position].value
            return value
    return None


# Methods that add their argument to the container they are called on (`outputs.append(y)`).
_ADDERS = frozenset({"append", "extend", "insert", "add", "update", "appendleft"})


def returns_nothing_from(function: cst.FunctionDef, sources: frozenset[str], ctx: "Context") -> bool:
    """Is nothing the function returns computed from `sources` (local names, a model the function
    builds itself), and does it store nothing outside?  A name is computed from a source when an
    assignment, a loop or an `append` of the function gives it a value that reads a source or such
    a name (followed to a fixed point), unless through a call whose result has no history
    (`.numpy()`, `.item()`: tables.GRAPH_FREE_METHODS).  cleanrl's `dqn_eval.evaluate` builds and
    loads its `model`, turns its Q-values into actions with `.cpu().numpy()` and returns the
    episodes' returns from the environment: nothing of the model's graph reaches its caller."""
    if not isinstance(function.body, cst.IndentedBlock) or not _stores_nothing_outside(function):
        return False
    tainted = set(sources)
    bindings = list(_bindings(function))
    changed = True
    while changed:
        changed = False
        for targets, value in bindings:
            if targets <= tainted or not _reads(value, tainted):
                continue
            tainted |= targets
            changed = True
    for node in code_descendants(function.body, skip=_NESTED):
        if type(node) is cst.Return and node.value is not None and _reads(node.value, tainted):  # type: ignore[attr-defined]
            return False
        if type(node) in (cst.Yield, cst.Await):
            return False
    return True


def _stores_nothing_outside(function: cst.FunctionDef) -> bool:
    local = _locals(function)
    return not any(
        type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign) and _stores_outside(node, local)
        for node in code_descendants(function.body, skip=_NESTED)
    )


def _bindings(function: cst.FunctionDef):
    """(the names a statement binds, the expression their value comes from) for each binding."""
    for node in code_descendants(function.body, skip=_NESTED):
        kind = type(node)
        if kind is cst.Assign:
            names = frozenset(n for t in node.targets for n in [*target_names(t.target), *_stored_into(t.target)])  # type: ignore[attr-defined]
            yield names, node.value  # type: ignore[attr-defined]
        elif kind in (cst.AugAssign, cst.AnnAssign) and node.value is not None:  # type: ignore[attr-defined]
            yield frozenset(target_names(node.target)), node.value  # type: ignore[attr-defined]
        elif kind in (cst.For, cst.CompFor):
            yield frozenset(target_names(node.target)), node.iter  # type: ignore[attr-defined]
        elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _ADDERS and type(node.func.value) is cst.Name:  # type: ignore[attr-defined]
            yield frozenset({node.func.value.value}), node  # type: ignore[attr-defined]
        elif kind is cst.NamedExpr:
            yield frozenset(target_names(node.target)), node.value  # type: ignore[attr-defined]


def _stored_into(target: cst.BaseExpression) -> list[str]:
    """`results[k] = y`, `stats.loss = y`: the local name the value is stored into."""
    root = target
    while type(root) in (cst.Attribute, cst.Subscript):
        root = root.value  # type: ignore[attr-defined]
    return [root.value] if root is not target and type(root) is cst.Name else []  # type: ignore[attr-defined]


def _reads(expr: cst.CSTNode, names: set) -> bool:
    """Does `expr` read one of `names`, other than through a call whose result has no history?"""
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name and node.value in names:  # type: ignore[attr-defined]
            return True
        if kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in tables.GRAPH_FREE_METHODS:  # type: ignore[attr-defined]
            continue  # (`q.cpu().numpy()`: a copy without history, whatever it was made from)
        if kind is cst.Attribute:
            stack.append(node.value)  # type: ignore[attr-defined]  # (not the attribute's own name)
            continue
        if isinstance(node, _NESTED) and node is not expr:
            continue
        stack.extend(code_children(node))
    return False
