"""Parameters that hold a tensor's type, on CPython's AST: the project pass's side of "where does
`t.type(dtype)` send `t`".

`def decode(self, outputs, dtype)` casting a grid it builds on the host with `grid.type(dtype)` moves
nothing by itself: a dtype (`torch.float32`) keeps the grid where it is.  Its callers decide: where
every call passes `x.type()`, the string naming a tensor's type (`'torch.cuda.FloatTensor'` for a
tensor on the accelerator), the cast takes the grid to `x`'s device, as `grid.type_as(x)` would.
The summaries record each function's parameters that its code passes to a `.type(...)` cast
(`typed`), positioned as a call gives them (after `self` for a method), and at each call of a
function of the project, the arguments written `x.type()` (`types`).  The project pass counts a
parameter as a tensor's type where every call of the function it resolves passes one there, and no
call on a receiver of unknown class may reach it (`Project._typed_parameters`).
"""

from __future__ import annotations

import ast
from typing import Optional


def cast_parameter(call: ast.Call) -> Optional[str]:
    """`p` of `t.type(p)`: a cast to what the name `p` holds (one positional argument)."""
    func = call.func
    if type(func) is not ast.Attribute or func.attr != "type" or len(call.args) != 1 or call.keywords:
        return None
    argument = call.args[0]
    return argument.id if type(argument) is ast.Name else None


def called_position(function: ast.AST, parameter: str) -> Optional[int]:
    """The position a call of the module-level `function` gives `parameter` (-1: keyword-only); None
    for `*args`, `**kwargs` or no such parameter."""
    arguments = function.args  # type: ignore[attr-defined]
    positional = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    if parameter in positional:
        return positional.index(parameter)
    if any(a.arg == parameter for a in arguments.kwonlyargs):
        return -1
    return None


def method_position(function: ast.AST, parameter: str) -> Optional[int]:
    """`called_position` for a method called on an instance (`self.decode(outputs, dtype)`): one
    less, `self` being the receiver; None for `self`, and for a decorated method (a static or class
    method takes no `self`; a wrapper may change the arguments)."""
    if function.decorator_list:  # type: ignore[attr-defined]
        return None
    position = called_position(function, parameter)
    if position is None or position == 0:
        return None
    return position - 1 if position > 0 else position


def type_arguments(call: ast.Call) -> tuple[list[int], list[str]]:
    """(positions, keywords) of the call's arguments written `x.type()`: the string naming `x`'s
    tensor type; after a `*args` the positions are unknown and not given."""
    positions = []
    for position, argument in enumerate(call.args):
        if type(argument) is ast.Starred:
            break
        if names_tensor_type(argument):
            positions.append(position)
    keywords = [k.arg for k in call.keywords if k.arg is not None and names_tensor_type(k.value)]
    return positions, keywords


def names_tensor_type(value: ast.AST) -> bool:
    """`x.type()`, `xs[0].type()`, `self.x.type()`: the type string of a tensor (no argument: with
    one, `.type(T)` is a cast)."""
    return (
        type(value) is ast.Call and not value.args and not value.keywords  # type: ignore[attr-defined]
        and type(value.func) is ast.Attribute and value.func.attr == "type"  # type: ignore[attr-defined]
        and type(value.func.value) in (ast.Name, ast.Attribute, ast.Subscript)  # type: ignore[attr-defined]
    )  # fmt: skip
