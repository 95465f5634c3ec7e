"""ML011 retain-graph-in-loop: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML011",
    name="retain-graph-in-loop",
    words=(("retain_graph", "retain_variables"), ("True",)),  # `retain_graph=True`, or the pre-0.4 `retain_variables=True`
)
