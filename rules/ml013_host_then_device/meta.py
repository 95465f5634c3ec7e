"""ML013 host-then-device: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML013",
    name="host-then-device",
    # no trigger words: the text mentions a torch size factory (or a legacy typed constructor) unless
    # a project helper of another file made the tensor (screen.py asks the words, then the view); the
    # move may be a project helper's too, so no trigger word of a move
)
