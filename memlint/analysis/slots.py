"""Which slots of a container of running sums are the objective: a fact of the semantic model.

A list of per-step sums (`losses_q = [0 for _ in range(update_step + 1)]`) that a loop writes at a
slot moving with the loop (`losses_q[k + 1] += loss_q` in `for k in range(1, update_step)`: MAML's
query losses after each inner step) while the code reads the list back only at fixed slots
(`loss_q = losses_q[-1] / task_num; loss_q.backward()`): backward runs through that one slot; every
other slot the loop wrote keeps its graph, with the activations it saved, and nothing ever
backpropagates it.  The accumulator's gradient use therefore does not make what it collects the
objective (`one_slot_objective`).

Evidence: the write's index names the loop's position (`loop_position`: `for k in range(...)`,
`for i, b in enumerate(...)`), and every other mention of the container in the scope is a
subscript by an integer literal (`losses_q[-1]`, `losses_q[0] += ...`) or the binding that starts
it.  Any other read (`torch.stack(losses_q).sum()`, `sum(losses_q)`, `losses_q[j]`, passing it
on) may backpropagate every slot, so the fact does not hold and the gradient use stands.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.accumulation import loop_position
from memlint.analysis.iteration import names_in
from memlint.analysis.walk import code_with_parents


def one_slot_objective(scope: cst.CSTNode, accumulator: cst.BaseExpression, loop: Optional[cst.CSTNode], skip: list) -> Optional[tuple[str, ...]]:
    """The fixed slots read back (`("-1",)` for `losses_q[-1]`), in source order, when `accumulator`
    is a slot of a named container indexed by `loop`'s position and every other mention of the
    container in `scope` (outside the accumulating statements `skip`) is a fixed slot or the
    container's binding; None otherwise."""
    if not (isinstance(loop, cst.For) and isinstance(accumulator, cst.Subscript) and isinstance(accumulator.value, cst.Name)):
        return None
    index = _single_index(accumulator)
    position = loop_position(loop)
    if index is None or position is None or position not in names_in(index) or _fixed_slot(index) is not None:
        return None
    name = accumulator.value.value
    skipped = {id(node) for node in skip}
    read: list[str] = []
    for node, parents in code_with_parents(scope):
        if type(node) is not cst.Name or node.value != name:
            continue
        if any(id(p) in skipped for p in parents):
            continue
        parent = parents[-1] if parents else None
        if isinstance(parent, cst.AssignTarget):
            continue  # `losses_q = [0 for _ in range(n)]`: the binding that starts it
        if not (isinstance(parent, cst.Subscript) and parent.value is node):
            return None  # the whole container is read: every slot may be backpropagated
        slot = _single_index(parent)
        fixed = _fixed_slot(slot) if slot is not None else None
        if fixed is None:
            return None
        above = parents[-2] if len(parents) > 1 else None
        if (isinstance(above, cst.AugAssign) and above.target is parent) or isinstance(above, cst.AssignTarget):
            continue  # `losses_q[0] += loss_q`: writes a fixed slot, reads back nothing
        if fixed not in read:
            read.append(fixed)
    return tuple(read) if read else None


def _single_index(subscript: cst.Subscript) -> Optional[cst.BaseExpression]:
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    return subscript.slice[0].slice.value


def _fixed_slot(index: cst.BaseExpression) -> Optional[str]:
    """`3` -> "3", `-1` -> "-1"; None for anything else."""
    if isinstance(index, cst.Integer):
        return index.value
    if isinstance(index, cst.UnaryOperation) and isinstance(index.operator, cst.Minus) and isinstance(index.expression, cst.Integer):
        return "-" + index.expression.value
    return None
