"""ML001 accumulated-graph: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML001",
    name="accumulated-graph",
    words=(("for", "while"),),  # the text mentions a loop
)
