"""Which models an optimizer trains: the names whose parameters its `params` argument holds.

`Adam(model.parameters())`, `Adam(filter(lambda p: p.requires_grad, model.parameters()))` and
`Adam([{"params": model.encoder.parameters()}])` name the model in the argument itself. Scripts
also hand the parameters through a function of their own (`Adam(get_trainable_params(dalle))`
with `def get_trainable_params(model): return [p for p in model.parameters() if p.requires_grad]`):
the call's argument is the model when the function returns its parameter's parameters. Only the
file's module-level functions are followed, one level deep; anything else (a variable holding the
parameters, a function of another file) gives nothing, and rules stay silent about it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.call_edits import dotted
from memlint.analysis.walk import code_descendants

PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})
# Calls that return their receiver's module on another device or in another mode: `model.cuda().parameters()`.
_MOVES = frozenset({"cuda", "to", "cpu", "train"})


def strip_moves(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`model.cuda().train()` -> `model`: the module a chain of moves starts from."""
    while isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _MOVES:
        expr = expr.func.value
    return expr


def optimized_models(params: cst.BaseExpression, module: Optional[cst.Module] = None) -> set[str]:
    """The dotted names (`model`, `self.model`) whose parameters `params` holds; with the file's
    `module`, also through a call of one of its functions that returns its argument's parameters."""
    helpers = _parameter_helpers(module) if module is not None else {}
    found = set()
    for node in [params, *code_descendants(params)]:
        if not isinstance(node, cst.Call):
            continue
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in PARAMETER_METHODS:
            name = dotted(strip_moves(func.value))
            if name:
                found.add(name)
        elif isinstance(func, cst.Name) and func.value in helpers:
            argument = _argument(node, *helpers[func.value])
            name = dotted(strip_moves(argument)) if argument is not None else ""
            if name:
                found.add(name)
    return found


def _parameter_helpers(module: cst.Module) -> dict[str, tuple[int, str]]:
    """Module-level functions that return their parameter's parameters: name -> (position, parameter)."""
    helpers: dict[str, tuple[int, str]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef):
            continue
        positional = [param.name.value for param in (*statement.params.posonly_params, *statement.params.params)]
        for node in code_descendants(statement.body):
            if not isinstance(node, cst.Return) or node.value is None:
                continue
            returned = optimized_models(node.value)  # no module: one level deep
            named = next((name for name in positional if name in returned), None)
            if named is not None:
                helpers[statement.name.value] = (positional.index(named), named)
                break
    return helpers


def _argument(call: cst.Call, position: int, keyword: str) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == keyword:
            return arg.value
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    return positional[position].value if position < len(positional) else None
