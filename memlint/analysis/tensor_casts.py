"""Casts that say where a tensor goes: `t.type_as(x)` and `t.type(type(x))` take `t` to `x`'s type and
so to `x`'s device; `t.type(torch.cuda.FloatTensor)` copies `t` to the current GPU; `t.type(torch.int)`
casts to a dtype and keeps `t` where it is.  Evidence: the call as written, its one argument
resolved through the file's imports (`Context.resolve`), or, for a name the imports do not resolve,
every binding of it in its scope (`cuda_type_name`: `T = torch.cuda.FloatTensor if x.is_cuda else
torch.FloatTensor`, the type a run on the accelerator picks)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from memlint.analysis.bindings import SCOPES, alternatives, bound_by, declared_global_values, local_names, parameter_names
from memlint.analysis.bindings import target_names
from memlint.analysis.constants import literal_bool
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def type_as_argument(call: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`x` of `t.type_as(x)`, `t.type(type(x))` or `t.type(x.type())`: a cast to `x`'s tensor type,
    which moves `t` to `x`'s device as well (`type(x.data)` is `torch.cuda.FloatTensor` there)."""
    if not isinstance(call, cst.Call) or not isinstance(call.func, cst.Attribute) or call.func.attr.value not in ("type_as", "type"):
        return None
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    argument = call.args[0].value
    if call.func.attr.value == "type_as":
        return argument
    if isinstance(argument, cst.Call) and not argument.args:  # `x.type()`: the string naming x's type
        func = argument.func
        return func.value if isinstance(func, cst.Attribute) and func.attr.value == "type" else None
    if isinstance(argument, cst.Call) and isinstance(argument.func, cst.Name) and argument.func.value == "type" and len(argument.args) == 1:
        return argument.args[0].value if argument.args[0].keyword is None and not argument.args[0].star else None
    return None


def cuda_type_cast(call: cst.Call, ctx: "Context") -> bool:
    """`t.type(torch.cuda.FloatTensor)` / `t.type("torch.cuda.LongTensor")`: a cast to an accelerator's
    legacy tensor type, which copies `t` to the current GPU."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "type" or len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return False
    argument = call.args[0].value
    if isinstance(argument, cst.SimpleString):
        written = argument.evaluated_value
    else:
        written = ctx.resolve(argument)
    if written is None and type(argument) is cst.Name:
        return cuda_type_name(argument.value, ctx)  # `FloatTensor = torch.cuda.FloatTensor if x.is_cuda else ...`
    return _cuda_type(written)


def _cuda_type(written: object) -> bool:
    return isinstance(written, str) and written.startswith("torch.cuda.") and written.endswith("Tensor")


def _legacy_type(written: object) -> bool:
    """`torch.FloatTensor`, `torch.cuda.LongTensor`, `torch.Tensor`: a tensor type of torch's."""
    if not isinstance(written, str) or not written.endswith("Tensor"):
        return False
    module = written.rpartition(".")[0]
    return module in ("torch", "torch.cuda")


def cuda_type_name(name: str, ctx: "Context") -> bool:
    """Does the name `name`, read in the function being visited (or at module level), hold an
    accelerator's legacy tensor type whenever the run is on one?  Every binding of it in its scope
    (the function's, when the function binds it; else the module's, when no function declares it
    `global`) is `name = value` with each alternative of `value` (`alternatives`: the arms of a
    conditional expression) one of torch's tensor types, and some binding's alternative is a
    `torch.cuda` one: `FloatTensor = torch.cuda.FloatTensor if x.is_cuda else torch.FloatTensor`.
    Asked only where the Context does not resolve the name itself (a plain alias it follows binding
    by binding).  A parameter, a name an enclosing function binds, any other binding (a loop's
    target, `global`, an unpacking) or value: unknown, False."""
    function = ctx.function_node
    nested = sum(1 for frame in ctx.frames if frame.kind == "function") > 1
    own = ctx.memo(("local names", id(function)), lambda: (function, local_names(function)))[1] if function is not None else ()  # type: ignore[index]
    if function is not None and name in own:
        if name in parameter_names(function):
            return False
        key = ("cuda type name", name, id(function))
        return bool(ctx.memo(key, lambda: (function, _binds_cuda_type(name, function.body, ctx)))[1])  # type: ignore[index]
    if nested or name in ctx.memo("declared-globals", lambda: declared_global_values(ctx.module)):  # type: ignore[operator]
        return False
    if ctx.memo("star imports", lambda: any(type(n) is cst.ImportFrom and type(n.names) is cst.ImportStar for n in code_descendants(ctx.module, skip=SCOPES))):
        return False  # `from config import *` may rebind the name to any type
    return bool(ctx.memo(("cuda type name", name), lambda: _binds_cuda_type(name, ctx.module, ctx)))


