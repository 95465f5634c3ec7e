"""ML015 pure-half-precision-training: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import ADAM_CLASSES
from memlint.rule import Meta

META = Meta(
    code="ML015",
    name="pure-half-precision-training",
    words=(ADAM_CLASSES, ("half", "float16")),  # the text mentions an Adam-family optimizer and half precision
)
