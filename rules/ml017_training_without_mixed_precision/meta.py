"""ML017 training-without-mixed-precision: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML017",
    name="training-without-mixed-precision",
    default_enabled=False,
    # no trigger words: a file whose loop calls another file's training step mentions neither
    # backward nor `step` (screen.py asks the project pass)
    follows_other_files_steps=True,
)