def _binds_cuda_type(name: str, scope: cst.CSTNode, ctx: "Context") -> bool:
    """Is every binding of `name` in `scope` (its own statements, not nested scopes) `name = <a
    tensor type>`, some of them a `torch.cuda` one?"""
    cuda = False
    for node in code_descendants(scope, skip=SCOPES):
        targets = bound_by(node, declarations=True)
        if not targets or not any(name in target_names(t) for t in targets):
            continue
        if type(node) is not cst.Assign or any(type(t) is not cst.Name for t in targets):
            return False  # a loop's target, an import, `global`, an unpacking: not one known value
        for value in alternatives(node.value):  # type: ignore[attr-defined]
            written = value.evaluated_value if type(value) is cst.SimpleString else ctx.resolve(value)
            if not _legacy_type(written):
                return False
            cuda = cuda or (_cuda_type(written) and not _arm_never_taken(node.value, value, ctx))  # type: ignore[attr-defined]
    return cuda


def _arm_never_taken(choice: cst.BaseExpression, arm: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `arm`, one alternative of `choice`, the body of a conditional expression whose test is
    always false (`T if False else U`, `T if USE_CUDA else U` with every module binding of `USE_CUDA`
    `= False`), or its `else` under an always-true test?"""
    while type(choice) is cst.IfExp:
        test = choice.test  # type: ignore[attr-defined]
        if arm is choice.body or arm in alternatives(choice.body):  # type: ignore[attr-defined]
            if _constant(test, ctx) is False:
                return True
            choice = choice.body  # type: ignore[attr-defined]
        else:
            if _constant(test, ctx) is True:
                return True
            choice = choice.orelse  # type: ignore[attr-defined]
    return False


def _constant(test: cst.BaseExpression, ctx: "Context") -> Optional[bool]:
    """`True` / `False` as written, or a module name every binding of which is that literal."""
    if type(test) is not cst.Name:
        return None
    if literal_bool(test) is not None:
        return literal_bool(test)
    values = ctx.memo(("literal bindings", test.value), lambda: _literal_bindings(test.value, ctx))
    return values[0] if values is not None and len(set(values)) == 1 else None  # type: ignore[index]


def _literal_bindings(name: str, ctx: "Context") -> Optional[list]:
    """The literal True/False values of every binding of `name` in the module's own statements, or
    None where one is anything else (or a function declares it global)."""
    if name in ctx.memo("declared-globals", lambda: declared_global_values(ctx.module)):  # type: ignore[operator]
        return None
    found = []
    for node in code_descendants(ctx.module, skip=SCOPES):
        targets = bound_by(node, declarations=True)
        if not targets or not any(name in target_names(t) for t in targets):
            continue
        value = literal_bool(node.value) if type(node) is cst.Assign else None  # type: ignore[attr-defined]
        if value is None:
            return None
        found.append(value)
    return found or None


def dtype_cast(call: cst.Call, ctx: "Context") -> bool:
    """`t.type(torch.int)`: a cast to a dtype (a lowercase name in torch: `torch.float32`), which keeps
    `t` on its device, unlike `t.type(torch.cuda.FloatTensor)`."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value != "type" or len(call.args) != 1 or call.args[0].keyword is not None:
        return False
    qualified = ctx.resolve(call.args[0].value) or ""
    module, _, name = qualified.rpartition(".")
    return module == "torch" and name.islower() and not name.startswith("_")


def moving_casts_under(receiver: cst.BaseExpression) -> Iterator[cst.Call]:
    """The `.type_as(x)` casts on the way from a move to what it moves (`t.type_as(x).to(d)`): the
    outer move says where the tensor ends up."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
        if type_as_argument(receiver) is not None:
            yield receiver
        receiver = receiver.func.value
