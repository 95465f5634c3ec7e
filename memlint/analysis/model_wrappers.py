"""Calls that run a model they are handed: `nn.parallel.data_parallel(netG, inputs, gpus)`, and
objects built around a model (`elbo = SVI(model, likelihood=...)`) whose call runs the model.

A class instantiated with the model as its first argument and then called on data
(semi-supervised-pytorch's `SVI`, a variational bound that runs `self.model(x)` in its forward)
runs that model as `model(x)` would.  ML002 asks it after `model.eval()`: `-elbo(x)` in the
validation loop is the model's evaluation.  Only a name with one kind of binding in its scope
counts, every binding building the wrapper around the same model; anything else (a loop target,
a rebinding to another value) leaves the question unanswered, and the rule silent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import exact_names_bound_by, target_names
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Classes that take a model and, called, do not run it on data (or are not called at all).
_NOT_RUNNING_PACKAGES = ("torch.optim", "torch.utils", "torch.cuda", "torch.amp")

# torch functions that run the module given as their first argument on the inputs that follow.
_MODULE_RUNNING_FUNCTIONS = frozenset({"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"})
# The body of `data_parallel` written out (wavenet_vocoder's `data_parallel_workaround`): a helper
# that calls both replicates the module it is handed and runs the replicas (delegation.py).
REPLICATING_FUNCTIONS = frozenset({"torch.nn.parallel.replicate", "torch.nn.parallel.replicate.replicate"})
REPLICA_APPLYING_FUNCTIONS = frozenset({"torch.nn.parallel.parallel_apply", "torch.nn.parallel.parallel_apply.parallel_apply"})


def module_run_by_function(call: cst.Call, ctx: "Context") -> Optional[cst.BaseExpression]:
    """The module a torch function runs (`nn.parallel.data_parallel(netG, inputs, gpus)` -> `netG`),
    when the call hands it one and its inputs; None for any other call."""
    func = call.func
    final = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None  # type: ignore[union-attr]
    if final != "data_parallel":  # (cheap first: the name)
        return None
    if ctx.resolve(func) not in _MODULE_RUNNING_FUNCTIONS:
        return None
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    if len(positional) < 2 or type(positional[0].value) not in (cst.Name, cst.Attribute):
        return None
    return positional[0].value


def wraps_model(name: str, receiver: str, ctx: "Context") -> bool:
    """Is `name`, where the traversal is, an object built as `Cls(receiver, ...)` in every binding
    of its scope (the enclosing function when it binds the name, else the module)?"""
    scope: cst.CSTNode = ctx.module
    function = ctx.function_node
    if function is not None and not ctx.binds_at_module_level(name):
        scope = function
    key = ("model-wrapper", id(scope), name, receiver)
    return ctx.memo(key, lambda: _built_around(scope, name, receiver, ctx))  # type: ignore[return-value]


def _built_around(scope: cst.CSTNode, name: str, receiver: str, ctx: "Context") -> bool:
    skip = (cst.ClassDef, cst.Lambda) if type(scope) is cst.FunctionDef else (cst.FunctionDef, cst.ClassDef, cst.Lambda)
    found = False
    for node in code_descendants(scope, skip=skip):
        kind = type(node)
        if kind is cst.Assign:
            if not any(name in target_names(target.target) for target in node.targets):  # type: ignore[attr-defined]
                continue
            if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:  # type: ignore[attr-defined]
                return False  # `elbo, other = ...`: cannot tell which part is the wrapper
            if not _wrapper_call(node.value, receiver, ctx):  # type: ignore[attr-defined]
                return False
            found = True
        elif name in exact_names_bound_by(node, parameters=True):
            return False  # bound otherwise
    return found


def _wrapper_call(value: cst.BaseExpression, receiver: str, ctx: "Context") -> bool:
    """`SVI(model, likelihood=...)`: a class (by its name) fed the model as first positional argument."""
    if type(value) is not cst.Call:
        return False
    func = value.func
    final: Optional[str] = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None  # type: ignore[union-attr]
    if final is None or not final[:1].isupper():
        return False  # (a class by its name, CapWords or an acronym: `SVI`)
    qualified = ctx.resolve(func) or ""
    if qualified.startswith(_NOT_RUNNING_PACKAGES):
        return False
    positional = [arg for arg in value.args if arg.keyword is None and not arg.star]
    if not positional:
        return False
    first = positional[0].value
    return "".join(ctx.module.code_for_node(first).split()) == receiver
