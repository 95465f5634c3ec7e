"""ML009 cache-flush-in-loop."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.iteration import every_iteration, step_loop_called_functions
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml009_cache_flush_in_loop.meta import META

_EMPTY_CACHE = frozenset(
    {
        "torch.cuda.empty_cache",
        "torch.cuda.memory.empty_cache",
        "torch.mps.empty_cache",
        "torch.xpu.empty_cache",
        "torch.xpu.memory.empty_cache",
    }
)
_GC_COLLECT = "gc.collect"


class CacheFlushInLoop(Rule):
    """
    ## What it does
    Finds `torch.cuda.empty_cache()` or `gc.collect()` run on every iteration of a training or
    evaluation loop. The call may be in the loop body, in a per-batch hook of Lightning (`training_step`,
    `on_train_batch_end`, ...) or of a `transformers` trainer callback (`on_step_end`), or in a
    function such a loop or hook calls on every iteration, directly or through other helpers, in
    the same file or in another file linted with it (the flush inside the helper is reported, and
    the message names the loop).

    A loop counts as a training or evaluation loop when the semantic model gives it the scope of a
    step: it iterates a data loader (one the file builds, or something named like one), or its own
    body (not a nested loop) calls backward or an optimizer's `step()` (also `for epoch in
    range(n)`: full-batch training), or calls something named like a model or a loss and is no
    epoch loop, or it walks a dataset's items by index (`for idx in range(len(dataset))` reading
    `dataset[idx]`) and runs a model on each, directly or through a method that runs one. Not reported: a flush once per epoch (in an outer loop) or after the loop; in a
    fixed small loop (`for i in range(10)`); behind an `if` (a modulo counter, a config flag); in an
    exception handler (an out-of-memory fallback). A condition that only checks that CUDA is
    available does not count.

    ## Why is this bad?
    `empty_cache()` returns the caching allocator's free blocks to the driver. It does not free any
    tensor that is still referenced, so it cannot lower the peak of the step; the next iteration then
    pays for `cudaMalloc` again for the same blocks, which slows training. `gc.collect()` runs a full
    garbage-collection pass on every step for the same non-benefit.

    ## Example
    ```python
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch.cuda.empty_cache()
    ```

    ## Use instead
    ```python
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    torch.cuda.empty_cache()  # once, after the loop, if another process needs the memory
    ```

    ## Fix safety
    No automatic fix: where the flush belongs (after the loop, once per epoch, in an OOM handler) is
    a judgement call; the message says where to move it.

    ## Measured effect
    `fixtures/ml009_gc_in_loop.py`, PyTorch 2.13 on CPU, exact tensor-storage tracker, `memlint confirm fixtures` (docs/measured-savings.md): `gc.collect()` on every training iteration
    and the same loop without it both peak at 3,241,048 B: the flush lowers no peak (tensors are
    freed by reference counting as soon as the step drops them); it only costs time. On CUDA,
    `empty_cache()` likewise frees no live tensor.
    """

    meta = META
    severity = Severity.WARNING
    fix_safety = "none"

    VALID = [
        Valid(  # once per epoch
            """
import torch
for epoch in range(10):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    torch.cuda.empty_cache()
"""
        ),
        Valid(  # every k steps
            """
import torch
for step, (x, y) in enumerate(train_loader):
    loss = criterion(model(x), y)
    loss.backward()
    if step % 100 == 0:
        torch.cuda.empty_cache()
"""
        ),
        Valid(  # opt-in through a config flag
            """
import gc
for batch in loader:
    out = model(batch)
    if args.free_memory:
        gc.collect()
"""
        ),
        Valid(  # only in the out-of-memory handler
            """
import torch
for batch in loader:
    try:
        out = model(batch)
    except torch.cuda.OutOfMemoryError:
        torch.cuda.empty_cache()
"""
        ),
        Valid(  # a loop over models in a benchmark, not a training loop
            """
import gc
import torch
for name in ["resnet18", "resnet50"]:
    build_and_measure(name)
    gc.collect()
    torch.cuda.empty_cache()
"""
        ),
        Valid(  # a project's own function called empty_cache
            """
import torch
def empty_cache():
    CACHE.clear()
for batch in loader:
    out = model(batch)
    empty_cache()
"""
        ),
        Valid(  # once per epoch: the loop hands the loader to a per-epoch function named like a model
            """
import torch
def train_sam_encoder(loader, model, criterion, optimizer):
    for images, masks in loader:
        loss = criterion(model(images), masks)
        loss.backward()
        optimizer.step()
for epoch in range(start_epoch, epochs + 1):
    torch.cuda.empty_cache()
    train_sam_encoder(train_loader, model, criterion, optimizer)
    torch.cuda.empty_cache()
"""
        ),
        Valid(  # the same per-epoch flush in a helper the epoch loop calls
            """
import torch
def cleanup():
    torch.cuda.empty_cache()
for epoch in range(epochs):
    train_encoder(train_loader, model)
    cleanup()
"""
        ),
        Valid(  # the helper is called only conditionally
            """
import torch
def cleanup():
    torch.cuda.empty_cache()
for step, batch in enumerate(loader):
    out = model(batch)
    if step % 50 == 0:
        cleanup()
"""
        ),
        Valid(  # an epoch loop that steps a scheduler (named after its optimizer), and the evaluation it calls once per epoch
            """
import torch
class Runner:
    def fit(self):
        for epoch in range(self.epochs):
            torch.cuda.empty_cache()
            self.net_optimizer_scheduler.step()
            for inputs, targets in self.splits["train"]:
                self.train_on(inputs, targets)
            self.evaluate()
    def evaluate(self):
        torch.cuda.empty_cache()
        for inputs, targets in self.splits["val"]:
            self.net(inputs)
"""
        ),
        Valid(  # a fixed small loop: ten samples for a figure, not a step per batch
            """
import torch
for i in range(10):
    image = model(noise[i])
    save_image(image, f"sample_{i}.png")
    torch.cuda.empty_cache()
"""
        ),
        Valid(  # a walk over a dataset's items that runs no model: preprocessing, not a step
            """
import torch
def cache_items(dataset):
    for idx in range(len(dataset)):
        item = dataset[idx]
        save_tensor(item["image"], f"cache/{idx}.pt")
        torch.cuda.empty_cache()
"""
        ),
        Valid(  # each item is a task whose own loader the loop builds and hands to an inner training pass
            """
import torch
from torch.utils.data import DataLoader
def meta_train(model, meta_dataset, inner_train):
    for idx in range(len(meta_dataset)):
        task = meta_dataset[idx]
        support_loader = DataLoader(task.support, batch_size=32)
        inner_train(model, support_loader)
        query_out = model(task.query_x)
        torch.cuda.empty_cache()
"""
        ),
        Valid(  # the helper calls a tokenizer named `encoder`: a name, no evidence of a model
            """
import torch
class Cacher:
    def __init__(self, encoder):
        self.encoder = encoder
    def tokenize(self, text):
        return self.encoder(text)
    def build_cache(self, dataset):
        for idx in range(len(dataset)):
            item = dataset[idx]
            ids = self.tokenize(item["text"])
            torch.save(ids, f"cache/{idx}.pt")
            torch.cuda.empty_cache()
"""
        ),
        Valid(  # the helper builds a network and runs none
            """
import torch
import torchvision
class Search:
    def fresh(self):
        self.backbone = torchvision.models.resnet50()
    def sweep(self, dataset):
        for idx in range(len(dataset)):
            cfg = dataset[idx]
            self.fresh()
            torch.cuda.empty_cache()
"""
        ),
        Valid(  # the name of a function that runs a model is rebound by a later import: the call reaches that
            """
import torch
def evaluate(model, x):
    model.eval()
    return model(x)
from utils import summarize as evaluate
def walk(dataset):
    for idx in range(len(dataset)):
        item = dataset[idx]
        evaluate(item)
        torch.cuda.empty_cache()
"""
        ),
    ]

    INVALID = [
        Invalid(  # a walk over a dataset's items, each run through a module function that runs the network
            """
import torch
def evaluate(model, x):
    model.eval()
    return model(x)
def walk(model, dataset):
    for idx in range(len(dataset)):
        item = dataset[idx]
        evaluate(model, item)
        torch.cuda.empty_cache()
""",
            line=9,
            column=9,
            message="every iteration",
        ),
        Invalid(  # a walk over a dataset's items, each run through a method that runs the network
            """
import torch
class VideoModel:
    def test(self):
        self.net_g.eval()
        with torch.no_grad():
            self.output = self.net_g(self.lq)
    def validation(self, dataset, rank, world_size):
        for idx in range(rank, len(dataset), world_size):
            val_data = dataset[idx]
            self.feed_data(val_data)
            self.test()
            torch.cuda.empty_cache()
""",
            line=12,
            column=13,
            message="every iteration",
        ),
        Invalid(  # a loop over a DataLoader the file builds, whatever its name: one batch per iteration
            """
import torch
from torch.utils.data import DataLoader
pairs = DataLoader(dataset, batch_size=64)
for batch in pairs:
    process(batch)
    torch.cuda.empty_cache()
""",
            line=6,
            column=5,
        ),
        Invalid(  # a loop that hands a loader over but also steps itself: one step per iteration
            """
import torch
for epoch in range(epochs):
    batch = sample_batch(train_loader)
    loss = criterion(model(batch), target)
    loss.backward()
    optimizer.step()
    torch.cuda.empty_cache()
""",
            line=7,
            column=5,
        ),
        Invalid(  # a worker loop that runs a model on every request
            """
import torch
while True:
    request = queue.get()
    with torch.no_grad():
        reply = model(request)
    send(reply)
    torch.cuda.empty_cache()
""",
            line=7,
            column=5,
        ),
        Invalid(  # the source article's tip: clean up at the beginning of every iteration
            """
import torch
for epoch in range(epochs):
    torch.cuda.empty_cache()
    optimizer.zero_grad()
    outputs = network(input)
    loss = criterion(outputs, label)
    loss.backward()
    optimizer.step()
""",
            line=3,
            column=5,
            message="every iteration",
        ),
        Invalid(  # in a helper the training loop calls
            """
import torch
def free_memory():
    torch.cuda.empty_cache()
def train(model, loader, optimizer):
    for x, y in loader:
        loss = model(x, y)
        loss.backward()
        optimizer.step()
        free_memory()
""",
            line=3,
            column=5,
            message="free_memory",
        ),
        Invalid(  # gc.collect through an alias, behind a CUDA availability check
            """
import gc as garbage
import torch
for x, y in val_loader:
    with torch.no_grad():
        preds = model(x)
    if torch.cuda.is_available():
        garbage.collect()
""",
            line=7,
            column=9,
        ),
        Invalid(  # in a helper a Lightning per-batch hook calls on every batch
            """
import torch
import lightning as L
def release():
    torch.cuda.empty_cache()
class Model(L.LightningModule):
    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.log("loss", outputs["loss"])
        release()
""",
            line=4,
            column=5,
            message="on_train_batch_end",
        ),
        Invalid(  # a Lightning per-batch hook
            """
import torch
import lightning as L
class Model(L.LightningModule):
    def training_step(self, batch, batch_idx):
        loss = self(batch).sum()
        torch.cuda.empty_cache()
        return loss
""",
            line=6,
            column=9,
            message="training_step",
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_helpers: list[tuple[cst.Call, str, tuple]] = []

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        qualified = ctx.resolve(node.func)
        if qualified not in _EMPTY_CACHE and qualified != _GC_COLLECT:
            return
        if not every_iteration(ctx):
            return
        what = "torch.cuda.empty_cache()" if qualified != _GC_COLLECT else "gc.collect()"
        loop = ctx.loop
        if loop is not None:
            if ctx.model.loop_scope(loop).kind == "step":
                self.report(node, _message(what, f"every iteration of `{_header(loop, ctx)}`", qualified))
            return
        key = ctx.function_key
        if key is None:
            return
        if key[0] == "method" and key[-1] in tables.PER_BATCH_HOOKS:
            self.report(node, _message(what, f"every batch (`{key[-1]}` runs once per batch)", qualified))
            return
        self._in_helpers.append((node, what, key, qualified))

    def finish(self, facts) -> None:
        if not self._in_helpers:
            return
        model = self.ctx.model
        per_step = step_loop_called_functions(facts, lambda loop: model.loop_scope(loop).kind == "step")
        project = self.ctx.project
        for node, what, key, qualified in self._in_helpers:
            if key in per_step:
                where = f"every iteration of a training/evaluation loop (through `{key[-1]}()`)"
                self.report(node, _message(what, where, qualified))
            elif project.per_step_of(key) is not None:  # a loop or a per-batch hook, maybe in another file
                where = f"{project.per_step_of(key)}, through `{key[-1]}()`"
                self.report(node, _message(what, where, qualified))


def _header(loop, ctx) -> str:
    if isinstance(loop, cst.For):
        text = f"for {ctx.module.code_for_node(loop.target)} in {ctx.module.code_for_node(loop.iter)}"
    else:
        text = f"while {ctx.module.code_for_node(loop.test)}"
    text = " ".join(text.split())
    return text if len(text) <= 50 else text[:49] + "…"


def _message(what: str, where: str, qualified: Optional[str]) -> str:
    if qualified == _GC_COLLECT:
        effect = (
            "a full garbage-collection pass per step frees no tensor that is still referenced and "
            "slows every step"
        )
    else:
        effect = (
            "it frees no live tensor, so the peak does not drop, and it returns the cached blocks so "
            "the next iteration pays for cudaMalloc again"
        )
    return f"`{what}` runs on {where}: {effect}; call it once after the loop (or per epoch) if at all"
