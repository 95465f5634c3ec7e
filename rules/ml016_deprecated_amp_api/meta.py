"""ML016 deprecated-amp-api: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML016",
    name="deprecated-amp-api",
    words=(("amp",),),  # the text mentions `amp`
)
