"""Is a value a model's output (logits, predictions, features), still where the model left it?

Values.py answers "does it carry autograd history"; this answers "did it come out of a model, and
has it not been moved to the host or reduced to a metric since".  A rule keeps the names it has seen
bound to such values (per function) and passes them in as `known`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection

import libcst as cst

from memlint.analysis.evaluation import is_model_call
from memlint.analysis.project_facts import returns_history
from memlint.analysis.tables import LOSS_NAME
from memlint.analysis.values import own_definition

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods whose result stays on the receiver's device and keeps one value per sample (or more).
_KEEPS_DEVICE = frozenset(
    {
        "detach", "softmax", "log_softmax", "sigmoid", "tanh", "argmax", "argmin", "float", "half", "bfloat16",
        "double", "long", "int", "view", "reshape", "squeeze", "unsqueeze", "flatten", "clone", "contiguous",
        "permute", "transpose", "round", "exp", "abs", "logits", "to_dense",
    }
)  # fmt: skip
# torch functions that do the same to their first argument.
_TORCH_KEEPS_DEVICE = frozenset({"softmax", "log_softmax", "sigmoid", "argmax", "argmin", "squeeze", "flatten"})
_NOT_OUTPUT_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "loss"})


def model_output(expr: cst.BaseExpression, ctx: "Context", known: Collection[str] = ()) -> bool:
    """`model(x)`, `self.net(x)`, `outputs.logits`, `out[0]`, `logits.argmax(1)`, `probs.detach()`."""
    if isinstance(expr, cst.Name):
        return expr.value in known
    if isinstance(expr, cst.Subscript):
        return model_output(expr.value, ctx, known)
    if isinstance(expr, cst.Attribute):
        if ctx.resolve(expr) is not None or expr.attr.value in _NOT_OUTPUT_ATTRIBUTES:
            return False
        return model_output(expr.value, ctx, known) and not _is_self_attribute(expr)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    qualified = ctx.resolve(func)
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        if module in ("torch", "torch.nn.functional") and name in _TORCH_KEEPS_DEVICE and expr.args:
            return model_output(expr.args[0].value, ctx, known)
        return False
    if isinstance(func, cst.Attribute) and func.attr.value in _KEEPS_DEVICE:
        return model_output(func.value, ctx, known)
    project = ctx.project
    if (project.history_calls or project.history_methods) and returns_history(expr, ctx):
        # a helper (here or in another file) that returns a model's output: `infer(model, x)`
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        return not LOSS_NAME.match(name)  # (a loss is reduced already: one number per batch)
    if own_definition(func, ctx) is not None:
        return False  # the file's own function or class, named like a model (`test_model`): not one
    return is_model_call(expr, ctx)


def _is_self_attribute(expr: cst.Attribute) -> bool:
    return isinstance(expr.value, cst.Name) and expr.value.value == "self"
