"""Forms that end a parameter's history inside a helper (summaries' ["g", position] fact).

The summary's alternatives follow a value through subscripts, attributes, tuple unpacking and
torch calls, which is right for "may this carry history?" but too loose for "does this helper's
return carry its argument's history?": `_, pred = torch.max(out, 1)`, `out.topk(5).indices`,
`torch.multinomial(p, 1)` and `(x * 255).to(torch.uint8)` return integer tensors without history.
A helper holding any of these forms, or one that may end without a return, gets no ["g", ...]
answer (no entry: the analysis stays silent rather than guess which path its return takes).
"""

from __future__ import annotations

import ast

from memlint.analysis import tables
from memlint.analysis.naming import dotted

# torch functions (beyond tables.GRAPH_FREE_FUNCTIONS) whose result has no history.
_FREE_CALLS = frozenset({"multinomial", "equal", "allclose", "unique", "unique_consecutive", "randperm", "histc", "bincount"})
# Tensor methods that cast to an integer or bool dtype, or switch history off in place.
_ENDING_METHODS = frozenset(
    {"long", "int", "short", "char", "byte", "bool", "detach_", "requires_grad_", "indices", "argsort"}
)
# dtypes whose tensors never carry history.
_INTEGER_DTYPES = frozenset(
    {"uint8", "int8", "int16", "int32", "int64", "long", "int", "short", "bool", "LongTensor", "IntTensor", "ByteTensor", "BoolTensor"}
)


def given_history_ends(node: ast.AST) -> bool:
    """Is `node` a form whose value has no history though its operand may (see the module's
    docstring): an indexed or unpacked call result (an index output of max/min/sort/topk/...),
    `.indices`, an index or comparison function, a cast to an integer dtype, or a grad switch?"""
    kind = type(node)
    if kind is ast.Subscript:
        return type(node.value) is ast.Call  # type: ignore[attr-defined]
    if kind is ast.Assign:
        return type(node.value) is ast.Call and any(type(t) in (ast.Tuple, ast.List) for t in node.targets)  # type: ignore[attr-defined]
    if kind is ast.Attribute:
        return node.attr in _ENDING_METHODS or node.attr in _INTEGER_DTYPES  # type: ignore[attr-defined]
    if kind is ast.Constant:
        return type(node.value) is str and node.value in _INTEGER_DTYPES  # type: ignore[attr-defined]
    if kind is ast.Call:
        name = (dotted(node.func) or "").rpartition(".")[2]  # type: ignore[attr-defined]
        if name in tables.GRAPH_FREE_FUNCTIONS or name in _FREE_CALLS:
            return True
        return name == "set_grad_enabled" and not _constant_true(node)  # type: ignore[arg-type]
    return False


def _constant_true(call: ast.Call) -> bool:
    return len(call.args) == 1 and type(call.args[0]) is ast.Constant and call.args[0].value is True


def may_fall_through(body: list) -> bool:
    """May running `body` reach its end (the function then returns None)?  Only a last `return`
    or `raise`, or an `if`/`else`, `with` or `try` whose every way out ends so, says no."""
    if not body:
        return True
    last = body[-1]
    kind = type(last)
    if kind in (ast.Return, ast.Raise):
        return False
    if kind is ast.If:
        return may_fall_through(last.body) or may_fall_through(last.orelse)
    if kind in (ast.With, ast.AsyncWith):
        return may_fall_through(last.body)
    if kind is ast.Try:
        if last.finalbody and not may_fall_through(last.finalbody):
            return False
        return may_fall_through(last.orelse or last.body) or any(may_fall_through(h.body) for h in last.handlers)
    return True
