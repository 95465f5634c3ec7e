"""ML010 float64-training: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import BACKWARD_METHODS
from memlint.rule import Meta

META = Meta(
    code="ML010",
    name="float64-training",
    words=((*sorted(BACKWARD_METHODS), "optim"), ("float64", "double")),  # the text mentions training (a backward or an optimizer) and float64
)
