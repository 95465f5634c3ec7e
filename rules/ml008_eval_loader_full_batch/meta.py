"""ML008 eval-loader-full-batch: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML008",
    name="eval-loader-full-batch",
    words=(("DataLoader",), ("len", "__len__", "shape", "size")),  # a `DataLoader` whose batch size is a `len(...)` or a row count
)
