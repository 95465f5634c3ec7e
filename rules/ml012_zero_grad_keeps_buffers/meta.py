"""ML012 zero-grad-keeps-buffers: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML012",
    name="zero-grad-keeps-buffers",
    words=(("zero_grad",), ("False",)),  # the text mentions `zero_grad(set_to_none=False)`
)
