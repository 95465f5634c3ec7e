"""ML014 device-outputs-accumulated."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis import GradMode
from memlint.analysis.fixes import method_call
from memlint.analysis.iteration import iterates_batches
from memlint.analysis.outputs import model_output
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml014_device_outputs_accumulated.meta import META


class DeviceOutputsAccumulated(Rule):
    """
    ## What it does
    Finds model outputs (logits, predictions, features) appended to a list across the iterations of
    a loop over a data split while still on the accelerator: `preds.append(output)`,
    `outs.append(logits.detach())`, `feats.extend(model(x))`, with no `.cpu()` on the way. A loop
    over a data split iterates something named like a loader (`val_loader`, `test_dataloader`,
    `enumerate(tqdm(loader))`, `test_dataset`). Only in files that put something on a device
    (`.cuda()`, `.to(...)`, `device=`).

    Not reported: loops that are not a pass over data — a decoding loop inside a model that
    collects per-step tokens or logits to concatenate them, a loop over chunks or layers — whose
    length does not grow with the dataset; values moved to the host (`.cpu()`, `.numpy()`, `.tolist()`, `.item()`) or reduced
    to a metric (`.sum()`, `.mean()`); lists created inside the loop; values that still carry
    autograd history (that is ML001 accumulated-graph); values the analysis cannot trace to a model
    call (a helper's return value). Per-batch hooks that append to `self.outputs` (Lightning's
    `validation_step`) are not followed.

    ## Why is this bad?
    Every batch's outputs stay in device memory until the loop ends, so memory grows with the size
    of the dataset, and evaluation that fits for the first thousand batches runs out of memory on a
    larger split.

    ## Example
    ```python
    preds = []
    with torch.no_grad():
        for x, _ in test_loader:
            preds.append(model(x.cuda()))
    ```

    ## Use instead
    ```python
    preds = []
    with torch.no_grad():
        for x, _ in test_loader:
            preds.append(model(x.cuda()).detach().cpu())
    ```

    ## Fix safety
    Unsafe: appending `value.detach().cpu()` changes the device of every later use of the list
    (a `torch.cat(preds)` compared with device labels then fails, or runs on the CPU).

    ## Measured effect
    `fixtures/ml014_outputs_accumulated.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): 32,087,968 B before and after:
    on CPU `.cpu()` is a no-op, so the saving only shows on an accelerator, where every batch's
    outputs stay in device memory until the loop ends (batch × classes × 4 bytes per batch for fp32
    logits). A CUDA run of the same fixture (`memlint confirm fixtures --device cuda`) gives the
    device figure.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "unsafe"

    VALID = [
        Valid(
            """
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()).cpu())
"""
        ),
        Valid(  # a reduced metric
            """
import torch
scores = []
with torch.no_grad():
    for x, y in loader:
        out = model(x.to(device))
        scores.append((out.argmax(1) == y).float().mean())
"""
        ),
        Valid(  # graph-carrying: ML001's business
            """
import torch
outs = []
for x in loader:
    outs.append(model(x.cuda()))
"""
        ),
        Valid(  # no device anywhere in the file
            """
import torch
preds = []
with torch.no_grad():
    for x in loader:
        preds.append(model(x))
"""
        ),
        Valid(  # a list created per iteration
            """
import torch
with torch.no_grad():
    for x in loader:
        batch_out = []
        batch_out.append(model(x.cuda()))
        save(batch_out)
"""
        ),
        Valid(  # a decoding loop inside a model: bounded by the sequence length, and needed on the device
            """
import torch
tokens = []
for _ in range(max_length):
    logits = self.decoder(hidden.to(device))
    next_token = logits.argmax(-1)
    tokens.append(next_token)
"""
        ),
        Valid(  # a helper's result we cannot trace
            """
import torch
preds = []
with torch.no_grad():
    for x in loader:
        preds.append(postprocess(x.cuda()))
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()))
""",
            line=5,
            column=9,
            unsafe=True,
            message="grows with the size of the dataset",
            fixed="""
import torch
preds = []
with torch.no_grad():
    for x, _ in test_loader:
        preds.append(model(x.cuda()).detach().cpu())
""",
        ),
        Invalid(  # detached logits through a name, with gradients on
            """
import torch
all_logits = []
for batch in val_loader:
    outputs = model(**{k: v.to(device) for k, v in batch.items()})
    logits = outputs.logits.detach()
    all_logits.append(logits)
""",
            line=6,
            column=5,
            unsafe=True,
            fixed="""
import torch
all_logits = []
for batch in val_loader:
    outputs = model(**{k: v.to(device) for k, v in batch.items()})
    logits = outputs.logits.detach()
    all_logits.append(logits.cpu())
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._outputs: dict[Optional[tuple], set[str]] = {}  # function -> names bound to model outputs
        self._candidates: list[tuple[cst.Call, cst.BaseExpression, str, bool]] = []
        self._device = False

    def _known(self) -> set[str]:
        return self._outputs.setdefault(self.ctx.function_key, set())

    def visit_Assign(self, node: cst.Assign) -> None:
        known = self._known()
        is_output = model_output(node.value, self.ctx, known)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                (known.add if is_output else known.discard)(target.target.value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if node.keyword is not None and node.keyword.value == "device":
            self._device = True

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method in ("cuda", "to") or ctx.resolve(func) == "torch.device":
            self._device = True
            return
        if method not in ("append", "extend") or len(node.args) != 1 or not ctx.in_loop:
            return
        if not any(iterates_batches(loop) for loop in ctx.loops):
            return  # a decoding loop inside a model, a loop over layers or chunks: bounded, and needed
        accumulator = func.value
        if not isinstance(accumulator, (cst.Name, cst.Attribute)):
            return
        if isinstance(accumulator, cst.Name) and ctx.bound_in_current_loop(accumulator.value):
            return
        value = node.args[0].value
        if not model_output(value, ctx, self._known()):
            return
        if ctx.holds_graph(value) is not False and ctx.grad_mode is not GradMode.DISABLED:
            return  # carries (or may carry) autograd history: ML001's finding, not this one
        # Detached already where gradients are on; under no_grad, detach keeps the fix right if the
        # code is later run with gradients.
        detached = ctx.holds_graph(value) is False and ctx.grad_mode is GradMode.ENABLED
        self._candidates.append((node, value, ctx.module.code_for_node(accumulator), detached))

    def finish(self, facts) -> None:
        if not self._device:
            return
        for node, value, accumulator, detached in self._candidates:
            moved = method_call(value, "cpu") if detached else method_call(method_call(value, "detach"), "cpu")
            fix = None
            if node.func.attr.value == "append":  # type: ignore[attr-defined]
                fix = self.replace(value, moved, "Move it to the host before keeping it", safe=False)
            self.report(
                node,
                f"`{accumulator}` keeps every batch's model output on the device: device memory grows with the "
                "size of the dataset; append `.detach().cpu()` (or a reduced metric)",
                fix,
            )
