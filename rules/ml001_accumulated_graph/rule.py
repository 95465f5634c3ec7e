"""ML001 accumulated-graph."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

import libcst as cst

from memlint.analysis import GradMode, Kind
from memlint.analysis.fixes import method_call
from memlint.analysis.iteration import iterates_batches, iterates_layers
from memlint.analysis.naming import is_forward_name
from memlint.analysis.tables import AUTOGRAD_FUNCTIONS, BACKWARD_METHODS
from memlint.analysis.uses import Use, classify_uses
from memlint.analysis.walk import calls_method, code_descendants
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml001_accumulated_graph.meta import META


@dataclass
class _Candidate:
    node: cst.CSTNode  # what is reported: the accumulating statement or call
    value: cst.BaseExpression  # the graph-carrying value being accumulated
    accumulator: cst.BaseExpression
    name: Optional[str]  # the accumulator's variable, when it is one (or a subscript of one)
    container: bool  # list.append / extend rather than +=
    scalar: bool
    loop: Union[cst.For, cst.While]
    in_module_class: bool  # in a method of an nn.Module subclass: model code

    @property
    def escapes_by_name(self) -> bool:
        """Stored on an object (`self.losses`): later uses are out of sight."""
        return self.name is None or not isinstance(self.accumulator, (cst.Name, cst.Subscript))


class AccumulatedGraph(Rule):
    """
    ## What it does
    Finds a tensor that carries autograd history being accumulated across loop iterations:
    `total += loss`, `total = total + loss`, `losses.append(loss)`, `stats["loss"] += loss`,
    `history.extend(...)`.

    ## Why is this bad?
    The accumulator keeps a reference to every iteration's autograd graph. In a loop without a
    backward per iteration (evaluation without `torch.no_grad()`), each graph keeps the activations
    it saved for backward, so memory grows linearly with the number of iterations. In a training
    loop that calls backward every iteration, backward frees the saved activations, so device
    memory does not grow, but the chain of autograd nodes does, and the accumulator can no longer
    be backpropagated.

    memlint stays silent when the accumulated value is later used for gradients (`total.backward()`,
    `torch.stack(losses).sum().backward()`, `torch.autograd.grad(total, ...)`: that is gradient
    accumulation), when the loop runs without gradient tracking, and when the value is already a
    number or detached (`loss.item()`, `float(loss)`, `loss.detach()`, `loss.data`). It only reports
    values it can see carry history: the result of calling a model, a module or a loss function, and
    arithmetic, indexing and fields of such results. Values it cannot trace (a helper's return value,
    a function parameter) are not reported.

    ## Example
    ```python
    total = 0.0
    for x, y in val_loader:
        loss = criterion(model(x), y)
        total += loss
    print(total / len(val_loader))
    ```

    ## Use instead
    ```python
    total = 0.0
    for x, y in val_loader:
        loss = criterion(model(x), y)
        total += loss.item()
    print(total / len(val_loader))
    ```

    ## Fix safety
    The fix accumulates `value.item()` when the value is a 0-d tensor (a loss) and every later use of
    the accumulator is numeric (printing, formatting, logging, arithmetic), and `value.detach()` when
    the accumulator is later used as a tensor or the value may have more than one element. Both are
    safe when every later use is visible in the function; when the accumulator escapes (it is
    returned, stored on an object or passed to code memlint cannot see) the fix is unsafe.

    ## Measured effect
    The team's reference measurement (MLP 1024-2048-2048-10, 6.3M parameters, batch 256, fp32,
    PyTorch 2.13 on CPU, exact tensor-storage tracker): an evaluation loop of 20 batches without backward peaks at 126.3 MiB with `total += loss`
    and 36.1 MiB with `loss.item()` (about 4.5 MiB retained per iteration). With a backward per
    iteration the peak does not change (57,870,424 B vs 57,870,420 B) but the autograd graph grows
    from 17 to 226 nodes.

    Fixtures, `memlint confirm fixtures` (PyTorch 2.13.0+cpu, exact tensor-storage tracker;
    docs/measured-savings.md): `ml001_eval_loop.py` (10 batches of 128 through an MLP
    256-1024-1024-10, no backward): 27,640,924 B before, 10,822,712 B after (16.0 MiB, 60.8%
    saved); `ml001_train_loop.py` (backward per step): 12,289,116 B before, 12,289,112 B after (no
    change).
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "mixed"

    VALID = [
        Valid(
            """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()
"""
        ),
        Valid(  # gradient accumulation: the sum is backpropagated
            """
import torch
def step(model, batches, criterion):
    total = 0
    for x, y in batches:
        total = total + criterion(model(x), y)
    total.backward()
"""
        ),
        Valid(  # a list of losses reduced and backpropagated
            """
import torch
losses = []
for x, y in batches:
    losses.append(criterion(model(x), y))
torch.stack(losses).sum().backward()
"""
        ),
        Valid(
            """
import torch
with torch.no_grad():
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
"""
        ),
        Valid(  # produced under no_grad, accumulated outside it
            """
import torch
total = 0
for x, y in loader:
    with torch.no_grad():
        out = model(x)
    total += out.sum()
"""
        ),
        Valid(
            """
import torch
@torch.no_grad()
def evaluate(model, loader):
    total = 0
    for x, y in loader:
        total += F.cross_entropy(model(x), y)
    return total
"""
        ),
        Valid(  # only ever called under no_grad in this file
            """
import torch
def run_eval(net, loader):
    total = 0
    for x, y in loader:
        total += net(x).sum()
    return total

with torch.no_grad():
    run_eval(model, loader)
"""
        ),
        Valid(
            """
import torch
total = 0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.detach()
    total += float(loss)
    total += loss.data
"""
        ),
        Valid(  # reset every iteration: nothing crosses iterations
            """
import torch
for x, y in loader:
    total = 0
    total += criterion(model(x), y)
    total.backward()
"""
        ),
        Valid(  # Lightning runs validation_step without gradients
            """
import torch
import lightning as L
class Net(L.LightningModule):
    def validation_step(self, batch, batch_idx):
        for x in batch:
            self.total += self(x).sum()
"""
        ),
        Valid(  # a user's helper we cannot see into
            """
import torch
total = 0
for batch in loader:
    total += train_step(batch)
"""
        ),
        Valid(  # accelerate's backward through the accumulated loss
            """
import torch
def train(model, loader, accelerator):
    total = 0
    for x, y in loader:
        total += model(x).mean()
    accelerator.backward(total)
"""
        ),
        Valid(  # a forward pass collecting feature maps: the caller backpropagates through them
            """
import torch
from torch import nn
class Backbone(nn.Module):
    def forward_features(self, x):
        features = []
        for stage in self.stages:
            x = stage(x)
            features.append(x)
        return features
"""
        ),
        Valid(  # a loop over layers, outside any forward method
            """
import torch
def run_blocks(blocks, x):
    outs = []
    for block in blocks:
        x = block(x)
        outs.append(x)
    return torch.cat(outs)
"""
        ),
        Valid(  # a tensor updated step by step (sampling loop): an update rule, not a statistic
            """
import torch
latents = torch.randn(1, 4, 64, 64)
for t in range(50):
    velocity = model(latents, t)
    latents = latents + velocity / 50
"""
        ),
        Valid(  # `decoder` here is a bound method, not a model
            """
import torch
def decode(self, ids):
    decoder = self.wp_decode
    texts = []
    for row in ids:
        texts.append(decoder(row))
    return texts
"""
        ),
        Valid(  # Hugging Face pipelines run `_forward` inside inference_context()
            """
import torch
from transformers import Pipeline
class QA(Pipeline):
    def _forward(self, inputs):
        return self.infer_all(inputs)
    def infer_all(self, inputs):
        logits = []
        for batch in inputs:
            logits.append(self.model(**batch).logits)
        return logits
"""
        ),
        Valid(  # per-image loss terms of one batch, stacked and returned for the caller's backward
            """
import torch
import torch.nn.functional as F
def detection_loss(predictions, targets):
    terms = []
    for pred, target in zip(predictions, targets):
        terms.append(F.smooth_l1_loss(pred, target, reduction="sum"))
    return torch.stack(terms).sum()
"""
        ),
        Valid(  # model code collecting per-image embeddings for its output
            """
import torch
from torch import nn
class VisionLanguage(nn.Module):
    def image_features(self, images, out):
        features = []
        for image in images:
            features.append(self.projector(image))
        out.features = features
        return out
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
total = 0.0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss
print(f"val loss {total / len(val_loader):.4f}")
""",
            line=5,
            column=5,
            message="never calls backward",
            fixed="""
import torch
total = 0.0
for x, y in val_loader:
    loss = criterion(model(x), y)
    total += loss.item()
print(f"val loss {total / len(val_loader):.4f}")
""",
        ),
        Invalid(  # training loop with backward per step; F resolved through an alias
            """
import torch.nn.functional as F
def train(net, loader, opt):
    running = 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        running = running + loss
    print(running)
""",
            line=9,
            column=9,
            message="can no longer be backpropagated",
            fixed="""
import torch.nn.functional as F
def train(net, loader, opt):
    running = 0
    for x, y in loader:
        opt.zero_grad()
        loss = F.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        running = running + loss.item()
    print(running)
""",
        ),
        Invalid(  # later used as a tensor: detach keeps it a tensor
            """
import torch
losses = []
for x, y in loader:
    losses.append(criterion(model(x), y))
print(torch.stack(losses).mean().item())
""",
            line=4,
            column=5,
            fixed="""
import torch
losses = []
for x, y in loader:
    losses.append(criterion(model(x), y).detach())
print(torch.stack(losses).mean().item())
""",
        ),
        Invalid(  # escapes the function: the fix is unsafe
            """
import torch
def validate(model, loader, criterion):
    model.eval()
    total = 0
    for x, y in loader:
        total += criterion(model(x), y)
    return total / len(loader)
""",
            line=6,
            column=9,
            unsafe=True,
            fixed="""
import torch
def validate(model, loader, criterion):
    model.eval()
    total = 0
    for x, y in loader:
        total += criterion(model(x), y).item()
    return total / len(loader)
""",
        ),
        Invalid(  # a dict entry, and an output that is not a 0-d tensor
            """
import torch
from torch import nn
net = nn.Linear(4, 2)
stats = {"out": 0}
for x in data:
    stats["out"] += net(x)
print(stats)
""",
            line=6,
            column=5,
            fixed="""
import torch
from torch import nn
net = nn.Linear(4, 2)
stats = {"out": 0}
for x in data:
    stats["out"] += net(x).detach()
print(stats)
""",
        ),
        Invalid(  # a HF-style output field, arithmetic on it
            """
import torch
history = []
for batch in loader:
    outputs = model(**batch)
    history.append(outputs.loss * 2)
print(sum(history) / len(history))
""",
            line=5,
            column=5,
            fixed="""
import torch
history = []
for batch in loader:
    outputs = model(**batch)
    history.append((outputs.loss * 2).item())
print(sum(history) / len(history))
""",
        ),
        Invalid(  # a training method on the model itself (not a forward pass)
            """
import torch
from torch import nn
class Net(nn.Module):
    def fit(self, loader, optimizer):
        epoch_loss = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(self(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss
        print(epoch_loss)
""",
            line=11,
            column=13,
            fixed="""
import torch
from torch import nn
class Net(nn.Module):
    def fit(self, loader, optimizer):
        epoch_loss = 0
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(self(x), y)
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item()
        print(epoch_loss)
""",
        ),
        Invalid(  # a pass over a data split, collected and returned: every batch's graph is kept
            """
import torch
def predict(model, test_loader):
    outputs = []
    for x, _ in test_loader:
        outputs.append(model(x))
    return torch.cat(outputs)
""",
            line=5,
            column=9,
            unsafe=True,
            fixed="""
import torch
def predict(model, test_loader):
    outputs = []
    for x, _ in test_loader:
        outputs.append(model(x).detach())
    return torch.cat(outputs)
""",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._pending: dict[int, list[_Candidate]] = {}

    # ------------------------------------------------------------------ finding candidates

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign)):
            self._consider(node, node.target, node.value, container=False)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
            return
        name = node.targets[0].target.value
        value = node.value
        if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Add):
            for mine, other in ((value.left, value.right), (value.right, value.left)):
                if isinstance(mine, cst.Name) and mine.value == name:
                    self._consider(node, node.targets[0].target, other, container=False)
                    return

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in ("append", "extend")) or len(node.args) != 1:
            return
        value = node.args[0].value
        if func.attr.value == "extend" and isinstance(value, (cst.List, cst.Tuple)):
            return  # element-wise fixes of a display are not worth the risk
        self._consider(node, func.value, value, container=True)

    def _consider(self, node: cst.CSTNode, accumulator: cst.BaseExpression, value: cst.BaseExpression, *, container: bool) -> None:
        ctx = self.ctx
        loop = ctx.loop
        if loop is None or ctx.holds_graph(value) is not True:
            return
        if _in_forward_pass(ctx) or iterates_layers(loop):
            return  # collecting a forward pass's outputs (features, intermediates) is what forward does
        if not container and ctx.grad_mode is not GradMode.ENABLED:
            return  # `+=` under no_grad builds no graph around the old value
        if not _started_as_statistic(accumulator, ctx):
            return  # `x = x + f(x)` on a tensor is an update rule, not a running statistic
        name = _base_name(accumulator)
        if name is not None and isinstance(accumulator, cst.Name) and ctx.bound_in_current_loop(name):
            return  # reset on every iteration
        if name is not None and container and ctx.bound_in_current_loop(name):
            return
        scalar = ctx.value_of(value).scalar
        candidate = _Candidate(node, value, accumulator, name, container, scalar, loop, ctx.in_module_class)
        scope = ctx.function_node or ctx.module
        self._pending.setdefault(id(scope), []).append(candidate)

    # ------------------------------------------------------------------ deciding, once the scope is seen

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._decide(node)

    def leave_Module(self, node: cst.Module) -> None:
        self._decide(node)

    def _decide(self, scope: cst.CSTNode) -> None:
        candidates = self._pending.pop(id(scope), [])
        for candidate in candidates:
            uses: set[Use] = set()
            if candidate.name is not None:
                same = [c.node for c in candidates if c.name == candidate.name]
                uses = classify_uses(scope, candidate.name, self.ctx, skip=same, is_container=candidate.container)
            if Use.GRADIENT in uses:
                continue
            escapes = Use.ESCAPES in uses or candidate.escapes_by_name
            if escapes and (Use.TENSOR in uses or candidate.in_module_class) and not iterates_batches(candidate.loop):
                continue  # builds a tensor result for the caller (per-image losses, features): a computation
            self._report(candidate, uses, escapes)

    def _report(self, candidate: _Candidate, uses: set[Use], escapes: bool) -> None:
        module = self.ctx.module
        accumulator = _short(module.code_for_node(candidate.accumulator))
        value = _short(module.code_for_node(candidate.value))
        if _has_backward(candidate.loop, self.ctx):
            effect = (
                "backward frees its saved activations, but the chain of autograd nodes grows every "
                f"iteration and `{accumulator}` can no longer be backpropagated"
            )
        else:
            effect = (
                "this loop never calls backward, so every iteration's graph and the activations it "
                "saved stay alive: memory grows with each iteration"
            )
        message = f"`{accumulator}` accumulates `{value}`, which carries autograd history: {effect}"
        extend = isinstance(candidate.node, cst.Call) and candidate.node.func.attr.value == "extend"
        method = "item" if candidate.scalar and Use.TENSOR not in uses and not extend else "detach"
        replacement = method_call(candidate.value, method)
        shown = module.code_for_node(replacement)
        hint = f"Accumulate `{shown}`" if len(shown) <= 40 else f"Accumulate the value's `.{method}()`"
        fix = self.replace(candidate.value, replacement, hint, safe=not escapes)
        self.report(candidate.node, message, fix, grad_sensitive=True)


