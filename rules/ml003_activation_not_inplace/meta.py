"""ML003 activation-not-inplace: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import INPLACE_FUNCTIONS, INPLACE_MODULES
from memlint.rule import Meta

META = Meta(
    code="ML003",
    name="activation-not-inplace",
    words=((*INPLACE_MODULES, *INPLACE_FUNCTIONS),),  # the text mentions an in-place-capable activation module or function
)
