"""ML013 host-then-device."""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from memlint.analysis.call_edits import append_keyword
from memlint.analysis.iteration import every_iteration, is_step_loop, step_loop_called_functions
from memlint.analysis.precision_api import keyword
from memlint.analysis.tables import TORCH_FACTORIES
from memlint.diagnostics import Severity
from memlint.rule import Invalid, Rule, Valid
from memlint.rules.ml013_host_then_device.meta import META

# Their values depend on the device's random generator: moving creation to the device changes them.
_RANDOM = frozenset({"rand", "randn", "randint", "randperm"})
# Factory keywords that `device=` can join without changing the result.
_COMPATIBLE_KEYWORDS = frozenset({"dtype", "size"})
_DEVICE_NAME = re.compile(r"(?:^|_)(?:device|dev|gpu|gpu_id|rank|local_rank)$|device$", re.I)


class HostThenDevice(Rule):
    """
    ## What it does
    Finds a tensor created on the host and then moved to the accelerator — `torch.zeros(n).cuda()`,
    `torch.randn(...).to(device)`, `torch.tensor(data).cuda()` — inside an `nn.Module`'s `forward`,
    or on every iteration of a training or evaluation loop (in its body, or in a function the loop
    calls unconditionally in the same file). A training or evaluation loop iterates over something
    named like a data loader or calls backward, an optimizer step or something named like a model;
    one-off loops (over layers when fusing them for deployment, over files) are not hot paths and
    are not reported.

    Only torch's factories count (resolved through imports), only when the factory has no `device=`
    of its own, and only when the target is recognisably a device: `.cuda()`, `.to("cuda")`,
    `.to(device)` / `.to(self.device)` / `.to(x.device)` / `.to(torch.device(...))` / a rank.
    `.to(other)` with an argument that may be a dtype or a tensor is not reported. Code behind an
    `if` in a loop is not reported; in `forward` it is (it runs on every call that takes the branch).

    ## Why is this bad?
    The tensor is first allocated and filled in host memory, then a second allocation is made on the
    device and the data is copied over (a synchronising transfer for pageable memory), on every call.
    Creating it on the device skips the host buffer and the copy.

    ## Example
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1]).to(x.device)
        return x * mask
    ```

    ## Use instead
    ```python
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
    ```

    ## Fix safety
    Safe for deterministic factories (`zeros`, `ones`, `empty`, `full`, `arange`, `linspace`,
    `logspace`, `eye`, `tensor`) whose other keywords are only `dtype`; `non_blocking=` of the move
    is dropped (there is no transfer left). Unsafe for random factories (`rand`, `randn`, `randint`,
    `randperm`): the device's generator produces different numbers than the CPU's for the same seed.
    No fix when the factory has other keywords (`requires_grad=True` would change which tensor is
    the leaf, `generator=` is a CPU generator) or the move has other arguments (a dtype).

    ## Measured effect
    Not measured by memlint's fixtures yet: one host buffer of the tensor's size and one
    host-to-device copy per call.
    """

    meta = META
    severity = Severity.INFO
    fix_safety = "mixed"

    VALID = [
        Valid(
            """
import torch
def forward(self, x):
    return x + torch.zeros(x.shape, device=x.device)
"""
        ),
        Valid(  # once, at setup
            """
import torch
buffer = torch.zeros(1024).cuda()
for x in loader:
    out = model(x + buffer)
"""
        ),
        Valid(  # a dtype, not a device
            """
import torch
for x in loader:
    ids = torch.arange(8).to(torch.long)
"""
        ),
        Valid(  # only on the first iteration
            """
import torch
state = None
for x in loader:
    if state is None:
        state = torch.zeros(8).cuda()
"""
        ),
        Valid(  # a project's own zeros
            """
import torch
from mylib import zeros
for x in loader:
    buf = zeros(8).cuda()
"""
        ),
        Valid(  # a one-off loop over branches (reparameterisation), not a training loop
            """
import torch
def fuse(kernel, n):
    return kernel, torch.zeros(n).to(kernel.device)
for conv, bn in zip(convs, bns):
    k, b = fuse(conv.weight, bn.num_features)
"""
        ),
        Valid(  # from_numpy must start on the host
            """
import torch
for arr in arrays:
    t = torch.from_numpy(arr).cuda()
"""
        ),
    ]

    INVALID = [
        Invalid(
            """
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1]).to(x.device)
        return x * mask
""",
            line=5,
            column=16,
            message="host",
            fixed="""
import torch
import torch.nn as nn
class Net(nn.Module):
    def forward(self, x):
        mask = torch.ones(x.shape[0], x.shape[1], device=x.device)
        return x * mask
""",
        ),
        Invalid(  # .cuda() in a loop
            """
import torch
for batch in loader:
    labels = torch.tensor(batch["labels"], dtype=torch.long).cuda()
    out = model(batch["x"])
""",
            line=3,
            column=14,
            fixed="""
import torch
for batch in loader:
    labels = torch.tensor(batch["labels"], dtype=torch.long, device="cuda")
    out = model(batch["x"])
""",
        ),
        Invalid(  # random values change with the generator: unsafe
            """
import torch
for step in range(steps):
    noise = torch.randn(16, 128).to(device, non_blocking=True)
    fake = generator(noise)
""",
            line=3,
            column=13,
            unsafe=True,
            fixed="""
import torch
for step in range(steps):
    noise = torch.randn(16, 128, device=device)
    fake = generator(noise)
""",
        ),
        Invalid(  # in a helper the training loop calls on every iteration
            """
import torch
def make_targets(labels):
    return torch.tensor(labels).cuda()
for images, labels in train_loader:
    loss = criterion(model(images.cuda()), make_targets(labels))
    loss.backward()
""",
            line=3,
            column=12,
            message="make_targets",
            fixed="""
import torch
def make_targets(labels):
    return torch.tensor(labels, device="cuda")
for images, labels in train_loader:
    loss = criterion(model(images.cuda()), make_targets(labels))
    loss.backward()
""",
        ),
        Invalid(  # requires_grad: reported without a fix
            """
import torch
for x in loader:
    w = torch.zeros(4, requires_grad=True).cuda()
""",
            line=3,
            column=9,
        ),
    ]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._in_helpers: list[tuple[cst.Call, tuple]] = []

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        func = node.func
        if not isinstance(func, cst.Attribute) or func.attr.value not in ("cuda", "to"):
            return
        factory = func.value
        if not isinstance(factory, cst.Call):
            return
        qualified = ctx.resolve(factory.func)
        if qualified is None or qualified.rpartition(".")[0] != "torch" or qualified.rpartition(".")[2] not in TORCH_FACTORIES:
            return
        if keyword(factory, "device") is not None or any(a.star for a in factory.args):
            return
        device = _target_device(node)
        if device is None:
            return
        in_forward = ctx.class_name is not None and ctx.function_node is not None and ctx.function_node.name.value == "forward"
        if in_forward or (ctx.in_loop and every_iteration(ctx) and is_step_loop(ctx.loop)):
            self._report(node, factory, device, "inside `forward`" if in_forward else "on every loop iteration")
        elif not ctx.in_loop and ctx.function_key is not None and every_iteration(ctx):
            self._in_helpers.append((node, ctx.function_key))

    def finish(self, facts) -> None:
        if not self._in_helpers:
            return
        per_step = step_loop_called_functions(facts)
        for node, key in self._in_helpers:
            if key in per_step:
                where = f"in `{key[-1]}()`, which a training/evaluation loop calls on every iteration"
                self._report(node, node.func.value, _target_device(node), where)

    def _report(self, node: cst.Call, factory: cst.Call, device: Optional[cst.BaseExpression], where: str) -> None:
        module = self.ctx.module
        name = self.ctx.resolve(factory.func).rpartition(".")[2]
        fix = None
        fixable_move = _move_is_only_device(node)
        fixable_factory = all(a.keyword is None or a.keyword.value in _COMPATIBLE_KEYWORDS for a in factory.args)
        if fixable_move and fixable_factory and device is not None:
            new = append_keyword(factory, "device", device)
            fix = self.replace(
                node,
                new,
                f"Create it on the device: `torch.{name}(..., device={module.code_for_node(device)})`",
                safe=name not in _RANDOM,
            )
        text = " ".join(module.code_for_node(node).split())
        text = text if len(text) <= 60 else text[:59] + "…"
        self.report(
            node,
            f"`{text}` {where} creates the tensor in host memory and then copies it to the device each "
            f"time; create it there: `torch.{name}(..., device=...)`",
            fix,
        )


