"""ML004 retained-intermediates: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta, Option, integer_at_least

META = Meta(
    code="ML004",
    name="retained-intermediates",
    options=(Option("min-retained-chain", 3, integer_at_least(2)),),
    words=(("forward",),),  # the text mentions a `forward`
)
