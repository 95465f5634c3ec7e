"""ML001 accumulated-graph: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML001",
    name="accumulated-graph",
    # A loop or a comprehension (`for`, `while`), or a function run once per batch that keeps values
    # between calls: on `self`, in a module-level list (`append`, `extend`) or a `global` name.
    words=(("for", "while", "self", "global", "append", "extend"),),
)
