"""ML005's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

A `Linear(...)` with two arguments that could fold to numbers: the rule needs both sizes (also
through a counted loop's conditional assignments and its loop variable).  And evidence that a
flattened map feeds it, as the rule reads it (`inventory.is_flatten`): the word `Flatten` (the
layer), a flatten from dimension 1 (`torch.flatten(x, 1)`, `x.flatten(1)`), a `view` / `reshape`
to `(n, -1)` or to `(x.size(0), 8192)` (the batch dimension, then the size written out), or a Linear whose `in_features` is written as a product (`512 * 7 * 7`).  A vision
Transformer's `x.flatten(2)` and `Linear(dim, dim * 3)` are none of them.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping, Optional

from memlint.analysis.naming import BATCH_STRIDE
from memlint.prescreen.source import Source, final_name

# Conditional expressions and comparisons too: a counted loop's assignments fold when run by hand
# (`constants.after_counted_loops`: `out = n if i == 0 else c * 2`).
_ARITHMETIC = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Starred, ast.unaryop, ast.operator, ast.Load, ast.IfExp, ast.Compare, ast.cmpop)


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    linear = source.names_for(["Linear"])
    calls = [call for call in source.nodes(ast.Call) if final_name(call.func) in linear]  # type: ignore[attr-defined]
    sizes = [[*call.args, *(k.value for k in call.keywords)] for call in calls]  # type: ignore[attr-defined]
    # Cheap shapes first: most layers take `config.hidden_size`, which never folds.
    sizes = [values for values in sizes if sum(1 for v in values if _could_fold(v, None)) >= 2]
    if not sizes or not (source.mentions("Flatten") or _flattens(source) or any(map(_written_as_product, calls))):
        return False
    folding = _Folding(source)
    return any(sum(1 for value in values if folding.could_fold(value)) >= 2 for values in sizes)


def _flattens(source: Source) -> bool:
    """`torch.flatten(x, 1)`, `x.flatten(1)`, `x.view(x.size(0), -1)`, `x.reshape(n, -1)` (loosened:
    an argument that is not a number literal may be the one)."""
    for call in source.nodes(ast.Call):
        name = final_name(call.func)  # type: ignore[attr-defined]
        arguments = [*call.args, *(k.value for k in call.keywords)]  # type: ignore[attr-defined]
        if name == "flatten" and arguments:
            if any(_may_be(a, 1) for a in arguments[:2]):
                return True
        elif name in ("view", "reshape") and isinstance(call.func, ast.Attribute) and len(arguments) == 2:  # type: ignore[attr-defined]
            if _may_be(arguments[1], -1) or _keeps_batch_dimension(arguments[0]):
                return True
    return False


def _keeps_batch_dimension(expr: ast.AST) -> bool:
    """`x.size(0)`, `x.size()[0]`, `x.shape[0]`, `batch_size` (inventory.keeps_batch_dimension's shapes,
    loosened: any index or argument that is not a number literal may be 0)."""
    if isinstance(expr, ast.Call):
        return final_name(expr.func) == "size" and len(expr.args) == 1 and _may_be(expr.args[0], 0)
    if isinstance(expr, ast.Subscript):
        holder = expr.value
        if not _may_be(expr.slice, 0):
            return False
        return isinstance(holder, ast.Attribute) and holder.attr == "shape" or isinstance(holder, ast.Call) and final_name(holder.func) == "size"
    name = final_name(expr) if isinstance(expr, (ast.Name, ast.Attribute)) else None
    return name is not None and bool(BATCH_STRIDE.match(name))


def _may_be(expr: ast.AST, number: int) -> bool:
    """Could the analysis fold `expr` to `number`?  It folds literals only here (no environment)."""
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub) and isinstance(expr.operand, ast.Constant):
        return -expr.operand.value == number  # type: ignore[operator]
    if isinstance(expr, ast.Constant):
        return type(expr.value) in (int, float) and expr.value == number
    return True


def _written_as_product(call: ast.Call) -> bool:
    """`Linear(512 * 7 * 7, 4096)`, `Linear(in_features=c * s ** 2, ...)` (loosened: any product)."""
    first = next((k.value for k in call.keywords if k.arg == "in_features"), call.args[0] if call.args else None)
    return isinstance(first, ast.BinOp) and isinstance(first.op, ast.Mult)


class _Folding:
    """Could an expression fold to a number the way `analysis/constants.py` folds it: int and
    float literals, arithmetic, `int(...)`, and names whose value, given by some `name = ...`,
    `name: T = ...` or parameter default in the file, could fold itself?  (The analysis uses one
    such binding; any of them is a loosening.)"""

    def __init__(self, source: Source) -> None:
        self.bindings: dict[str, list[ast.AST]] = {}
        for node in source.nodes(ast.Assign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and node.value is not None:  # type: ignore[attr-defined]
                self.bindings.setdefault(targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
        for loop in source.nodes(ast.For):  # `for i in range(n_blocks)`: `i` folds where the count does
            iterable = loop.iter  # type: ignore[attr-defined]
            if isinstance(loop.target, ast.Name) and isinstance(iterable, ast.Call) and final_name(iterable.func) == "range" and iterable.args:  # type: ignore[attr-defined]
                self.bindings.setdefault(loop.target.id, []).append(iterable.args[-1])  # type: ignore[attr-defined]
        for arguments in source.nodes(ast.arguments):
            positional = [*arguments.posonlyargs, *arguments.args]  # type: ignore[attr-defined]
            defaults = arguments.defaults  # type: ignore[attr-defined]
            pairs = [*zip(positional[len(positional) - len(defaults):], defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]  # type: ignore[attr-defined]
            for argument, default in pairs:
                if default is not None:
                    self.bindings.setdefault(argument.arg, []).append(default)
        # The least set of names that fold, grown until it settles: a name defined only through
        # itself (`n = n // 2`) never folds.
        self.foldable: set[str] = set()
        for _ in range(12):
            grown = {n for n, values in self.bindings.items() if n not in self.foldable and any(map(self.could_fold, values))}
            if not grown:
                break
            self.foldable |= grown
        else:
            self.foldable = set(self.bindings)  # not settled: every bound name may fold (a loosening)

    def could_fold(self, expr: ast.AST) -> bool:
        return _could_fold(expr, self.foldable)


def _could_fold(expr: ast.AST, foldable: Optional[set[str]]) -> bool:
    """`foldable`: the names that fold; None: suppose every name does."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            if foldable is not None and node.id != "int" and node.id not in foldable:
                return False
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id == "int"):
                return False
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float):
                return False
        elif not isinstance(node, _ARITHMETIC):
            return False
    return True
