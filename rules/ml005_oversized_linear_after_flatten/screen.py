"""ML005's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

A `Linear(...)` with two arguments that could fold to numbers: the rule needs both sizes (also
through a counted loop's conditional assignments and its loop variable).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping, Optional

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
    if not sizes:
        return False
    folding = _Folding(source)
    return any(sum(1 for value in values if folding.could_fold(value)) >= 2 for values in sizes)


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
