"""What happens to a kept history once its scope is seen: the accumulator's later uses, and whether the
history is kept on purpose.

A fact of the semantic model read by ML001, asked of a `kept_histories.KeptHistory` when the function
(or module) that holds it has been traversed, since the evidence lies after the accumulation:

- **the uses** (`accumulator_uses`): of the comprehension's result, of `self.<attr>` across the class,
  or of the accumulator's name in its scope (`uses.classify_*`), less the accumulations themselves
  and the uses after a rebinding to a detached reduction of itself (`rebinding`); a returned
  accumulator is also used as its callers use the result (`uses.classify_caller_uses`); one stored on
  `self.<attr>` (`self.loss = loss`) is backpropagated where a method of the class backpropagates
  that attribute (`def backward(self): self.loss.backward()`: `uses.stored_on_self`);
- **the objective** (`backpropagated_slots`): a `Use.GRADIENT` means the accumulated value is
  backpropagated; but of a list written at a slot that moves with the loop the code may read back
  only fixed slots (`slots.one_slot_objective`): only those are the objective;
- **kept on purpose** (`kept_for_the_caller`): a tensor result built for the caller (per-image
  losses, features) outside any loop over batches; one step's loss terms combined and returned
  (`loop_work.combines_given_terms`); an accumulator emptied every iteration or every optimizer step
  (`accumulation.reset_per_window`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import accumulation
from memlint.analysis.iteration import iterates_layers
from memlint.analysis.kept_histories import KeptHistory, script_never_backpropagates
from memlint.analysis.loop_work import combines_given_terms
from memlint.analysis.rebinding import after_detaching_rebinding
from memlint.analysis.slots import one_slot_objective
from memlint.analysis.uses import Use, classify_attribute_uses, classify_caller_uses, classify_expression, classify_uses, returns_name, stored_on_self

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def accumulator_uses(kept: KeptHistory, siblings: list, scope: cst.CSTNode, ctx: "Context") -> set[Use]:
    """How the accumulator of `kept` is used in `scope`, apart from the accumulations in `siblings`
    (every kept history of the scope)."""
    if kept.source is not None:
        return classify_expression(scope, kept.node, ctx)
    if kept.attribute is not None:
        holder = kept.class_node if kept.class_node is not None else scope
        same = [c.node for c in siblings if c.attribute == kept.attribute]
        return classify_attribute_uses(holder, kept.attribute, ctx, skip=same, is_container=kept.container)
    if kept.name is None:
        return set()
    same = _same_name(kept, siblings)
    # after `log_probs = torch.cat(log_probs).detach()` the name holds another value, as does a name
    # it flows into after `returns = torch.cat(returns).detach()`
    uses = classify_uses(
        scope, kept.name, ctx, skip=same, is_container=kept.container,
        rebound=lambda name: after_detaching_rebinding(scope, name, kept.loop),
    )
    if Use.ESCAPES in uses and isinstance(scope, cst.FunctionDef) and returns_name(scope, kept.name):
        # `return losses`, then a later notebook cell runs `[l.item() for l in losses]`: what the
        # callers do with the result decides between `.item()` and `.detach()`.
        uses |= classify_caller_uses(ctx.module, scope.name.value, ctx)
    if Use.ESCAPES in uses and kept.class_node is not None:
        uses |= _backpropagated_on_self(kept, scope, ctx)
    return uses


def _backpropagated_on_self(kept: KeptHistory, scope: cst.CSTNode, ctx: "Context") -> set[Use]:
    """{Use.GRADIENT} when the accumulator is stored on `self.<attr>` and a method of the class
    backpropagates that attribute: Attention-Gated-Networks' `compute_loss` sums one forward's
    deep-supervision terms into `loss`, `self.loss = loss`, and `backward()` runs `self.loss.backward()`.
    The sum is the objective.  The attribute's other uses stay out of sight (the store escapes)."""
    for attribute in stored_on_self(scope, kept.name):  # type: ignore[arg-type]
        if Use.GRADIENT in classify_attribute_uses(kept.class_node, attribute, ctx):  # type: ignore[arg-type]
            return {Use.GRADIENT}
    return set()


def backpropagated_slots(kept: KeptHistory, siblings: list, scope: cst.CSTNode) -> Optional[tuple[str, ...]]:
    """For an accumulator that reaches backward: the fixed slots the code reads back when it writes a
    slot that moves with the loop (`losses_q[k + 1] += loss_q`, then `losses_q[-1].backward()`), or
    None when the accumulated value itself is the objective."""
    return one_slot_objective(scope, kept.accumulator, kept.loop, _same_name(kept, siblings))


def _same_name(kept: KeptHistory, siblings: list) -> list:
    """The statements of the scope that keep a history in the same name (`losses.append` twice)."""
    return [c.node for c in siblings if c.name == kept.name]


def escapes(kept: KeptHistory, uses: set[Use]) -> bool:
    """Later uses are out of sight: returned, passed on, or stored on an object."""
    return Use.ESCAPES in uses or kept.escapes_by_name


def kept_for_the_caller(kept: KeptHistory, uses: set[Use], scope: cst.CSTNode, ctx: "Context") -> bool:
    """Is the history kept on purpose, or released in time (the module docstring's last item)?"""
    escaped = escapes(kept, uses)
    if escaped and (Use.TENSOR in uses or kept.in_module_class) and not kept.over_batches \
            and not (kept.loop is not None and iterates_layers(kept.loop) and script_never_backpropagates(scope, ctx)):
        return True  # builds a tensor result for the caller (per-image losses, features): a computation
    if escaped and isinstance(scope, cst.FunctionDef) and kept.loop is not None and kept.name is not None \
            and returns_name(scope, kept.name) and combines_given_terms(kept.loop, scope, ctx):
        return True  # `for out in outputs: loss += criterion(out, y)`, returned: one step's loss terms, for the caller
    if kept.loop is not None and kept.name is not None and accumulation.reset_per_window(kept.loop, kept.name):
        return True  # emptied every iteration, or every optimizer step (a gradient-accumulation window)
    return False
