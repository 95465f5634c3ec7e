"""Kept histories: values with autograd history kept beyond the step that made them.

A fact of the semantic model read by ML001.  An accumulation (`accumulating_statements`) or a
comprehension over a data loader keeps a history when all of these hold, each on its evidence:

- **the kept values carry history**: `ctx.holds_graph` (the valuation: a model, module or loss
  called under grad, a helper of the project that returns one, arithmetic and fields of those);
- **it repeats**: it is in a loop, or in a function run once per batch that may build a graph
  (`roles.graph_building_per_batch_function`) into an accumulator that outlives the call
  (`accumulation.outlives_the_call`: `self.<attr>`, a module-level name);
- **the loop steps through training, not through a forward pass**: not a loop over a model's layers
  (`iteration.iterates_layers`; except in module-level code of a file that calls backward nowhere,
  `script_never_backpropagates`), not a recurrent cell unrolled over a sequence
  (`loop_work.unrolls_a_recurrence`), not in a function named like a forward pass
  (`roles.in_forward_pass`);
- **grad is on** where a sum is taken (`+=` under `no_grad` builds no graph around the old value;
  an append keeps a value made earlier, so it is judged whatever the mode);
- **the accumulator lasts across iterations**: not bound afresh in the loop (unless only started
  there, `accumulation.only_started_in_loop`), not bound afresh for each batch of an outer loop
  over batches (`accumulation.bound_in_outer_batch_loop`) unless the inner loop runs backward and
  an optimizer step every turn (`accumulation.steps_between_bindings`), and started as a running statistic
  (`accumulation.started_as_statistic`: a number, an empty container; a tensor updated by sums is
  a computation).

Whether the kept value is the objective, and how the accumulator is used afterwards, is decided
once the whole scope is seen (`kept_history_uses`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Union

import libcst as cst

from memlint.analysis import GradMode, accumulation
from memlint.analysis.accumulating_statements import Accumulating
from memlint.analysis.iteration import iterates_batches, iterates_layers
from memlint.analysis.loop_work import unrolls_a_recurrence
from memlint.analysis.roles import PerBatch, enclosing_class, graph_building_per_batch_function, in_forward_pass

if TYPE_CHECKING:
    from memlint.analysis.context import Context


@dataclass
class KeptHistory:
    """One place where values with history are kept across iterations (or per-batch calls)."""

    node: cst.CSTNode  # what is reported: the accumulating statement, call or comprehension
    values: list  # the graph-carrying values the fix detaches (`loss` in `0.02 * loss`)
    shown: cst.BaseExpression  # the accumulated value as written, for the message
    container: bool
    accumulator: Optional[cst.BaseExpression] = None  # None for a comprehension
    name: Optional[str] = None  # the accumulator's variable, when it is one (or a subscript of one)
    attribute: Optional[str] = None  # `self.<attribute>` (or a subscript of it): lives as long as the object
    loop: Optional[Union[cst.For, cst.While]] = None  # None in a per-batch function or a comprehension
    per_step: Optional[PerBatch] = None  # the per-batch function the accumulation runs in, when there is no loop
    in_module_class: bool = False  # in a method of an nn.Module subclass: model code
    class_node: Optional[cst.ClassDef] = None
    extend: bool = False
    source: Optional[str] = None  # a comprehension's batch source (`val_loader`)
    meter: bool = False  # a running meter's `update`: the values live in the meter object
    scalar: bool = False  # every kept value is a 0-d tensor (`ctx.value_of(...).scalar`)

    @property
    def escapes_by_name(self) -> bool:
        """Stored on an object (`self.losses`, `trainer.history`): later uses are out of sight."""
        if self.source is not None:
            return False
        return self.meter or self.name is None or not isinstance(self.accumulator, (cst.Name, cst.Subscript))

    @property
    def over_batches(self) -> bool:
        """Repeats once per batch: a per-batch function, a comprehension over a loader, a loop over batches."""
        return self.per_step is not None or self.source is not None or iterates_batches(self.loop)


def kept_history(node: cst.CSTNode, kept: Accumulating, ctx: "Context") -> Optional[KeptHistory]:
    """The history `kept` (written by `node`, at the traversal's position) keeps across iterations,
    or None when one of the module docstring's conditions fails."""
    found = [v for v in kept.values if ctx.holds_graph(v) is True]
    if not found:
        return None
    accumulator, loop = kept.accumulator, ctx.loop
    name = accumulation.base_name(accumulator)
    per_step = None
    if loop is None:
        per_step = graph_building_per_batch_function(ctx)
        if per_step is None or not accumulation.outlives_the_call(accumulator, ctx):
            return None  # no loop, and not a function that runs once per batch into a lasting accumulator
    elif (iterates_layers(loop) and not script_never_backpropagates(ctx.function_node or ctx.module, ctx)) or (
        not iterates_batches(loop) and unrolls_a_recurrence(loop, ctx, name)
    ):
        # collecting a forward pass's outputs (features, intermediates, the steps of a recurrent
        # cell unrolled over a sequence) is what the forward pass does
        return None
    if in_forward_pass(ctx):
        return None
    if not kept.container and ctx.grad_mode is not GradMode.ENABLED:
        return None  # `+=` under no_grad builds no graph around the old value
    started_in_loop = False  # `if avg is None: avg = loss` / `else: avg = 0.9 * avg + 0.1 * loss`
    if name is not None and loop is not None and ctx.bound_in_current_loop(name):
        started_in_loop = accumulation.only_started_in_loop(loop, name, node)
        if (isinstance(accumulator, cst.Name) or kept.container) and not started_in_loop:
            return None  # reset on every iteration
    if name is not None and loop is not None and not iterates_batches(loop) and accumulation.bound_in_outer_batch_loop(ctx, name) \
            and not accumulation.steps_between_bindings(ctx, name):
        # `for x in loader: steps = []; for t in range(T): steps.append(...)`: one batch's steps (but
        # where every inner turn runs its own backward and optimizer step, the sum keeps their graphs)
        return None
    if not kept.meter and not started_in_loop and not accumulation.started_as_statistic(accumulator, ctx, kept.may_start_empty, kept.container, kept.extremum):
        return None  # `x = x + f(x)` on a tensor is an update rule, not a running statistic
    return _scalar(KeptHistory(
        node=node, values=_leaves(found, ctx), shown=found[0], container=kept.container, accumulator=accumulator,
        name=name, attribute=accumulation.self_attribute(accumulator), loop=loop, per_step=per_step,
        in_module_class=ctx.in_module_class, class_node=enclosing_class(ctx), meter=kept.meter, extend=kept.extend,
    ), ctx)  # fmt: skip


def kept_by_comprehension(node: cst.BaseExpression, element: cst.BaseExpression, ctx: "Context") -> Optional[KeptHistory]:
    """`[criterion(model(x), y) for x, y in val_loader]`: one value with history per batch, all kept
    (`accumulation.comprehension_batch_source`), outside a forward pass and with grad on."""
    source = accumulation.comprehension_batch_source(node)
    if source is None or in_forward_pass(ctx) or ctx.grad_mode is GradMode.DISABLED:
        return None
    found = [v for v in accumulation.kept_values(element) if ctx.holds_graph(v) is True]
    if not found:
        return None
    return _scalar(KeptHistory(node=node, values=_leaves(found, ctx), shown=found[0], container=True, source=source,
                               in_module_class=ctx.in_module_class), ctx)


def script_never_backpropagates(scope: cst.CSTNode, ctx: "Context") -> bool:
    """Module-level code (`scope`: a script, a notebook's cells) of a file that calls backward
    nowhere (`ctx.model.backpropagates_anywhere`): a loop over layers there (T2T-ViT's feature-map
    notebooks: `results.append(all_block[i](results[-1]))`) is no forward pass building a result for
    a caller that backpropagates: nothing can call it, and nothing in the file backpropagates what
    it collects."""
    return isinstance(scope, cst.Module) and not ctx.model.backpropagates_anywhere()


def _leaves(found: list, ctx: "Context") -> list:
    """The values the fix detaches: each kept value's graph leaf (`accumulation.graph_leaf`)."""
    return [accumulation.graph_leaf(v, ctx) for v in found]


def _scalar(kept: KeptHistory, ctx: "Context") -> KeptHistory:
    kept.scalar = all(ctx.value_of(leaf).scalar for leaf in kept.values)
    return kept
