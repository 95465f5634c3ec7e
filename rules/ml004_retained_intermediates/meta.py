"""ML004 retained-intermediates: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.analysis.tables import NO_GRAD_HOOKS
from memlint.rule import Meta, Option, integer_at_least

NO_GRAD_WORDS = ("no_grad", "inference_mode", "set_grad_enabled")

META = Meta(
    code="ML004",
    name="retained-intermediates",
    options=(Option("min-retained-chain", 3, integer_at_least(2)),),
    # the text mentions a `forward`, or something that turns gradients off: a no-grad context or
    # decorator (a decorator of the file's own wraps one), a Lightning evaluation hook, a pipeline's `_forward`
    words=(("forward", "_forward", *NO_GRAD_WORDS, *NO_GRAD_HOOKS),),
)
