"""Where a data loader's batches go: into a model (or onto the device), or only into host-side code.

Only run for loaders a rule already suspects; walks the file once per question.
"""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.iteration import names_in, runs_model
from memlint.analysis.walk import code_descendants

# Calls that hand a loader to something that runs a model on its batches.
_CONSUMERS = re.compile(
    r"^(?:fit|validate|test|predict|evaluate|evaluation_loop|train|train_epoch|eval_epoch|run_epoch|"
    r"evaluate_model|inference|run_inference|validation|eval|test_model|train_model)$"
)
_MODEL_ARG = re.compile(r"(?:^|_)(?:model|net|module|trainer)(?:_|$)", re.I)


def _moves_to_device(loop: cst.CSTNode) -> bool:
    for node in code_descendants(loop):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in ("cuda", "to"):
            return True
    return False


def loader_feeds_model(scope: cst.CSTNode, name: str) -> bool:
    """Is the loader bound to `name` iterated by a loop that runs a model (or moves batches to the
    device), or handed to a call that does (`trainer.fit(model, loader)`, `evaluate(model, loader)`)?"""
    for node in code_descendants(scope):
        if isinstance(node, cst.For) and name in set(names_in(node.iter)):
            if runs_model(node) or _moves_to_device(node.body):
                return True
        elif isinstance(node, cst.Call) and any(
            isinstance(arg.value, (cst.Name, cst.Attribute)) and _last_name(arg.value) == name for arg in node.args
        ):
            if handed_to_model(node):
                return True
    return False


def handed_to_model(call: cst.Call) -> bool:
    """Does this call (which receives a loader) look like it runs a model over it?"""
    func = call.func
    callee = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
    if _CONSUMERS.match(callee):
        return True
    return any(
        isinstance(arg.value, (cst.Name, cst.Attribute)) and _MODEL_ARG.search(_last_name(arg.value) or "")
        for arg in call.args
    )


def _last_name(expr: cst.BaseExpression):
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None