def _base_name(expr: cst.BaseExpression) -> Optional[str]:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
        return expr.value.value
    return None


def _started_as_statistic(accumulator: cst.BaseExpression, ctx) -> bool:
    """Was the accumulator started as a number or an empty container (`total = 0`, `losses = []`)?

    Running statistics start that way; a tensor updated in a loop (`latents = latents + step`,
    `embeddings += table(ids)`) is a computation, and is left alone.
    """
    if isinstance(accumulator, cst.Subscript):
        accumulator = accumulator.value
    if isinstance(accumulator, cst.Name):
        start = ctx.initial_value(accumulator.value)
    elif isinstance(accumulator, cst.Attribute) and isinstance(accumulator.value, cst.Name) and accumulator.value.value == "self":
        start = ctx.lookup_self_attribute(accumulator.attr.value)
    else:
        return False
    return start.kind in (Kind.NUMBER, Kind.CONTAINER)


def _in_forward_pass(ctx) -> bool:
    """Inside a forward function (`forward`, `_forward_impl`, `forward_features`, `__call__`): collecting
    outputs there is part of the model's computation, and the caller backpropagates through them."""
    function = ctx.function_node
    return function is not None and is_forward_name(function.name.value)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _has_backward(loop: cst.CSTNode, ctx) -> bool:
    if calls_method(loop, BACKWARD_METHODS):
        return True
    return any(isinstance(n, cst.Call) and ctx.resolve(n.func) in AUTOGRAD_FUNCTIONS for n in code_descendants(loop))
