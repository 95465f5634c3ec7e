"""Casts that say where a tensor goes: `t.type_as(x)` and `t.type(type(x))` take `t` to `x`'s type and
so to `x`'s device; `t.type(torch.cuda.FloatTensor)` copies `t` to the current GPU; `t.type(torch.int)`
casts to a dtype and keeps `t` where it is.  Evidence: the call as written, its one argument
resolved through the file's imports (`Context.resolve`), or, for a name the imports do not resolve,
every binding of it in its scope (`cuda_type_name`: `T = torch.cuda.FloatTensor if x.is_cuda else
torch.FloatTensor`, the type a run on the accelerator picks); for a parameter, its callers
(`typed_parameter`: every call passes `x.type()`, the project pass's `typed_parameters`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from memlint.analysis.bindings import SCOPES, alternatives, bound_by, declared_global_values, local_names, parameter_names
from memlint.analysis.bindings import target_names
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


def typed_parameter(call: cst.Call, ctx: "Context") -> Optional[cst.Name]:
    """`p` of `t.type(p)` where `p` is a parameter of the function being visited that it never
    rebinds and every call of it gives a tensor's type string (`decode(outputs, dtype=x.type())`:
    the project pass's `typed_parameters`, memlint.analysis.type_arguments): a cast to that
    tensor's type, and so to its device, as `t.type_as(x)`; the name stands for the tensor."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "type" or len(call.args) != 1:
        return None
    argument = call.args[0]
    function = ctx.function_node
    key = ctx.function_key
    if argument.keyword is not None or argument.star or type(argument.value) is not cst.Name or function is None or key is None:
        return None
    name = argument.value.value
    if name not in parameter_names(function) or not ctx.project.tensor_type_parameter(key, name):
        return None
    rebound = ctx.memo(("rebinds parameter", name, id(function)), lambda: (function, _rebinds(name, function.body)))[1]  # type: ignore[index]
    return None if rebound else argument.value


def _rebinds(name: str, body: cst.CSTNode) -> bool:
    """Does anything in `body` (not nested scopes) bind `name`, or declare it `global` / `nonlocal`?"""
    return any(name in target_names(t) for node in code_descendants(body, skip=SCOPES) for t in bound_by(node, declarations=True))


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
    if function is not None and name in local_names(function):
        if name in parameter_names(function):
            return False
        key = ("cuda type name", name, id(function))
        return bool(ctx.memo(key, lambda: (function, _binds_cuda_type(name, function.body, ctx)))[1])  # type: ignore[index]
    if nested or name in ctx.memo("declared-globals", lambda: declared_global_values(ctx.module)):  # type: ignore[operator]
        return False
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
            cuda = cuda or _cuda_type(written)
    return cuda


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
