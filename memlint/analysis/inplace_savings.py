"""What running an activation in place saves, measured on the CPU with torch 2.13
(bench/inplace_savings.py; the table and the command are in docs/inplace-activations.md).

LeakyReLU, ELU, CELU and SELU out of place keep their input for backward beside the output the next
layer keeps; in place they keep the one buffer: one activation fewer for backward, so a training
step's peak falls (8 Linear+ELU blocks: 80 -> 52 MiB, 7 activations of 4 MiB).  Every other
activation (ReLU, ReLU6, Hardtanh, SiLU, Hardswish, Mish, Dropout, ...) leaves a training step's
peak unchanged; in a forward-only pass (no_grad / inference_mode) it saves up to one activation,
where the activation's input and output together are the pass's peak."""

from __future__ import annotations

import enum
from typing import Optional

from memlint.analysis.tables import INPLACE_FUNCTIONS, INPLACE_MODULES

_KEPT_FOR_BACKWARD = frozenset({"LeakyReLU", "ELU", "CELU", "SELU", "leaky_relu", "elu", "celu", "selu"})
# The saving needs the layer after it to keep its input (the activation's output) for backward, as
# these do (AvgPool measured: bench/inplace_savings.py); after an op that keeps nothing of its input
# (`x + 1`, measured; Dropout keeps only its mask) both forms keep one buffer, and at the end of the
# sequence what reads the output is not known.
_KEEPS_ITS_INPUT = frozenset(
    {"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "Linear", "LazyLinear",
     "LazyConv1d", "LazyConv2d", "LazyConv3d", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm",
     "GroupNorm", "LayerNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "MaxPool1d", "MaxPool2d",
     "MaxPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"}
)  # fmt: skip
# Dropout in place, with gradients on, never lowers a peak and on CUDA raises it (bench/inplace_savings.py
# --device cuda, docs/inplace-activations.md): out of place CUDA's fused kernel keeps a one-byte mask for
# backward, in place torch keeps a full-size mask of the input's dtype (8 Linear+Dropout blocks on an H100:
# 64 -> 85 MiB).
_DROPOUTS = frozenset(kind for kind in (*INPLACE_MODULES, *INPLACE_FUNCTIONS) if "dropout" in kind.lower())


class Saving(enum.Enum):
    IN_TRAINING = "one activation fewer kept for backward: a training step's peak falls"
    FORWARD_ONLY = "up to one activation in this forward-only pass"
    RAISES_ON_CUDA = "a dropout with gradients on: in place it keeps a full-size mask"
    IF_KEPT_AFTER = "one activation fewer for backward only where the reader keeps its input (not known)"
    NOTHING_IN_TRAINING = "a training step's peak unchanged; one activation in a forward-only pass"


def inplace_saving(kind: str, *, forward_only: bool, next_keeps_input: bool) -> Saving:
    """What `inplace=True` saves for the activation `kind` (its nn class or functional name) in code
    that runs `forward_only` (gradients off), before a reader that keeps its input or not."""
    if kind in _KEPT_FOR_BACKWARD and next_keeps_input:
        return Saving.IN_TRAINING
    if forward_only:
        return Saving.FORWARD_ONLY
    if kind in _DROPOUTS:
        return Saving.RAISES_ON_CUDA
    return Saving.IF_KEPT_AFTER if kind in _KEPT_FOR_BACKWARD else Saving.NOTHING_IN_TRAINING


def keeps_its_input(kind: Optional[str]) -> bool:
    """Does the layer `kind` (a torch.nn class) keep its input for backward?"""
    return kind in _KEEPS_ITS_INPUT
