"""Which calls run a module, and which names the file treats as modules.

- **runs a module** (`runs_module(call, ctx)`): a model's forward (`model(x)`, `self.net(x)`: the
  model's `is_model_call`) or another method of a value the valuation knows is a module
  (`agent.get_action_and_value(obs)`, `policy.act(s)`), not its bookkeeping (`.parameters()`,
  `.to(device)`, `register_*`, `named_*`, `load_*`: `MODULE_BOOKKEEPING`), nor a name the imports
  resolve (a library's function).
- **a method of the class** (`runs_own_method(call, ctx)`): `self.m(...)` that is not taken for a
  module's run (`self.temperature_scale(logits)`): it may fit one scalar, and names no module a
  closure could run.
- **names a call may run a module through** (`run_receivers(func)`): `G(z)` -> ["G"], `self.G(z)`
  -> ["self.G", "self"], `policy.act(s)` -> ["policy.act", "policy"] (a module's own method runs it
  too), `state["model"].loss(sample)` -> its dict entry: which of them holds a module is known once
  the file is seen, by the names it gives a method only modules have (`MODULE_MARKERS`: `G.train()`,
  `state["model"].parameters()`).

Asked by ML017 (a training loop runs a model).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.evaluation import is_model_call
from memlint.analysis.values import Kind
from memlint.analysis.walk import held_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods only modules have (not tensors, not optimizers): a name they are called on is a module.
MODULE_MARKERS = frozenset({"train", "eval", "parameters", "named_parameters", "modules", "named_modules", "children", "apply"})
# Module methods that run no forward pass.
MODULE_BOOKKEEPING = frozenset(
    {"parameters", "buffers", "children", "modules", "state_dict", "load_state_dict", "train", "eval", "zero_grad",
     "to", "cuda", "cpu", "float", "double", "half", "bfloat16", "requires_grad_", "apply", "share_memory", "type"}
)  # fmt: skip


def runs_module(call: cst.Call, ctx: "Context") -> bool:
    """A model's forward (`model(x)`, `self.net(x)`) or another method of a module
    (`agent.get_action_and_value(obs)`, `policy.act(s)`), not its bookkeeping (`.parameters()`)."""
    if is_model_call(call, ctx):
        return True
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value not in MODULE_BOOKKEEPING
        and not func.attr.value.startswith(("register_", "named_", "load_"))
        and ctx.resolve(func) is None
        and ctx.value_of(func.value).kind is Kind.MODULE
    )


def runs_own_method(call: cst.Call, ctx: "Context") -> bool:
    """`self.m(...)` that the model does not take for a module's run (`is_model_call`): a method of
    the class (`self.temperature_scale(logits)`), which may fit one scalar."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name
        and func.value.value == "self"
        and not is_model_call(call, ctx)
    )


def run_receivers(func: cst.BaseExpression) -> list[str]:
    """The names a call may run a module through: `G(z)` -> ["G"], `self.G(z)` -> ["self.G", "self"],
    `policy.act(s)` -> ["policy.act", "policy"] (a module's own method runs it too)."""
    whole = held_name(func)
    if isinstance(func, cst.Attribute) and func.attr.value not in MODULE_BOOKKEEPING:
        receiver = held_name(func.value)  # (`state["model"].loss(sample)`: a model kept in a dict)
        return [name for name in (whole, receiver) if name is not None]
    return [whole] if isinstance(func, cst.Name) else []
