"""Calls that build a model: a call whose result the scope then treats as an nn.Module.

`model = net(pretrained=True)` followed by `model.eval()` (ResNeSt's test looping over its model
factories, `net = getattr(module, name)`): the callee's name looks like a model, but what it hands
back gets a method only an nn.Module has, so the call made (or loaded) a model; it ran none.  A
model's forward hands back tensors, which have no `.eval()`.

Evidence, per scope (a function's own code, or the module's): `X = call(...)` (also through methods
that hand the module back, `call(...).cuda()`) is the only binding of the name `X` in the scope (not
a parameter, not declared `global` / `nonlocal`, bound by no other statement), and the scope calls
one of `X`'s nn.Module-only methods (`MODULE_ONLY_METHODS`), also chained onto the call
(`X = net(pretrained=True).eval()`).  The fact is about the call, not
about its callee: a rule that guesses from a name that a call runs a model asks it
(evaluation.is_model_call) and takes the call for a construction instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.bindings import SCOPES, bound_by, erring_names
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods of an nn.Module that neither a tensor nor a forward's usual outputs (tuples, dicts of
# tensors, `ModelOutput`s) have: the object they are called on is a module.
MODULE_ONLY_METHODS = frozenset({"eval", "load_state_dict", "parameters", "named_parameters", "state_dict", "named_modules"})


def builds_model(call: cst.Call, ctx: "Context") -> bool:
    """Is `call` the value of the one binding of a name that the scope then uses as a module?"""
    scope = ctx.function_node or ctx.module
    return id(call) in ctx.memo(("built models", id(scope)), lambda: _building_calls(scope))  # type: ignore[operator]


def _building_calls(scope: cst.CSTNode) -> frozenset[int]:
    body = scope.body if type(scope) is cst.FunctionDef else scope  # type: ignore[attr-defined]
    bindings: dict[str, int] = {}
    candidates: dict[str, cst.Call] = {}
    used_as_module: set[str] = set()
    if type(scope) is cst.FunctionDef:
        for param in code_descendants(scope.params):  # type: ignore[attr-defined]
            if type(param) is cst.Param:
                bindings[param.name.value] = 2  # type: ignore[attr-defined]  # (a parameter: bound by the caller)
    for node in code_descendants(body, skip=SCOPES):
        kind = type(node)
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in MODULE_ONLY_METHODS and type(func.value) is cst.Name:
                used_as_module.add(func.value.value)  # type: ignore[attr-defined]
            continue
        targets = bound_by(node, parameters=False, declarations=True)
        if not targets or kind is cst.CompFor:
            continue
        for target in targets:
            for name in erring_names(target):
                bindings[name] = bindings.get(name, 0) + 1
        if kind is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
            name = node.targets[0].target.value  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in tables.MODULE_RETURNING:  # type: ignore[attr-defined]
                if value.func.attr.value in MODULE_ONLY_METHODS:  # type: ignore[attr-defined]
                    used_as_module.add(name)  # `model = net(pretrained=True).eval()`
                value = value.func.value  # type: ignore[attr-defined]
            if type(value) is cst.Call:
                candidates[name] = value
    return frozenset(id(call) for name, call in candidates.items() if bindings.get(name) == 1 and name in used_as_module)
