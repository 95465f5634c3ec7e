"""The optimizers `memlint estimate` simulates, by the names its --optimizer option takes.

torch's own classes run as they are, with `foreach=True` (their default on CUDA, whose step
transient differs from the CPU default). Two are reproduced by the state they allocate instead:
8-bit AdamW (bitsandbytes need not be installed; ~2 bytes/parameter as in memlint/analysis/optimizers.py:
two 1-byte moments per element for tensors of 4096 elements or more, fp32 moments below that) and
Adafactor (factored second moment, ~0 bytes/parameter), whose torch step cannot run on fake tensors.
"""

from __future__ import annotations

import torch

EIGHT_BIT_MIN_ELEMENTS = 4096  # smaller tensors keep 32-bit state in bitsandbytes
EIGHT_BIT_BLOCK = 2048  # one fp32 scale per block of elements, per moment

CHOICES = ("sgd", "sgd-momentum", "adam", "adamw", "adam-amsgrad", "adafactor", "adamw-8bit")


class _StateSim(torch.optim.Optimizer):
    """An optimizer that allocates a real optimizer's state on its first step (`_new_state`) and
    updates in place with plain SGD arithmetic, so the step's transient stays small."""

    def __init__(self, params, lr: float) -> None:
        super().__init__(params, {"lr": lr})

    def _new_state(self, p: torch.Tensor) -> dict:
        raise NotImplementedError

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if not self.state[p]:
                    self.state[p].update(self._new_state(p))
                p.add_(p.grad, alpha=-group["lr"])
        return None


class AdamW8bitStateSim(_StateSim):
    """Allocates what bitsandbytes' AdamW8bit keeps; its fused 8-bit kernel updates in place too."""

    def __init__(self, params, lr: float = 1e-3) -> None:
        super().__init__(params, lr)

    def _new_state(self, p: torch.Tensor) -> dict:
        if p.numel() < EIGHT_BIT_MIN_ELEMENTS:
            return {"state1": torch.zeros_like(p, dtype=torch.float32), "state2": torch.zeros_like(p, dtype=torch.float32)}
        blocks = -(-p.numel() // EIGHT_BIT_BLOCK)
        return {
            "state1": torch.zeros_like(p, dtype=torch.uint8),
            "state2": torch.zeros_like(p, dtype=torch.uint8),
            "absmax1": torch.zeros(blocks, dtype=torch.float32, device=p.device),
            "absmax2": torch.zeros(blocks, dtype=torch.float32, device=p.device),
        }


class AdafactorStateSim(_StateSim):
    """Allocates what torch.optim.Adafactor keeps: for a matrix, one row and one column vector of
    second-moment statistics (factored); for a vector, a full second moment. torch's own class
    branches on a tensor value in its step, which fake tensors cannot provide."""

    def __init__(self, params, lr: float = 1e-2) -> None:
        super().__init__(params, lr)

    def _new_state(self, p: torch.Tensor) -> dict:
        if p.dim() >= 2:
            return {"row_var": p.new_zeros(p.shape[:-1]), "col_var": p.new_zeros(p.shape[:-2] + p.shape[-1:])}
        return {"variance": torch.zeros_like(p)}


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
