"""Where an accumulator's collected values end: a fact of the semantic model.

A rollout collects what the model returns with its graph (`log_probs.append(dist.log_prob(a))`),
then, after the loop, rebinds the name to a detached reduction of itself (`log_probs =
torch.cat(log_probs).detach()`, `.item()`, `.tolist()`, `.numpy()`).  From that statement on, in
the same block, the name holds the new value: its uses there (`ppo_update(..., log_probs, ...)`)
are no uses of the collected graphs, which nothing backpropagates (`after_detaching_rebinding`).

Evidence: the statement is a plain `name = <call chain ending in a detaching method>` outside the
loop that accumulates, and only the statements after it in the block that holds it are passed
over, up to the next statement that binds the name again (straight-line code: an occurrence there
always reads the rebound value).  Occurrences before
it, in other blocks or after the block ends keep their meaning.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.bindings import binds
from memlint.analysis.iteration import names_in
from memlint.analysis.walk import code_with_parents

# Methods whose result carries no autograd history, whatever they are called on.
DETACHING_METHODS = frozenset({"detach", "item", "tolist", "numpy"})


def after_detaching_rebinding(scope: cst.CSTNode, name: str, loop: Optional[cst.CSTNode]) -> list:
    """The statements that follow, in their block, a rebinding of `name` to a detached value made
    outside `loop` (`log_probs = torch.cat(log_probs).detach()` after the rollout)."""
    if loop is None:
        return []
    found: list = []
    around_loop: set[int] = set()  # the loop and the statements holding it
    for node, parents in code_with_parents(scope):
        if node is loop:
            around_loop = {id(p) for p in parents} | {id(loop)}
        if type(node) is not cst.Assign or not around_loop or not _rebinds_detached(node, name):
            continue
        if id(loop) in {id(p) for p in parents} or len(parents) < 2:
            continue
        line, block = parents[-1], parents[-2]
        body = getattr(block, "body", None)
        if not isinstance(line, cst.SimpleStatementLine) or not isinstance(body, (list, tuple)):
            continue
        position = next((i for i, statement in enumerate(body) if statement is line), None)
        if position is not None and any(id(statement) in around_loop for statement in body[:position]):
            # the rebinding follows the loop in the same block; it reaches the statements up to
            # the next one that binds the name again (`targets = advantages(values)` once more)
            for statement in body[position + 1:]:
                if binds(statement, name):
                    break
                found.append(statement)
    return found


def _rebinds_detached(assign: cst.Assign, name: str) -> bool:
    if len(assign.targets) != 1 or not (isinstance(assign.targets[0].target, cst.Name) and assign.targets[0].target.value == name):
        return False
    value = assign.value
    return (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in DETACHING_METHODS
        and not value.args
        and name in names_in(value)  # a reduction of what was collected
    )
