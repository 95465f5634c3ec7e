"""ML010 float64-training: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.optimizers import OPTIMIZER_WORDS
from memlint.analysis.tables import BACKWARD_METHODS
from memlint.rule import Meta

# The words of training in the file's own text (a backward, an optimizer: `optim` or the name of a
# class or factory the rule takes for one, a training entry point); screen.py also lets through a
# file that calls another file's training function.
TRAINING_WORDS = (
    *sorted(BACKWARD_METHODS), *sorted(OPTIMIZER_WORDS), "train", "fit", "train_model", "train_net", "train_epoch",
    "train_one_epoch", "run_training", "training_loop",
)  # fmt: skip

META = Meta(
    code="ML010",
    name="float64-training",
    # the text mentions float64; screen.py asks for training
    words=(("float64", "double", "DoubleTensor"),),
    follows_other_files_steps=True,  # a script that runs another file's training step trains
)  # fmt: skip
