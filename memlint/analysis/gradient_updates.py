"""Does a backward pass train: are the gradients it computes applied to parameters?

A `.backward()` call alone computes gradients; training applies them.  A test that runs two
implementations of a layer forward and backward to compare their outputs and gradients (a numerical
check, like `gradcheck`), a saliency map or a gradient norm probe backpropagates and trains nothing.
Training is told by one of:

- an update of the parameters (`updates_parameters`): a call of a step (`optimizer.step()`,
  `scaler.step(opt)`, `trpo_step(...)`, `self.optimizer_step()`: a name that is or ends in `step`,
  not a schedule's: `scheduler.step()`), or an in-place update that reads a gradient (`p.data -= lr
  * p.grad`, `w.data.add_(w.grad, alpha=-lr)`);
- a backward in any loop (`for epoch in ...: ... loss.backward()`), a training loop whose step may
  sit in a helper.

ML010 (float64 training) counts a backward in straight-line code as training only with an update
in its file.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.step_calls import is_parameter_step
from memlint.analysis.walk import code_descendants


def updates_parameters(node: cst.CSTNode) -> bool:
    """Is `node` (a call or an augmented assignment) an update of parameters: a step call, or an
    in-place update reading a `.grad`?"""
    kind = type(node)
    if kind is cst.AugAssign:
        return _reads_grad(node.value)  # type: ignore[attr-defined]
    if kind is not cst.Call:
        return False
    if is_parameter_step(node):  # step_calls.py: a step, not a schedule's
        return True
    func = node.func  # type: ignore[attr-defined]
    if type(func) is not cst.Attribute:
        return False
    method = func.attr.value
    # `p.data.add_(p.grad, alpha=-lr)`, `p.sub_(lr * p.grad)`: an in-place method given a gradient
    # (never a step's name: those end in `step`)
    return method.endswith("_") and not method.startswith("_") and any(_reads_grad(arg.value) for arg in node.args)  # type: ignore[attr-defined]


def _reads_grad(expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.Attribute and expr.attr.value == "grad":  # type: ignore[attr-defined]
        return True
    return any(type(n) is cst.Attribute and n.attr.value == "grad" for n in code_descendants(expr))  # type: ignore[attr-defined]
