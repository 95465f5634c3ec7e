"""ML017 training-without-mixed-precision: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import BACKWARD_METHODS
from memlint.rule import Meta

META = Meta(
    code="ML017",
    name="training-without-mixed-precision",
    default_enabled=False,
    words=(tuple(sorted(BACKWARD_METHODS)), ("step",)),  # the text mentions a backward and an optimizer step
)
