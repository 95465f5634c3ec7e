"""ML013 host-then-device: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import LEGACY_SIZED_CONSTRUCTORS, TORCH_FACTORIES
from memlint.rule import Meta

META = Meta(
    code="ML013",
    name="host-then-device",
    # the text mentions a torch size factory (or a legacy typed constructor); the move may be a
    # project helper's (screen.py asks the view), so no trigger word of a move
    words=(tuple(sorted(TORCH_FACTORIES | LEGACY_SIZED_CONSTRUCTORS.keys())),),
)
