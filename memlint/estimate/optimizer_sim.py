"""The optimizers `memlint estimate` simulates, by the names its --optimizer option takes.

torch's own classes run as they are, with `foreach=True` (their default on CUDA, whose step
transient differs from the CPU default). Two are reproduced by the state they allocate instead:
8-bit AdamW (bitsandbytes need not be installed; ~2 bytes/parameter as in memlint/optimizers.py:
two 1-byte moments per element for tensors of 4096 elements or more, fp32 moments below that) and
Adafactor (factored second moment, ~0 bytes/parameter), whose torch step cannot run on fake tensors.
"""

from __future__ import annotations

import torch

from memlint.optimizers import OPTIMIZERS

EIGHT_BIT_MIN_ELEMENTS = 4096  # smaller tensors keep 32-bit state in bitsandbytes
EIGHT_BIT_BLOCK = 2048  # one fp32 scale per block of elements, per moment

CHOICES = ("sgd", "sgd-momentum", "adam", "adamw", "adam-amsgrad", "adafactor", "adamw-8bit")


class AdamW8bitStateSim(torch.optim.Optimizer):
    """Allocates what bitsandbytes' AdamW8bit keeps; the update itself is plain AdamW arithmetic
    done in place, so the step's transient stays small as in the fused 8-bit kernel."""

    def __init__(self, params, lr: float = 1e-3) -> None:
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    if p.numel() >= EIGHT_BIT_MIN_ELEMENTS:
                        blocks = -(-p.numel() // EIGHT_BIT_BLOCK)
                        state["state1"] = torch.zeros_like(p, dtype=torch.uint8)
                        state["state2"] = torch.zeros_like(p, dtype=torch.uint8)
                        state["absmax1"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
                        state["absmax2"] = torch.zeros(blocks, dtype=torch.float32, device=p.device)
                    else:
                        state["state1"] = torch.zeros_like(p, dtype=torch.float32)
                        state["state2"] = torch.zeros_like(p, dtype=torch.float32)
                p.add_(p.grad, alpha=-group["lr"])
        return None


class AdafactorStateSim(torch.optim.Optimizer):
    """Allocates what torch.optim.Adafactor keeps: for a matrix, one row and one column vector of
    second-moment statistics (factored); for a vector, a full second moment. torch's own class
    branches on a tensor value in its step, which fake tensors cannot provide."""

    def __init__(self, params, lr: float = 1e-2) -> None:
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    if p.dim() >= 2:
                        state["row_var"] = p.new_zeros(p.shape[:-1])
                        state["col_var"] = p.new_zeros(p.shape[:-2] + p.shape[-1:])
                    else:
                        state["variance"] = torch.zeros_like(p)
                p.add_(p.grad, alpha=-group["lr"])
        return None


def make_optimizer(name: str, params: list) -> torch.optim.Optimizer:
    if name == "sgd":
        return torch.optim.SGD(params, lr=0.01, foreach=True)
    if name == "sgd-momentum":
        return torch.optim.SGD(params, lr=0.01, momentum=0.9, foreach=True)
    if name == "adam":
        return torch.optim.Adam(params, lr=1e-3, foreach=True)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=1e-3, foreach=True)
    if name == "adam-amsgrad":
        return torch.optim.Adam(params, lr=1e-3, amsgrad=True, foreach=True)
    if name == "adafactor":
        return AdafactorStateSim(params)
    if name == "adamw-8bit":
        return AdamW8bitStateSim(params)
    raise ValueError(f"unknown optimizer {name!r} (choose from {', '.join(CHOICES)})")


def table_bytes_per_param(name: str) -> float:
    """Persistent state per parameter from the shared table (for messages and sanity checks)."""
    qualified = {
        "sgd": "torch.optim.SGD", "sgd-momentum": "torch.optim.SGD", "adam": "torch.optim.Adam",
        "adamw": "torch.optim.AdamW", "adam-amsgrad": "torch.optim.Adam", "adafactor": "torch.optim.Adafactor",
        "adamw-8bit": "bitsandbytes.optim.AdamW8bit",
    }[name]  # fmt: skip
    state = OPTIMIZERS[qualified]
    return state.bytes_per_param + (state.momentum_bytes if name == "sgd-momentum" else 0) + (
        state.amsgrad_bytes if name == "adam-amsgrad" else 0
    )
