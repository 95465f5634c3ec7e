"""Accumulating statements: which statement or call keeps which values in which accumulator.

A fact of the semantic model read by ML001 (values with autograd history kept across iterations).
It names the shapes of `accumulation` at the statement that writes them, so that a rule asks one
question per statement ("does this keep something, and in what?") instead of matching shapes itself:

- `total += loss`, `total -= loss`; `losses += [loss]` grows a list (the display's elements are kept);
- `total = total + loss`, `s = 0.98 * s + 0.02 * loss`, `total = torch.add(total, loss)`, a running
  maximum `worst = torch.max(worst, loss)`,
  `outs = torch.cat([outs, model(x)])`, either as a branch of a conditional expression that starts
  the accumulator (`avg = loss if avg is None else 0.9 * avg + 0.1 * loss`: the starting branch's
  values are kept too);
- `losses[i] = loss` with `i` bound by the enclosing loop: a slot per iteration;
- `losses.append(loss)`, `history.extend([loss])`, `total.add_(loss)`;
- `meter.update(loss, n)`, `metric_logger.update(loss=loss)` on a running meter (`ctx.model.is_meter`:
  a class whose `update` adds the value to its own state), when the value is seen to carry history
  and the call repeats (in a loop, or in a function run once per batch that may build a graph).

The evidence is the statement's own shape, resolved through the file's imports (`accumulation`);
whether the accumulator lasts, and whether the kept values carry history, are asked later
(`kept_histories`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import accumulation
from memlint.analysis.meters import METER_METHODS
from memlint.analysis.roles import graph_building_per_batch_function

if TYPE_CHECKING:
    from memlint.analysis.context import Context


@dataclass(frozen=True)
class Accumulating:
    """What one statement or call keeps, and in what."""

    accumulator: cst.BaseExpression  # the target (`total`, `stats["loss"]`, `self.losses`, the meter)
    values: list  # the values kept, as written (`0.02 * loss` gives `loss`; a display its elements)
    container: bool  # kept as elements (a list, a slot, a meter), not summed into one value
    may_start_empty: bool = False  # a rebinding accumulation: its first binding may be an empty start
    meter: bool = False  # a running meter's `update`: the values live in the meter object
    extend: bool = False  # `extend(...)`: the fix must keep the elements tensors
    extremum: bool = False  # a running maximum or minimum (`worst = torch.max(worst, loss)`)


def accumulated_by(node: cst.CSTNode, ctx: "Context") -> Optional[Accumulating]:
    """The accumulation `node` (an AugAssign, an Assign or a Call) writes, if it is one."""
    if type(node) is cst.AugAssign:
        return _augmented(node)  # type: ignore[arg-type]
    if type(node) is cst.Assign:
        return _assigned(node, ctx)  # type: ignore[arg-type]
    if type(node) is cst.Call:
        return _called(node, ctx)  # type: ignore[arg-type]
    return None


def _augmented(node: cst.AugAssign) -> Optional[Accumulating]:
    if not isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
        return None
    kept, container = accumulation.added_values([node.value])
    return Accumulating(node.target, kept, container)


def _assigned(node: cst.Assign, ctx: "Context") -> Optional[Accumulating]:
    if len(node.targets) != 1 or not isinstance(node.targets[0].target, (cst.Name, cst.Subscript, cst.Attribute)):
        return None
    target = node.targets[0].target
    branches = accumulation.branches(node.value)
    for branch in branches:
        # the other branch starts the accumulator (`loss if total is None else total + loss`): what
        # it keeps stays too, so the fix detaches it as well
        start = [v for b in branches if b is not branch for v in accumulation.kept_values(b)]
        others = accumulation.running_sum_terms(branch, target) or accumulation.added_parts(branch, target, ctx)
        if others:
            kept, container = accumulation.added_values(others)
            extremum = accumulation.running_extremum(branch, ctx)
            return Accumulating(target, kept + start, container, may_start_empty=True, extremum=extremum)
        others = accumulation.concatenated_parts(branch, target, ctx)
        if others:
            return Accumulating(target, others + start, True, may_start_empty=True)
    if accumulation.stored_at_loop_index(target, ctx.loop):  # `losses[i] = loss`: a slot per iteration
        return Accumulating(target, accumulation.kept_values(node.value), True, may_start_empty=True)
    return None


def _called(node: cst.Call, ctx: "Context") -> Optional[Accumulating]:
    func = node.func
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    if method in METER_METHODS and node.args:
        values = [node.args[0].value] if node.args[0].keyword is None else [a.value for a in node.args if a.keyword is not None]
        repeats = ctx.in_loop or graph_building_per_batch_function(ctx) is not None
        if repeats and any(ctx.holds_graph(v) is True for v in values) and ctx.model.is_meter(func.value):
            return Accumulating(func.value, values, True, meter=True)
        return None
    if method in ("append", "extend") and len(node.args) == 1:
        return Accumulating(func.value, accumulation.kept_values(node.args[0].value), True, extend=method == "extend")
    if method in accumulation.IN_PLACE_SUMS and len(node.args) == 1 and node.args[0].keyword is None \
            and isinstance(func.value, (cst.Name, cst.Attribute)):
        return Accumulating(func.value, [node.args[0].value], False)  # `total.add_(loss)`
    return None
