"""ML002 eval-without-no-grad: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta, Option, boolean

META = Meta(
    code="ML002",
    name="eval-without-no-grad",
    options=(Option("prefer-inference-mode", False, boolean),),
    follows_other_files_models=True,
)
