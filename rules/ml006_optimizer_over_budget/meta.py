"""ML006 optimizer-over-budget: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import ADAM_CLASSES
from memlint.rule import Meta, Option, fraction, size

META = Meta(
    code="ML006",
    name="optimizer-over-budget",
    options=(Option("gpu-memory", None, size), Option("memory-headroom", 0.5, fraction)),
    words=(ADAM_CLASSES, ("parameters",)),  # the text mentions an Adam-family optimizer and `parameters`
)
