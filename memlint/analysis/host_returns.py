"""Which functions return a tensor they have just made in host memory (the summaries' `fresh`), on
CPython's AST: the project pass's side of ML013's "created on the host, then moved" fact.

`causal_mask(n)` whose body is `mask = torch.triu(torch.ones(1, n, n), diagonal=1).type(torch.int)`,
`return mask == 0` returns such a tensor on every call: a caller's `causal_mask(n).to(device)` copies
to the device a tensor that could have been made there.  A function is counted only when every
`return` it has gives a fresh host tensor: a torch size factory (`tables.TORCH_FACTORIES`) called
without `device=` (nor `**kwargs`, which may hold one), looked at through what keeps it on the host
and fresh (a dtype cast, a reshape, a triangle of it, a comparison or arithmetic with a number) and
through a local name bound once, and through what computes a new host tensor from it: an index or
a slice of it (`torch.eye(n)[labels]`, a one-hot embedding), an elementwise torch function of it
(`-torch.log(eps - torch.log(torch.rand(shape) + eps))`, a Gumbel sample), arithmetic with a number
or with a parameter whose default is a number (`eps=1e-10`: a number at the calls that leave it, and
the calls in a project pass it on).  A function that may return a tensor on the device (`device=` given
to the factory, a `.to(...)` in one branch, a parameter returned in another) is not: the analysis
cannot tell where its result lives, so the rule stays silent.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from memlint.analysis.flag_arguments import parameter_defaults
from memlint.analysis.naming import dotted
from memlint.analysis.tables import ELEMENTWISE_FUNCTIONS, SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES

_TRIANGLES = frozenset({"triu", "tril"})
_TRIANGLE_FUNCTIONS = frozenset({"torch.triu", "torch.tril"})
_DEPTH = 8  # how many wrappers and local names are followed before giving up (stay silent)

Qualify = Callable[[Optional[str]], Optional[str]]
Bindings = dict[str, list[ast.Assign]]


def returns_fresh_host_tensor(
    returns: list[ast.Return], qualify: Qualify, bindings: Bindings, function: Optional[ast.AST] = None
) -> bool:
    """Does every one of a function's `return` statements (`returns`, at least one) give a tensor
    made on the host by a torch size factory in that call?  `qualify` resolves a dotted name through
    the file's imports ("torch.ones"); `bindings` maps each local name to its plain assignments (one
    assignment: the name holds that value; none: bound some other way, a parameter say); `function`,
    the function's node, gives the parameters that default to a number (`_NumberParameters`)."""
    numbers = _NumberParameters(function)
    return bool(returns) and all(r.value is not None and _fresh(r.value, qualify, bindings, numbers, 0) for r in returns)


class _NumberParameters:
    """The parameters of a function whose default is a number literal (`eps=1e-10`) and that its
    body never stores to (`eps = eps.cuda()`: then it may hold anything).  Found on the first
    question: most functions never ask (a name in arithmetic with a fresh tensor is rare)."""

    def __init__(self, function: Optional[ast.AST]) -> None:
        self._function = function
        self._found: Optional[frozenset[str]] = None

    def __contains__(self, name: str) -> bool:
        if self._found is None:
            self._found = self._parameters()
        return name in self._found

    def _parameters(self) -> frozenset[str]:
        function = self._function
        found = {name for name, default, _ in parameter_defaults(function) if _is_number(default)}  # type: ignore[arg-type]
        if found:
            found -= {n.id for n in ast.walk(function) if type(n) is ast.Name and type(n.ctx) is not ast.Load}  # type: ignore[arg-type, attr-defined]
        return frozenset(found)


