"""What `inplace=True` on an activation saves, per activation and per context (issue 27, ML003).

    .venv/bin/python bench/inplace_savings.py            # markdown table on stdout

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
counted from the start. Each run has a fresh model and input.
"""

from __future__ import annotations

import contextlib
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


def tracker_peak(act: str, inplace: bool, context: str) -> int:
    model = _model(act, inplace)
    x = torch.randn(B, D, requires_grad=context == "training step")
    tracker = StorageTracker(device_type="cpu")
    tracker.track([*model.parameters(), x])
    with tracker:
        _step(model, x, context)
    return tracker.usage.peak



class _Shift(nn.Module):
    """`x + 1`: autograd keeps nothing of `x` for it."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + 1


def deep_training_peak(act: str, inplace: bool, blocks: int = 8, batch: int = 2048, width: int = 512, then: str = "") -> int:
    """A training step of `blocks` x (Linear(width, width) -> act), then Linear(width, 10): the
    peak is reached where backward starts, with every activation kept for backward live.  With
    `then="shift"`, `x + 1` (autograd keeps nothing of its input) reads each activation; with
    `then="avgpool"`, an AvgPool1d(1)."""
    torch.manual_seed(0)
    layers: list[nn.Module] = []
    for _ in range(blocks):
        layers += [nn.Linear(width, width), ACTIVATIONS[act](inplace)] + {"": [], "shift": [_Shift()], "avgpool": [nn.AvgPool1d(1)]}[then]
    model = nn.Sequential(*layers, nn.Linear(width, 10))
    x = torch.randn(batch, width)
    tracker = StorageTracker(device_type="cpu")
    tracker.track([*model.parameters(), x])
    with tracker:
        model(x).sum().backward()
    return tracker.usage.peak


def main() -> None:
    torch.set_num_threads(1)
    with contextlib.suppress(Exception):
        torch.backends.mkldnn.enabled = False  # the same kernels in every run
    print(f"torch {torch.__version__}; batch {B} x {D} float32: one activation (B x 4D) = {B * 4 * D * 4 / MIB:.0f} MiB")
    print()
    print("| activation | context | peak out of place (MiB) | peak `inplace=True` (MiB) | saved (MiB) |")
    print("|---|---|---|---|---|")
    for act in ACTIVATIONS:
        for context in CONTEXTS:
            before, after = tracker_peak(act, False, context), tracker_peak(act, True, context)
            print(
                f"| {act} | {context} | {before / MIB:.1f} | {after / MIB:.1f} | {(before - after) / MIB:.1f} |"
            )

    print()
    print("Training step of 8 x (Linear(512, 512) -> act), then Linear(512, 10), batch 2048 (one activation = 4 MiB):")
    print()
    print("| activation | peak out of place (MiB) | peak `inplace=True` (MiB) | saved (MiB) | saved, `x + 1` after each activation (MiB) | saved, AvgPool1d(1) after each (MiB) |")
    print("|---|---|---|---|---|---|")
    for act in ACTIVATIONS:
        before, after = deep_training_peak(act, False), deep_training_peak(act, True)
        shifted = deep_training_peak(act, False, then="shift") - deep_training_peak(act, True, then="shift")
        pooled = deep_training_peak(act, False, then="avgpool") - deep_training_peak(act, True, then="avgpool")
        print(f"| {act} | {before / MIB:.1f} | {after / MIB:.1f} | {(before - after) / MIB:.1f} | {shifted / MIB:.1f} | {pooled / MIB:.1f} |")


if __name__ == "__main__":
    main()
