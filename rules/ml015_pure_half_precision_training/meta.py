"""ML015 pure-half-precision-training: what memlint knows about the rule without importing it (rule.py) or libcst."""

from __future__ import annotations

from memlint.rule import Meta

META = Meta(
    code="ML015",
    name="pure-half-precision-training",
    # the text mentions half precision (screen.py: and an Adam-family optimizer, or a project class that builds one)
    words=(("half", "float16"),),
)
