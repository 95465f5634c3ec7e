"""ML100 unused-suppression: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML100",
    name="unused-suppression",
    # Off by default, as Ruff's RUF100: a project turns it on once its suppressions are in order.
    default_enabled=False,
    # A suppression comment. The rule reads comments after the analysis (memlint/pipeline/engine.py),
    # which never runs for it: the screens are asked without ML100.
    words=(("noqa", "memlint"),),
)
