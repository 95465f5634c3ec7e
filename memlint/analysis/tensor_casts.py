"""Casts that say where a tensor goes: `t.type_as(x)` and `t.type(type(x))` take `t` to `x`'s type and
so to `x`'s device; `t.type(torch.cuda.FloatTensor)` copies `t` to the current GPU; `t.type(torch.int)`
casts to a dtype and keeps `t` where it is.  Evidence: the call as written, its one argument
resolved through the file's imports (`Context.resolve`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

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
    return isinstance(written, str) and written.startswith("torch.cuda.") and written.endswith("Tensor")


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
