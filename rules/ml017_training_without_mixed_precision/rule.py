"""ML017 training-without-mixed-precision."""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.precision_api import AUTOCAST, GRAD_SCALERS, LOW_PRECISION_DTYPES
from memlint.analysis.tables import BACKWARD_METHODS
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml017_training_without_mixed_precision.meta import META

_OPTIMIZER = re.compile(r"(?:^|_)(?:optim|optimizer|optimiser|opt)(?:_|$|\d)|optimizer$", re.I)
# Configuration that asks a framework for mixed precision (Lightning, accelerate, transformers).
_PRECISION_KEYWORDS = frozenset({"mixed_precision", "fp16", "bf16", "precision", "amp", "use_amp", "amp_dtype"})
_PRECISION_STRING = re.compile(r"(?:16-mixed|bf16|fp16|float16|bfloat16|\bamp\b)", re.I)
_LOW_PRECISION_METHODS = frozenset({"half", "bfloat16", "autocast"})


class TrainingWithoutMixedPrecision(Rule):
    """
    ## What it does
    Finds a training loop (a loop whose body calls backward and an optimizer's `step()`) in a file
    that shows no sign of reduced precision: no autocast, no GradScaler, no `.half()` /
    `.bfloat16()`, no `torch.float16` / `torch.bfloat16`, and no framework setting for it
    (`precision="16-mixed"`, `mixed_precision="bf16"`, `fp16=True`). Off by default: select it
    with `--select ML017` or `extend-select = ["ML017"]`.

    It is advice, reported once per loop: the file may run on hardware or with a model where mixed
    precision does not pay, or precision may be configured in another file (a launcher, a config)
    memlint does not see.

    ## Why is this bad?
    Activations saved for backward usually dominate training memory for large batches; computing
    them in float16 or bfloat16 under autocast roughly halves them (and uses the tensor cores),
    while weights, gradients and optimizer state stay float32.

    ## Example
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Use instead
    ```python
    for x, y in loader:
        optimizer.zero_grad()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    ```

    ## Fix safety
    No automatic fix: where autocast goes, whether a GradScaler is needed (float16) or not
    (bfloat16), and whether the model is numerically fine in reduced precision are decisions.

    ## Measured effect
    Not measured by memlint's fixtures yet (autocast needs a GPU to pay off). Per
    ../spec/memory-facts.md, autocast keeps fp32 weights, gradients and optimizer state: it shrinks
    activations, not model state.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "none"

    VALID = [
        Valid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""
        ),
        Valid(  # a framework setting
            """
import torch
from accelerate import Accelerator
accelerator = Accelerator(mixed_precision="bf16")
for x, y in loader:
    loss = model(x, y)
    accelerator.backward(loss)
    optimizer.step()
"""
        ),
        Valid(  # no optimizer step: not a training loop
            """
import torch
for x in loader:
    model(x).sum().backward()
    saliency.append(x.grad)
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
""",
            line=2,
            column=1,
            message="autocast",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._backward_loops: dict[int, cst.CSTNode] = {}
        self._step_loops: set[int] = set()
        self._mixed = False

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        qualified = ctx.resolve(func)
        if qualified in AUTOCAST or qualified in GRAD_SCALERS:
            self._mixed = True
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in _LOW_PRECISION_METHODS:
            self._mixed = True
        loop = ctx.loop
        if loop is None:
            return
        if method in BACKWARD_METHODS:
            self._backward_loops[id(loop)] = loop
        elif method == "step" and isinstance(func.value, (cst.Name, cst.Attribute)):
            receiver = func.value.value if isinstance(func.value, cst.Name) else func.value.attr.value
            if _OPTIMIZER.search(receiver):
                self._step_loops.add(id(loop))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in ("float16", "half", "bfloat16") and self.ctx.resolve(node) in LOW_PRECISION_DTYPES:
            self._mixed = True

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value in _PRECISION_KEYWORDS:
            self._mixed = True

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if not self._mixed and _PRECISION_STRING.search(node.value):  # docstrings are long: search until found
            self._mixed = True

    def finish(self, facts) -> None:
        if self._mixed:
            return
        for key, loop in self._backward_loops.items():
            if key in self._step_loops:
                self.report(
                    loop,
                    "training loop in full float32 precision: computing activations under "
                    '`torch.autocast("cuda", dtype=torch.bfloat16)` (or float16 with a GradScaler) roughly '
                    "halves the activation memory saved for backward",
                )
