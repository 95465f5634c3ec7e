"""Optimizer closures: callables that torch.optim's `optimizer.step(closure)` contract says reevaluate
the model and backpropagate ("a closure that reevaluates the model and returns the loss"; LBFGS
calls it several times per step and reads the gradients it leaves).

A function that hands a callable to an optimizer's `step` (directly, or wrapped in a local def that
calls it: deep-image-prior's `optimize()` steps LBFGS with `closure2`, which returns `closure()`) has
told the reader what that callable does: calling it elsewhere in the same function (the Adam
warm-up loop `optimizer.zero_grad(); closure(); optimizer.step()`) runs the model and a backward
pass, though its body is the caller's (often a notebook's).  A callable that is never handed to a
step is no evidence, whatever its name: `closure()` alone may do anything.

The step itself calls what it is handed: `optimizer.step(closure)` with `closure` a def of the
same function (LBFGS's usual shape, `def closure(): ...; loss.backward(); return loss` inside the
loop) runs that def's body, so the def's own work (a model run, a backward) is the loop's
(`handed_closure`).  Its body is read, not assumed: a closure that fits two scalars runs no model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import libcst as cst

from memlint.analysis.walk import code_descendants, dotted_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def optimizer_closures(function: cst.FunctionDef, ctx: "Context") -> frozenset[str]:
    """The names, local to `function`, of its optimizer closures: a parameter or a def of its own
    passed to an optimizer's `step(...)`, and the parameters such a local def calls."""
    return ctx.memo(("optimizer-closures", id(function)), lambda: _closures(function, ctx.model.steps_optimizer))  # type: ignore[return-value]


def calls_optimizer_closure(call: cst.Call, ctx: "Context") -> bool:
    """`closure()` in a loop of a function that hands that name to an optimizer's `step`: by
    torch.optim's contract the call runs the model and backpropagates (the Adam warm-up loop)."""
    function = ctx.function_node
    return (
        ctx.loop is not None
        and function is not None
        and type(call.func) is cst.Name
        and call.func.value in optimizer_closures(function, ctx)
    )


def handed_closure(call: cst.Call, ctx: "Context") -> tuple[cst.FunctionDef, ...]:
    """The defs, local to the function around `call`, that `call` may hand to an optimizer's
    `step` (`optimizer.step(closure)`, `step(closure=closure)`): torch.optim calls it on that step.
    Every def of the function so named (SMPLify defines a `closure` per fitting stage: which one
    the name holds is the askers' to agree on); none for any other call, or a callable that is no
    def of the function (a parameter: its body is the caller's)."""
    function = ctx.function_node
    func = call.func
    if function is None or type(func) is not cst.Attribute or func.attr.value != "step" or len(call.args) != 1:
        return ()
    argument = call.args[0]
    if type(argument.value) is not cst.Name or (argument.keyword is not None and argument.keyword.value != "closure"):
        return ()
    name = argument.value.value
    if name not in optimizer_closures(function, ctx):
        return ()
    local_defs = ctx.memo(("closure-defs", id(function)), lambda: _local_defs(function))
    return local_defs.get(name, ())  # type: ignore[attr-defined]


def _local_defs(function: cst.FunctionDef) -> dict[str, tuple[cst.FunctionDef, ...]]:
    found: dict[str, tuple[cst.FunctionDef, ...]] = {}
    for node in code_descendants(function.body):
        if type(node) is cst.FunctionDef:
            found[node.name.value] = (*found.get(node.name.value, ()), node)
    return found


def _closures(function: cst.FunctionDef, steps_optimizer: Callable[[cst.Call], bool]) -> frozenset[str]:
    nodes = list(code_descendants(function.body))
    local_defs = {n.name.value: n for n in nodes if type(n) is cst.FunctionDef}
    parameters = {p.name.value for p in (*function.params.params, *function.params.kwonly_params, *function.params.posonly_params)}
    found: set[str] = set()
    for node in nodes:
        if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value != "step":
            continue
        if dotted_name(node.func.value) is None or len(node.args) != 1:
            continue
        argument = node.args[0]
        if argument.keyword is not None and argument.keyword.value != "closure":
            continue
        if type(argument.value) is not cst.Name or not (argument.value.value in parameters or argument.value.value in local_defs):
            continue
        if steps_optimizer(node):  # (by its construction in the file, `lbfgs = optim.LBFGS(...)`, else by name; asked last: it may walk the module)
            found.add(argument.value.value)
    for name in list(found):
        wrapper = local_defs.get(name)
        if wrapper is None:
            continue
        for node in code_descendants(wrapper.body):  # `def closure2(): optimizer.zero_grad(); return closure()`
            value = node.value if type(node) is cst.Return else None  # (what it returns is the loss the step reads)
            if type(value) is cst.Call and type(value.func) is cst.Name and value.func.value in parameters:
                found.add(value.func.value)
    return frozenset(found)
