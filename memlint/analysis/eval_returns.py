"""Helpers that hand back a module they put in eval mode: `net = FAN(n); net.load_state_dict(w);
net.eval(); return net`.  A caller binding the result (`self.net = self._load_native(...)`) holds a
model in eval mode as if it had called `.eval()` itself (face-alignment's `FaceAlignment.__init__`).

Evidence, all of it in the helper's own body (a function of the file, or a method of the class the
traversal is in, called on `self`): an unconditional `N.eval()` (or `N.train(False)`, or `N =
....eval()`) statement of the body, N a model (built there by a module class, or named like one);
after it no `.train()` call and no rebinding of N; every `return` (none before the `.eval()`)
hands back N itself.  Anything else, and the caller's statement is no evaluation evidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.delegation import KEEPS_THE_MODULE, binds, defined_in_other_class, eval_call_shape, own_method, top_function
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def returned_in_eval_mode(statement: cst.CSTNode, ctx: "Context") -> Optional[tuple[cst.Call, cst.BaseExpression]]:
    """(the helper call, the target) for `target = helper(...)` (also `.to(device)` and the like
    chained on the result), where `helper` returns a module it put in eval mode; else None."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return None
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) not in (cst.Name, cst.Attribute):
        return None
    call = small.value
    while type(call) is cst.Call and type(call.func) is cst.Attribute and call.func.attr.value in KEEPS_THE_MODULE:  # type: ignore[attr-defined]
        call = call.func.value  # type: ignore[attr-defined]
    if type(call) is not cst.Call:
        return None
    helper = _helper(call, ctx)  # type: ignore[arg-type]
    if helper is None or not ctx.memo(("returns-in-eval-mode", id(helper)), lambda: returns_in_eval_mode(helper, ctx)):
        return None
    return call, small.targets[0].target  # type: ignore[return-value]


def _helper(call: cst.Call, ctx: "Context") -> Optional[cst.FunctionDef]:
    """The function of the file (`load_net(...)`) or method of the enclosing class (`self._load(...)`) called."""
    func = call.func
    if type(func) is cst.Name:
        if ctx.resolve(func) is not None:
            return None  # (an import: its body is not read here)
        if _bound_in_calling_scope(func.value, ctx):
            return None  # (a parameter or local named like the file's function: `def __init__(self, load)`)
        return top_function(ctx, func.value)
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        if defined_in_other_class(func.attr.value, ctx):
            return None  # (a subclass of the file may override it: `self` need not be the enclosing class)
        return own_method(ctx, func.attr.value)
    return None


def _bound_in_calling_scope(name: str, ctx: "Context") -> bool:
    """Does a function the traversal is in bind `name` (a parameter, an assignment, an import, a
    comprehension...)?  Then the call need not reach the file's function of that name."""
    return any(
        ctx.memo(("eval-returns-binds", id(frame.node), name), lambda node=frame.node: binds(node, name))
        for frame in ctx.frames
        if isinstance(frame.node, cst.FunctionDef)
    )


def returns_in_eval_mode(function: cst.FunctionDef, ctx: "Context") -> bool:
    """Does every return of `function` hand back the model an unconditional statement of its body
    put in eval mode, with nothing after it switching it back or rebinding the name?"""
    if function.decorators or not isinstance(function.body, cst.IndentedBlock):
        return False
    body = list(function.body.body)
    for position in range(len(body) - 1, -1, -1):
        call = eval_call_shape(body[position])
        if call is None:
            continue
        name = _evaluated_name(call, body[position])
        if name is None or not _a_model(name, function, ctx):
            return False
        before, after = body[:position], body[position + 1 :]
        if any(type(n) is cst.Return for s in before for n in (s, *code_descendants(s, skip=_SCOPES))):
            return False
        returns = [n for s in after for n in (s, *code_descendants(s, skip=_SCOPES)) if type(n) is cst.Return]
        if not returns or not all(type(r.value) is cst.Name and r.value.value == name for r in returns):  # type: ignore[attr-defined]
            return False
        return not any(binds(s, name) or _switches_mode(s) for s in after)
    return False


_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def _evaluated_name(call: cst.Call, statement: cst.CSTNode) -> Optional[str]:
    """`net` of `net.eval()`, `net.cuda().eval()`, or `net = net.eval()` / `net = Net().eval()`."""
    receiver = call.func.value  # type: ignore[attr-defined]
    while type(receiver) is cst.Call and type(receiver.func) is cst.Attribute and receiver.func.attr.value in KEEPS_THE_MODULE:  # type: ignore[attr-defined]
        receiver = receiver.func.value  # type: ignore[attr-defined]
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is cst.Assign:
        if len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
            return None
        target = small.targets[0].target.value  # type: ignore[attr-defined]
        # (`net = other.eval()` would bind a second name to the model: not followed)
        return target if type(receiver) is cst.Call or (type(receiver) is cst.Name and receiver.value == target) else None
    return receiver.value if type(receiver) is cst.Name else None


def _a_model(name: str, function: cst.FunctionDef, ctx: "Context") -> bool:
    """Is `name` a model in `function`: named like one, or built there only by module classes the
    file knows (its own, or the project's)?"""
    if tables.MODEL_NAME.match(name):
        return True
    made = ctx.model.constructed(function).get(name, ())
    return bool(made) and all(type(m.func) is cst.Name and _module_class(m.func.value, ctx) for m in made)  # type: ignore[attr-defined]


def _module_class(name: str, ctx: "Context") -> bool:
    return name in ctx.module_classes or name in ctx.project.module_classes or name in ctx.project.imported_modules


def _switches_mode(statement: cst.CSTNode) -> bool:
    """Does the statement call `.train(...)` (any argument: silence when unsure) anywhere?"""
    return any(
        type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "train"  # type: ignore[attr-defined]
        for n in (statement, *code_descendants(statement))
    )
