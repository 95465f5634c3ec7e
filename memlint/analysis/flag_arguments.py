"""Flag parameters and the values their callers give them, on CPython's AST: the project pass's side
of "which branch of a helper runs".

`def sinc(band, t_right, cuda=False)` with `if cuda: ones = ones.to('cuda')` reads like an opt-in
flag (off unless a caller turns it on: ML013 stays silent behind `if init:` of `init=False`).  Its
callers decide: `SincConv.forward` calls `sinc(..., cuda)` with `cuda = x.is_cuda`, so the branch
runs whenever the model is on the accelerator, as `if x.is_cuda:` would.  The summaries record each
module-level function's parameters that default to False (`flags`) and, at each call of a function
of the project, the arguments that turn a flag on (`passes`): the literal `True`, or an accelerator
test (`x.is_cuda`, `cuda`, `args.use_gpu`, `torch.cuda.is_available()`: `tables.DEVICE_FLAGS`).  The
project pass counts a flag as on where every call of the function it resolves turns it on
(`Project._flags_on`); a call that leaves it at its default, or passes anything else, keeps it
opt-in.

A class's constructor has such flags too (`Invertible1x1Conv(n, lu_factorize=False)` keeping
`self.lu_factorize = lu_factorize` for `forward`'s `if self.lu_factorize:`): `constructor_flags`
records them with the positions a construction gives them (after `self`), and a construction of the
class (`Project.resolve` takes it for a call of `__init__`) counts as a call that may turn them on.
"""

from __future__ import annotations

import ast

from memlint.analysis.tables import DEVICE_FLAGS


def default_false_flags(function: ast.AST) -> list[list]:
    """[[parameter, position], ...]: the parameters of `function` whose default is the literal
    False, with their position among the positional parameters (-1 for a keyword-only one)."""
    return [[name, position] for name, default, position in parameter_defaults(function) if _is_false(default)]


def constructor_flags(function: ast.AST) -> list[list]:
    """`default_false_flags` of a class's `__init__`, positioned as a construction passes them:
    `Conv(n, True)` gives `def __init__(self, n, lu=False)`'s `lu` (position 2 there) position 1."""
    return [[name, position - 1 if position > 0 else position] for name, position in default_false_flags(function) if position != 0]


def parameter_defaults(function: ast.AST) -> list[tuple[str, ast.expr, int]]:
    """(parameter, its default, its position among the positional parameters or -1 for a
    keyword-only one) for each parameter of `function` that has a default."""
    if type(function) not in (ast.FunctionDef, ast.AsyncFunctionDef):
        return []
    arguments = function.args  # type: ignore[attr-defined]
    positional = [*arguments.posonlyargs, *arguments.args]
    first = len(positional) - len(arguments.defaults)
    found = [(a.arg, d, first + i) for i, (a, d) in enumerate(zip(positional[first:], arguments.defaults))]
    found += [(a.arg, d, -1) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d is not None]
    return found


def arguments_on(call: ast.Call) -> tuple[list[int], list[str]]:
    """(positions, keywords) of the call's arguments that turn a flag on (`switches_on`); after a
    `*args` the positions are unknown and not given."""
    positions = []
    for position, argument in enumerate(call.args):
        if type(argument) is ast.Starred:
            break
        if switches_on(argument):
            positions.append(position)
    keywords = [k.arg for k in call.keywords if k.arg is not None and switches_on(k.value)]
    return positions, keywords


def switches_on(value: ast.AST) -> bool:
    """`True`, or an accelerator test: `cuda`, `x.is_cuda`, `args.use_gpu`, `torch.cuda.is_available()`."""
    kind = type(value)
    if kind is ast.Constant:
        return value.value is True  # type: ignore[attr-defined]
    if kind is ast.Name:
        return value.id in DEVICE_FLAGS  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return value.attr in DEVICE_FLAGS  # type: ignore[attr-defined]
    if kind is ast.Call and not value.args and type(value.func) is ast.Attribute:  # type: ignore[attr-defined]
        return value.func.attr == "is_available" and type(value.func.value) is ast.Attribute and value.func.value.attr == "cuda"  # type: ignore[attr-defined]
    return False


def _is_false(value: ast.AST) -> bool:
    return type(value) is ast.Constant and value.value is False  # type: ignore[attr-defined]
