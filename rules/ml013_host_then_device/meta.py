"""ML013 host-then-device: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import TORCH_FACTORIES
from memlint.rule import Meta

META = Meta(
    code="ML013",
    name="host-then-device",
    words=(tuple(sorted(TORCH_FACTORIES)), ("to", "cuda")),  # the text mentions a torch factory and a move to a device
)
