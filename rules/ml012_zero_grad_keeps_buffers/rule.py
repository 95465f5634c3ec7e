"""ML012 zero-grad-keeps-buffers."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.call_edits import remove_argument
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml012_zero_grad_keeps_buffers.meta import META


class ZeroGradKeepsBuffers(Rule):
    """
    ## What it does
    Finds `optimizer.zero_grad(set_to_none=False)` and `model.zero_grad(set_to_none=False)` (also
    with the flag passed positionally).

    ## Why is this bad?
    With `set_to_none=False` every parameter's `.grad` tensor stays allocated between steps and is
    filled with zeros, so gradient memory (as large as the weights) is held through the forward pass
    of the next step, where the peak usually is, and the next backward accumulates into it (an extra
    read and write). With the default (`set_to_none=True` since PyTorch 2.0) the gradients are freed
    and backward allocates them fresh.

    ## Example
    ```python
    optimizer.zero_grad(set_to_none=False)
    ```

    ## Use instead
    ```python
    optimizer.zero_grad()
    ```

    ## Fix safety
    Dropping the argument is unsafe: code that reads `p.grad` after zero_grad and expects a zero
    tensor (not None), or an optimizer that treats a None gradient differently from a zero one
    (momentum is not applied to parameters without a gradient), behaves differently.

    ## Measured effect
    `fixtures/ml012_zero_grad_set_to_none_false.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): with
    `set_to_none=False` the peak is 57,026,136 B; after memlint's fix, 38,667,864 B (17.5 MiB,
    32.2% less: the gradient buffers no longer coexist with the next forward's activations),
    same result.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "unsafe"

    VALID = [
        Valid(
            """
import torch
optimizer.zero_grad()
model.zero_grad(set_to_none=True)
"""
        ),
        Valid(  # not a literal: cannot tell
            """
import torch
optimizer.zero_grad(set_to_none=args.keep_grads)
"""
        ),
        Valid(  # defining a zero_grad is not calling one
            """
import torch
class Wrapper:
    def zero_grad(self, set_to_none=False):
        self.inner.zero_grad(set_to_none=True)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad(set_to_none=False)
    criterion(model(x), y).backward()
    optimizer.step()
""",
            line=3,
            column=5,
            unsafe=True,
            message="set_to_none=False",
            fixed="""
import torch
for x, y in loader:
    optimizer.zero_grad()
    criterion(model(x), y).backward()
    optimizer.step()
""",
        ),
        Invalid(  # positional flag on a module
            """
import torch
net.zero_grad(False)
""",
            line=2,
            column=1,
            unsafe=True,
            fixed="""
import torch
net.zero_grad()
""",
        ),
    ]

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "zero_grad"):
            return
        arg = _set_to_none_false(node)
        if arg is None:
            return
        receiver = " ".join(self.ctx.module.code_for_node(func.value).split())
        fix = self.replace(node, remove_argument(node, arg), "Drop `set_to_none=False`", safe=False)
        self.report(
            node,
            f"`{receiver}.zero_grad(set_to_none=False)` keeps every gradient buffer allocated (as large as "
            "the weights) through the next forward pass and makes backward accumulate into it; use the "
            "default `set_to_none=True`",
            fix,
        )


def _set_to_none_false(call: cst.Call) -> Optional[cst.Arg]:
    for index, arg in enumerate(call.args):
        is_flag = (arg.keyword is not None and arg.keyword.value == "set_to_none") or (
            arg.keyword is None and not arg.star and index == 0
        )
        if is_flag and isinstance(arg.value, cst.Name) and arg.value.value == "False":
            return arg
    return None
