"""ML005 oversized-linear-after-flatten: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta, Option, positive_int

META = Meta(
    code="ML005",
    name="oversized-linear-after-flatten",
    options=(Option("max-linear-params", 8_388_608, positive_int),),
    words=(("Linear",),),  # the text mentions a `Linear` layer
)