def _target_device(move: cst.Call) -> Optional[cst.BaseExpression]:
    """The device a `.cuda()` / `.to(...)` call moves to, when it is recognisably a device."""
    method = move.func.attr.value  # type: ignore[attr-defined]
    positional = [a for a in move.args if a.keyword is None and not a.star]
    named = keyword_value(move, "device")
    if method == "cuda":
        if named is not None:
            return named
        return positional[0].value if positional else cst.SimpleString('"cuda"')
    candidate = named if named is not None else (positional[0].value if positional else None)
    if candidate is None:
        return None
    return candidate if _is_device(candidate) else None


def keyword_value(call: cst.Call, name: str) -> Optional[cst.BaseExpression]:
    arg = keyword(call, name)
    return arg.value if arg is not None else None


def _is_device(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return isinstance(value, str) and value.split(":")[0] in ("cuda", "mps", "xpu")
    if isinstance(expr, cst.Name):
        return bool(_DEVICE_NAME.search(expr.value))
    if isinstance(expr, cst.Attribute):
        return bool(_DEVICE_NAME.search(expr.attr.value))
    if isinstance(expr, cst.Call) and isinstance(expr.func, (cst.Name, cst.Attribute)):
        func = expr.func
        name = func.value if isinstance(func, cst.Name) else func.attr.value
        return name == "device"
    return False


def _move_is_only_device(move: cst.Call) -> bool:
    """`.to(device)`, `.to(device=device)`, `.cuda()`, optionally with `non_blocking=`."""
    others = [a for a in move.args if a.keyword is None or a.keyword.value not in ("device", "non_blocking")]
    positional = [a for a in others if a.keyword is None]
    return len(positional) <= 1 and len(others) == len(positional) and not any(a.star for a in move.args)
