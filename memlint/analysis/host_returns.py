"""Which functions return a tensor they have just made in host memory (the summaries' `fresh`), on
CPython's AST: the project pass's side of ML013's "created on the host, then moved" fact.

`causal_mask(n)` whose body is `mask = torch.triu(torch.ones(1, n, n), diagonal=1).type(torch.int)`,
`return mask == 0` returns such a tensor on every call: a caller's `causal_mask(n).to(device)` copies
to the device a tensor that could have been made there.  A function is counted only when every
`return` it has gives a fresh host tensor: a torch size factory (`tables.TORCH_FACTORIES`) called
without `device=` (nor `**kwargs`, which may hold one), looked at through what keeps it on the host
and fresh (a dtype cast, a reshape, a triangle of it, a comparison or arithmetic with a number) and
through a local name bound once.  A function that may return a tensor on the device (`device=` given
to the factory, a `.to(...)` in one branch, a parameter returned in another) is not: the analysis
cannot tell where its result lives, so the rule stays silent.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from memlint.analysis.naming import dotted
from memlint.analysis.tables import SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES

_TRIANGLES = frozenset({"triu", "tril"})
_TRIANGLE_FUNCTIONS = frozenset({"torch.triu", "torch.tril"})
_DEPTH = 8  # how many wrappers and local names are followed before giving up (stay silent)

Qualify = Callable[[Optional[str]], Optional[str]]
Bindings = dict[str, list[ast.Assign]]


def returns_fresh_host_tensor(returns: list[ast.Return], qualify: Qualify, bindings: Bindings) -> bool:
    """Does every one of a function's `return` statements (`returns`, at least one) give a tensor
    made on the host by a torch size factory in that call?  `qualify` resolves a dotted name through
    the file's imports ("torch.ones"); `bindings` maps each local name to its plain assignments (one
    assignment: the name holds that value; none: bound some other way, a parameter say)."""
    return bool(returns) and all(r.value is not None and _fresh(r.value, qualify, bindings, 0) for r in returns)


def _fresh(expr: ast.AST, qualify: Qualify, bindings: Bindings, depth: int) -> bool:
    if depth > _DEPTH:
        return False
    kind = type(expr)
    if kind is ast.Name:
        assigned = bindings.get(expr.id)  # type: ignore[attr-defined]
        if not assigned or len(assigned) != 1 or type(assigned[0].targets[0]) is not ast.Name:
            return False  # a parameter, a loop variable, a name bound twice: it may hold anything
        return _fresh(assigned[0].value, qualify, bindings, depth + 1)
    if kind is ast.Compare:  # `mask == 0`: a new bool tensor on the same device
        compared = [expr.left, *expr.comparators]  # type: ignore[attr-defined]
        tensors = [e for e in compared if not _is_number(e)]
        return len(compared) == 2 and len(tensors) == 1 and _fresh(tensors[0], qualify, bindings, depth + 1)
    if kind is ast.BinOp:  # `torch.ones(n, n) / n`: arithmetic with a number stays on the host
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        if _is_number(right):
            return _fresh(left, qualify, bindings, depth + 1)
        return _is_number(left) and _fresh(right, qualify, bindings, depth + 1)
    if kind is ast.UnaryOp and type(expr.op) in (ast.Invert, ast.USub):  # type: ignore[attr-defined]  # `~mask`
        return _fresh(expr.operand, qualify, bindings, depth + 1)  # type: ignore[attr-defined]
    if kind is not ast.Call:
        return False
    func = expr.func  # type: ignore[attr-defined]
    arguments = expr.args  # type: ignore[attr-defined]
    keywords = expr.keywords  # type: ignore[attr-defined]
    qualified = qualify(dotted(func))
    if qualified is not None and qualified.startswith("torch.") and qualified[6:] in TORCH_FACTORIES:
        return not any(k.arg in ("device", "out", None) for k in keywords)
    if qualified in _TRIANGLE_FUNCTIONS:  # `torch.triu(torch.ones(n, n), diagonal=1)`
        return bool(arguments) and type(arguments[0]) is not ast.Starred and _fresh(arguments[0], qualify, bindings, depth + 1)
    if type(func) is not ast.Attribute:
        return False
    method = func.attr
    if (method in TENSOR_CASTS and not arguments and not keywords) or method in SHAPE_METHODS or method in _TRIANGLES or _dtype_cast(expr, qualify):  # type: ignore[arg-type]
        return _fresh(func.value, qualify, bindings, depth + 1)
    return False


def _dtype_cast(call: ast.Call, qualify: Qualify) -> bool:
    """`t.type(torch.int)`: a cast to a dtype (a lowercase name of torch), which keeps `t` where it
    is, unlike `t.type(torch.cuda.FloatTensor)` (as ML013's `_dtype_cast` on libcst's tree)."""
    if call.func.attr != "type" or len(call.args) != 1 or call.keywords:  # type: ignore[attr-defined]
        return False
    module, _, name = (qualify(dotted(call.args[0])) or "").rpartition(".")
    return module == "torch" and name.islower() and not name.startswith("_")


def _is_number(expr: ast.AST) -> bool:
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:  # type: ignore[attr-defined]
        expr = expr.operand  # type: ignore[attr-defined]
    return type(expr) is ast.Constant and type(expr.value) in (int, float)  # type: ignore[attr-defined]
