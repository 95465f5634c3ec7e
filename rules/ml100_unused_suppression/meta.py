"""ML100 unused-suppression: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML100",
    name="unused-suppression",
    # Off by default, as Ruff's RUF100: a project turns it on once its suppressions are in order.
    default_enabled=False,
    words=(("noqa", "memlint"),),  # a suppression comment
)
