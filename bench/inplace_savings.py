"""What `inplace=True` on an activation saves, per activation and per context (issue 27, ML003).

    .venv/bin/python bench/inplace_savings.py            # markdown table on stdout
    python bench/inplace_savings.py --device cuda        # the same on a GPU (its caching allocator)

Each activation runs in the place ML003 reports it: right after a Linear (whose output is not
needed for its own backward), followed by another Linear. The model is a transformer-style
feed-forward block, `Linear(D, 4D) -> act -> Linear(4D, D)`, on a batch of B x D float32, so the
activation (B x 4D) is the largest tensor of the pass: 4 MiB here. Four contexts:

- training step: forward, `out.sum().backward()` (inputs and parameters require grad);
- forward, grad on: the forward half of a training step, no backward;
- no_grad: forward under `torch.no_grad()`;
- inference_mode: forward under `torch.inference_mode()`.

The peak is the exact tensor-storage tracker of `memlint confirm`
(memlint.confirm.tracker.StorageTracker, a TorchDispatchMode below autograd, so the copy autograd
makes of an input that an in-place op overwrites is counted), on the CPU; parameters and input are
counted from the start. Each run has a fresh model and input. With `--device cuda` the peak is the
GPU caching allocator's (`torch.cuda.max_memory_allocated()` minus what was allocated before the
model was built), CUDA's own kernels (cuDNN's batch norm among them) doing the work.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys

import torch
from torch import nn

sys.path.insert(0, ".")
from memlint.confirm.tracker import StorageTracker  # noqa: E402

B, D = 256, 1024
MIB = 1 << 20

ACTIVATIONS = {
    "ReLU": lambda inplace: nn.ReLU(inplace=inplace),
    "ReLU6": lambda inplace: nn.ReLU6(inplace=inplace),
    "LeakyReLU": lambda inplace: nn.LeakyReLU(0.1, inplace=inplace),
    "ELU": lambda inplace: nn.ELU(inplace=inplace),
    "CELU": lambda inplace: nn.CELU(inplace=inplace),
    "SELU": lambda inplace: nn.SELU(inplace=inplace),
    "Hardtanh": lambda inplace: nn.Hardtanh(inplace=inplace),
    "Threshold": lambda inplace: nn.Threshold(0.1, 0.0, inplace=inplace),
    "Hardsigmoid": lambda inplace: nn.Hardsigmoid(inplace=inplace),
    "SiLU": lambda inplace: nn.SiLU(inplace=inplace),
    "Hardswish": lambda inplace: nn.Hardswish(inplace=inplace),
    "Mish": lambda inplace: nn.Mish(inplace=inplace),
    "Dropout": lambda inplace: nn.Dropout(0.1, inplace=inplace),
}
# nn.GELU, nn.Sigmoid, nn.Tanh have no `inplace` argument (torch 2.13).

CONTEXTS = ("training step", "forward, grad on", "no_grad", "inference_mode")


def _model(act: str, inplace: bool) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Linear(D, 4 * D), ACTIVATIONS[act](inplace), nn.Linear(4 * D, D)).train()


def _step(model: nn.Module, x: torch.Tensor, context: str) -> None:
    if context == "training step":
        model(x).sum().backward()
    elif context == "forward, grad on":
        model(x).sum()
    elif context == "no_grad":
        with torch.no_grad():
            model(x).sum()
    else:
        with torch.inference_mode():
            model(x).sum()


@contextlib.contextmanager
def _measured(device: str, tracked):
    """Measure the peak of the block's tensor memory on `device`; yields a dict whose "peak" is set
    on exit. `tracked()` returns the tensors that exist before the block (CPU: counted from the start)."""
    result = {}
    if device == "cpu":
        tensors = tracked()
        tracker = StorageTracker(device_type="cpu")
        tracker.track(tensors)
        with tracker:
            yield result
        result["peak"] = tracker.usage.peak
        return
    gc.collect()
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    before = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    tracked()
    yield result
    torch.cuda.synchronize()
    result["peak"] = torch.cuda.max_memory_allocated() - before


def tracker_peak(act: str, inplace: bool, context: str, device: str = "cpu") -> int:
    made = {}

    def build():
        made["model"] = _model(act, inplace).to(device)
        made["x"] = torch.randn(B, D, requires_grad=context == "training step", device=device)
        return [*made["model"].parameters(), made["x"]]

    with _measured(device, build) as result:
        _step(made["model"], made["x"], context)
    return result["peak"]


def bn_block_peak(act: str, inplace: bool, context: str, device: str = "cpu") -> int:
    """`Conv2d -> BatchNorm2d -> act -> Conv2d` (the shape of memlint's ML003 fixture): batch norm's
    output is the activation's input. One activation map = 32 x 64 x 32 x 32 float32 = 8 MiB."""
    made = {}

    def build():
        torch.manual_seed(0)
        made["model"] = nn.Sequential(
            nn.Conv2d(64, 64, 3, padding=1), nn.BatchNorm2d(64), ACTIVATIONS[act](inplace), nn.Conv2d(64, 64, 3, padding=1)
        ).to(device).train()
        made["x"] = torch.randn(32, 64, 32, 32, requires_grad=context == "training step", device=device)
        return [*made["model"].parameters(), *made["model"].buffers(), made["x"]]

    with _measured(device, build) as result:
        _step(made["model"], made["x"], context)
    return result["peak"]


class _Shift(nn.Module):
    """`x + 1`: autograd keeps nothing of `x` for it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


def deep_training_peak(act: str, inplace: bool, blocks: int = 8, batch: int = 2048, width: int = 512, then: str = "", device: str = "cpu") -> int:
    """A training step of `blocks` x (Linear(width, width) -> act), then Linear(width, 10): the
    peak is reached where backward starts, with every activation kept for backward live.  With
    `then="shift"`, `x + 1` (autograd keeps nothing of its input) reads each activation; with
    `then="avgpool"`, an AvgPool1d(1)."""
    made = {}

    def build():
        torch.manual_seed(0)
        layers: list[nn.Module] = []
        for _ in range(blocks):
            layers += [nn.Linear(width, width), ACTIVATIONS[act](inplace)] + {"": [], "shift": [_Shift()], "avgpool": [nn.AvgPool1d(1)]}[then]
        made["model"] = nn.Sequential(*layers, nn.Linear(width, 10)).to(device)
        made["x"] = torch.randn(batch, width, device=device)
        return [*made["model"].parameters(), made["x"]]

    with _measured(device, build) as result:
        made["model"](made["x"]).sum().backward()
    return result["peak"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    device = parser.parse_args().device
    torch.set_num_threads(1)
    with contextlib.suppress(Exception):
        torch.backends.mkldnn.enabled = False  # the same kernels in every run
    where = f"{torch.cuda.get_device_name()} (caching allocator)" if device == "cuda" else "CPU (storage tracker)"
    if device == "cuda":  # cuBLAS makes its workspace (64 MiB on an H100) at the first matrix product, then keeps it:
        a = torch.randn(64, 64, device="cuda", requires_grad=True)  # make it now, before any measured row
        (a @ a).sum().backward()
        del a
    print(f"torch {torch.__version__}, {where}; batch {B} x {D} float32: one activation (B x 4D) = {B * 4 * D * 4 / MIB:.0f} MiB")
    print()
    print("| activation | context | peak out of place (MiB) | peak `inplace=True` (MiB) | saved (MiB) |")
    print("|---|---|---|---|---|")
    for act in ACTIVATIONS:
        for context in CONTEXTS:
            before, after = tracker_peak(act, False, context, device), tracker_peak(act, True, context, device)
            print(
                f"| {act} | {context} | {before / MIB:.1f} | {after / MIB:.1f} | {(before - after) / MIB:.1f} |"
            )

    print()
    print("Training step of 8 x (Linear(512, 512) -> act), then Linear(512, 10), batch 2048 (one activation = 4 MiB):")
    print()
    print("| activation | peak out of place (MiB) | peak `inplace=True` (MiB) | saved (MiB) | saved, `x + 1` after each activation (MiB) | saved, AvgPool1d(1) after each (MiB) |")
    print("|---|---|---|---|---|---|")
    for act in ACTIVATIONS:
        before, after = deep_training_peak(act, False, device=device), deep_training_peak(act, True, device=device)
        shifted = deep_training_peak(act, False, then="shift", device=device) - deep_training_peak(act, True, then="shift", device=device)
        pooled = deep_training_peak(act, False, then="avgpool", device=device) - deep_training_peak(act, True, then="avgpool", device=device)
        print(f"| {act} | {before / MIB:.1f} | {after / MIB:.1f} | {(before - after) / MIB:.1f} | {shifted / MIB:.1f} | {pooled / MIB:.1f} |")

    print()
    print("Conv2d(64, 64, 3) -> BatchNorm2d -> act -> Conv2d(64, 64, 3), batch 32 x 64 x 32 x 32 (one activation map = 8 MiB):")
    print()
    print("| activation | context | peak out of place (MiB) | peak `inplace=True` (MiB) | saved (MiB) |")
    print("|---|---|---|---|---|")
    for act in ("ReLU", "SiLU"):
        for context in CONTEXTS:
            before, after = bn_block_peak(act, False, context, device), bn_block_peak(act, True, context, device)
            print(f"| {act} | {context} | {before / MIB:.1f} | {after / MIB:.1f} | {(before - after) / MIB:.1f} |")


if __name__ == "__main__":
    main()
