"""ML007 checkpoint-misuse: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML007",
    name="checkpoint-misuse",
    words=(("utils",), ("checkpoint", "checkpoint_sequential")),  # the text mentions `torch.utils.checkpoint`
)