def _fresh(expr: ast.AST, qualify: Qualify, bindings: Bindings, numbers: "_NumberParameters", depth: int) -> bool:
    if depth > _DEPTH:
        return False
    kind = type(expr)
    if kind is ast.Subscript:  # `torch.eye(n)[labels]`, `t[:, 1:]`: a part of a host tensor stays on the host
        return _fresh(expr.value, qualify, bindings, numbers, depth + 1)  # type: ignore[attr-defined]
    if kind is ast.Name:
        assigned = bindings.get(expr.id)  # type: ignore[attr-defined]
        if not assigned or len(assigned) != 1 or type(assigned[0].targets[0]) is not ast.Name:
            return False  # a parameter, a loop variable, a name bound twice: it may hold anything
        return _fresh(assigned[0].value, qualify, bindings, numbers, depth + 1)
    if kind is ast.Compare:  # `mask == 0`: a new bool tensor on the same device
        compared = [expr.left, *expr.comparators]  # type: ignore[attr-defined]
        tensors = [e for e in compared if not _number(e, numbers)]
        return len(compared) == 2 and len(tensors) == 1 and _fresh(tensors[0], qualify, bindings, numbers, depth + 1)
    if kind is ast.BinOp:  # `torch.ones(n, n) / n`: arithmetic with a number stays on the host
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        if _number(right, numbers):
            return _fresh(left, qualify, bindings, numbers, depth + 1)
        return _number(left, numbers) and _fresh(right, qualify, bindings, numbers, depth + 1)
    if kind is ast.UnaryOp and type(expr.op) in (ast.Invert, ast.USub):  # type: ignore[attr-defined]  # `~mask`
        return _fresh(expr.operand, qualify, bindings, numbers, depth + 1)  # type: ignore[attr-defined]
    if kind is not ast.Call:
        return False
    func = expr.func  # type: ignore[attr-defined]
    arguments = expr.args  # type: ignore[attr-defined]
    keywords = expr.keywords  # type: ignore[attr-defined]
    qualified = qualify(dotted(func))
    if qualified is not None and qualified.startswith("torch.") and qualified[6:] in TORCH_FACTORIES:
        return not any(k.arg in ("device", "out", None) for k in keywords)
    if qualified is not None and qualified.startswith("torch.") and qualified[6:] in ELEMENTWISE_FUNCTIONS:  # `torch.log(u + eps)`
        return len(arguments) == 1 and not keywords and type(arguments[0]) is not ast.Starred and _fresh(arguments[0], qualify, bindings, numbers, depth + 1)
    if qualified in _TRIANGLE_FUNCTIONS:  # `torch.triu(torch.ones(n, n), diagonal=1)`
        return bool(arguments) and type(arguments[0]) is not ast.Starred and _fresh(arguments[0], qualify, bindings, numbers, depth + 1)
    if type(func) is not ast.Attribute:
        return False
    method = func.attr
    if (method in TENSOR_CASTS and not arguments and not keywords) or method in SHAPE_METHODS or method in _TRIANGLES or _dtype_cast(expr, qualify):  # type: ignore[arg-type]
        return _fresh(func.value, qualify, bindings, numbers, depth + 1)
    return False


def _dtype_cast(call: ast.Call, qualify: Qualify) -> bool:
    """`t.type(torch.int)`: a cast to a dtype (a lowercase name of torch), which keeps `t` where it
    is, unlike `t.type(torch.cuda.FloatTensor)` (as ML013's `_dtype_cast` on libcst's tree)."""
    if call.func.attr != "type" or len(call.args) != 1 or call.keywords:  # type: ignore[attr-defined]
        return False
    module, _, name = (qualify(dotted(call.args[0])) or "").rpartition(".")
    return module == "torch" and name.islower() and not name.startswith("_")


def _number(expr: ast.AST, numbers: "_NumberParameters") -> bool:
    """A number literal, or a parameter that defaults to one (`_number_parameters`)."""
    return _is_number(expr) or (type(expr) is ast.Name and expr.id in numbers)  # type: ignore[attr-defined]


def _is_number(expr: ast.AST) -> bool:
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:  # type: ignore[attr-defined]
        expr = expr.operand  # type: ignore[attr-defined]
    return type(expr) is ast.Constant and type(expr.value) in (int, float)  # type: ignore[attr-defined]
