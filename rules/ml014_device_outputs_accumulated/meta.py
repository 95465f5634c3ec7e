"""ML014 device-outputs-accumulated: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML014",
    name="device-outputs-accumulated",
    words=(("append", "extend"), ("cuda", "to", "device")),  # the text mentions an `.append` / `.extend` and a device
)
