"""What a kept history costs, and how its fix keeps the numbers: facts of the semantic model read by
ML001's message and fix, each on its evidence.

- **the graph's fate** (`graph_fate`): "backward" when backward runs every step, so each step's graph
  stays on the host after its activations are freed (`loop_work.trains_kept_values`: the loop calls
  backward on what it keeps, in its own body or through the project's helpers; a per-batch function
  the framework backpropagates, or that calls backward itself: `ctx.model.calls_backward`);
  "no-backward" when nothing backpropagates it (evaluation with gradients on: activations stay on
  the device); "per-step" for a per-batch helper whose backward, if any, runs elsewhere;
- **the keeping method** (`keeping_method`): `.detach()` keeps a tensor (every later tensor use still
  works) and adds no device sync; `.item()` gives a Python number, for a 0-d value (`KeptHistory.scalar`)
  whose later uses need a host number (`Use.HOST`), or where the loop copies a value to the host every
  iteration anyway (`loop_work.syncs_every_iteration`), or where nothing runs on an accelerator
  (`ctx.model.device.accelerator`): there is no sync to add.  Never `.item()` for a later tensor use,
  a value of more than one element, or `extend` (its elements must stay tensors);
- **related places** (`related_places`): the loop whose iterations are kept, and the accumulator's
  first read after it (`uses.first_read_after`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.kept_histories import KeptHistory
from memlint.analysis.loop_work import syncs_every_iteration, trains_kept_values
from memlint.analysis.uses import Use, first_read_after

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def graph_fate(kept: KeptHistory, ctx: "Context") -> str:
    """"backward", "no-backward" or "per-step" (the module docstring's first item)."""
    if kept.source is not None:
        return "no-backward"
    if kept.loop is not None:
        return "backward" if trains_kept_values(kept.loop, kept.values, ctx) else "no-backward"
    function = ctx.function_node
    if kept.per_step.backpropagated or (function is not None and ctx.model.calls_backward(function)):  # type: ignore[union-attr]
        return "backward"
    return "per-step"


def keeping_method(kept: KeptHistory, uses: set[Use], ctx: "Context") -> str:
    """"item" or "detach" (the module docstring's second item)."""
    if Use.TENSOR in uses or not kept.scalar or kept.extend:
        return "detach"
    if Use.HOST in uses:
        return "item"
    if kept.loop is not None and syncs_every_iteration(kept.loop, ctx):
        return "item"
    return "detach" if ctx.model.device.accelerator else "item"  # (only there does `.item()` wait for the device)


def related_places(kept: KeptHistory, scope: cst.CSTNode) -> list[tuple[cst.CSTNode, str]]:
    """The loop whose iterations the accumulator keeps, and where the accumulator is first read after
    it (where a `.item()` value would do as well), for editors' related information."""
    loop = kept.loop
    if loop is None:
        return []
    header = loop.iter if isinstance(loop, cst.For) else loop.test
    places = [(header, "the loop: each iteration's graph stays reachable from the accumulator")]
    if kept.name is not None:
        read = first_read_after(scope, loop, kept.name)
        if read is not None:
            places.append((read, f"`{kept.name}` is read here, after the loop"))
    return places
