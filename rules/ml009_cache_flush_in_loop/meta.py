"""ML009 cache-flush-in-loop: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML009",
    name="cache-flush-in-loop",
    words=(("empty_cache", "collect"),),  # the text mentions `torch.cuda.empty_cache()` or `gc.collect()`
)
