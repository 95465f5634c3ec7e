"""ML010 float64-training: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import BACKWARD_METHODS
from memlint.rule import Meta

META = Meta(
    code="ML010",
    name="float64-training",
    # the text mentions training (a backward, an optimizer, a training entry point) and float64
    words=(
        (*sorted(BACKWARD_METHODS), "optim", "train", "fit", "train_model", "train_net", "train_epoch",
         "train_one_epoch", "run_training", "training_loop"),
        ("float64", "double", "DoubleTensor"),
    ),
)  # fmt: skip
