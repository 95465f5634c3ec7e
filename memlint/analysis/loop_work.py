"""What a loop does with the values it computes: trains on them, unrolls a recurrence through them,
or copies something to the host every iteration.  Facts of the semantic model about one loop, each
with its evidence; they build on the backward fact (`ctx.model`: `calls_backward`,
`backward_in_own_statements`, `backpropagated_names`) and the valuation (`ctx.holds_graph`).

- **trains the kept values** (`trains_kept_values`): the loop calls backward in its own body, or on
  a name the kept values mention; or it holds a nested loop that trains and the kept values are not
  a fresh forward pass of its own body (`epoch_costs.append(avg_cost)`, a total of what the nested
  loop backpropagated).  Else what is kept is an evaluation forward with gradients on.
- **unrolls a recurrence** (`unrolls_a_recurrence`): the loop calls no backward and feeds a value
  with history back into itself, a state that was not started as a number (`h = cell(x[t], h)`,
  `H = Z * H + (1 - Z) * H_tilda`): each iteration is one step of the same forward pass over time.
- **combines given terms** (`combines_given_terms`): the loop walks what its function was handed
  (`for out in outputs`, `zip(self.loss_fns, y_pred)`) and runs no model of its own, no backward and
  no optimizer step: it adds up one forward pass's terms (a loss per head, per scale, per task) into
  a result for the caller, who decides what happens to its history.
- **syncs every iteration** (`syncs_every_iteration`): the loop's own body copies a tensor to the
  host (`.item()`, `.cpu()`, `.tolist()`, `.numpy()`, `float(t)`), so one more `.item()` costs no
  extra device sync.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.iteration import iterates_batches, names_in, own_statements
from memlint.analysis.naming import named_like_model
from memlint.analysis.values import Kind, number_like
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_SYNC_METHODS = frozenset({"item", "tolist", "numpy", "cpu"})
_SYNC_BUILTINS = frozenset({"float", "int", "bool"})


def trains_kept_values(loop: cst.CSTNode, kept: list, ctx: "Context") -> bool:
    """Does `loop` run backward every step on what `kept` (the values an accumulation keeps) comes
    from?  See the module's docstring for the evidence."""
    model = ctx.model
    if model.backward_in_own_statements(loop) or not model.backpropagated_names(loop).isdisjoint(_names_in(kept)):
        return True  # backward in the loop's own body, or on a value the accumulation keeps
    # a total of the losses a nested loop backpropagated (`epoch_costs.append(avg_cost)`), not an
    # evaluation forward in an epoch loop whose nested batch loop trains
    return model.calls_backward(loop) and not _fresh_forward(kept, loop, ctx)


def _names_in(kept: list) -> set[str]:
    return {n.value for v in kept for n in (v, *code_descendants(v)) if type(n) is cst.Name}


def _fresh_forward(kept: list, loop: cst.CSTNode, ctx: "Context") -> bool:
    """Is a kept value computed by a forward pass in the loop's own body (`model(x)`, a loss of it),
    rather than carried over from a nested loop that trains?"""
    names = _names_in(kept)
    expressions = list(kept)
    for node in own_statements(loop):  # type: ignore[arg-type]
        if type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value in names for t in node.targets):
            expressions.append(node.value)
    for expr in expressions:
        for node in (expr, *code_descendants(expr)):
            if type(node) is cst.Call and ctx.holds_graph(node) is True and not (
                type(node.func) is cst.Attribute and ctx.holds_graph(node.func.value) is True
            ):
                return True  # a call that starts history: a model, a loss (not a method of a tensor)
    return False


def unrolls_a_recurrence(loop: cst.CSTNode, ctx: "Context", accumulator: Optional[str]) -> bool:
    """`h = cell(x[t], h)`, `H = Z * H + (1 - Z) * H_tilda`: the loop, which calls no backward, feeds
    a value with history back into itself (a state not started as a number before the loop), so each
    iteration is one step of the same forward pass over time, not another batch; what it collects is
    that pass's output.  `accumulator` (the collecting name) is not taken for the state."""
    if ctx.model.calls_backward(loop):
        return False
    scope = ctx.function_node or ctx.module
    for node in own_statements(loop):  # type: ignore[arg-type]
        if type(node) is not cst.Assign:
            continue
        bound = {n.value for t in node.targets for n in (t.target, *code_descendants(t.target)) if type(n) is cst.Name}
        bound.discard(accumulator)  # type: ignore[arg-type]
        fed_back = [n.value for n in code_descendants(node.value) if type(n) is cst.Name and n.value in bound]
        if not fed_back or ctx.holds_graph(node.value) is not True:
            continue
        if any(not _starts_as_number(_start_before(scope, loop, name)) for name in fed_back):
            return True
    return False


def _start_before(scope: cst.CSTNode, loop: cst.CSTNode, name: str) -> Optional[cst.CSTNode]:
    """The value `name` was last bound to before `loop` in `scope` (its parameter, a tuple, ...)."""
    found: Optional[cst.CSTNode] = None
    if isinstance(scope, cst.FunctionDef):
        params = scope.params
        if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
            found = scope
    for node in code_descendants(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if node is loop:
            break
        if type(node) is cst.Assign and any(
            type(n) is cst.Name and n.value == name for t in node.targets for n in (t.target, *code_descendants(t.target))
        ):
            found = node.value if len(node.targets) == 1 and type(node.targets[0].target) is cst.Name else node
    return found


def _starts_as_number(start: Optional[cst.CSTNode]) -> bool:
    """`0`, `0.0`, `None`, `[]`, `torch.tensor(0.0)`: how a running statistic starts (not a state)."""
    if start is None:
        return True  # not bound before the loop in sight: not a state carried into it
    if type(start) in (cst.Integer, cst.Float) or (type(start) is cst.Name and start.value == "None"):  # type: ignore[union-attr]
        return True
    if type(start) in (cst.List, cst.Dict, cst.Tuple) and not getattr(start, "elements", ()):
        return True
    if type(start) is cst.Call:
        func = start.func  # type: ignore[union-attr]
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else ""
        return number_like(name, start)  # type: ignore[arg-type]
    return False


def combines_given_terms(loop: cst.CSTNode, function: cst.FunctionDef, ctx: "Context") -> bool:
    """Does `loop` add up terms of what `function` was handed, running no model of its own?  See the
    module's docstring.  A call counts as running a model when its callee is named like one
    (`model`, `self.encoder`) or is a module that is not a loss (`self.fc`, assigned a layer)."""
    if type(loop) is not cst.For or iterates_batches(loop) or ctx.model.calls_backward(loop):  # type: ignore[arg-type]
        return False
    params = function.params
    handed = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)} - {"self", "cls"}
    if handed.isdisjoint(names_in(loop.iter)):  # type: ignore[attr-defined]
        return False  # the items are fetched or built here (`range(n)`, `next(it)`), not given
    for node in code_descendants(loop.body):  # type: ignore[attr-defined]
        if type(node) is not cst.Call:
            continue
        func = node.func
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None  # type: ignore[attr-defined]
        if name is None or named_like_model(name) or name == "step":
            return False
        value = ctx.value_of(func)
        if value.kind is Kind.MODULE and not value.is_loss:
            return False
    return True


def syncs_every_iteration(loop: cst.CSTNode, ctx: "Context") -> bool:
    """Does the loop's own body already copy a value to the host on every iteration (`.item()`,
    `.cpu()`, `.tolist()`, `.numpy()`, `float(t)` of a tensor)?"""
    for node in own_statements(loop):  # type: ignore[arg-type]
        if type(node) is not cst.Call:
            continue
        func = node.func
        if type(func) is cst.Attribute and func.attr.value in _SYNC_METHODS and not node.args:
            return True
        if type(func) is cst.Name and func.value in _SYNC_BUILTINS and ctx.is_builtin(func.value) and node.args:
            if ctx.value_of(node.args[0].value).kind is Kind.TENSOR:
                return True
    return False
