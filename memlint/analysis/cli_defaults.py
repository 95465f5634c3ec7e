"""Command-line flags a script turns on by default: `parser.add_argument('--random', default=True)`.

`if args.random:` behind such a flag is no opt-in: the run as the script is written (and as its
README runs it) takes the branch, and the configuration does not change between steps, so code in
the branch runs whenever it is reached.  Only flags the same module declares count, with a literal
`default=True` or `action="store_false"`; anything else (a flag declared elsewhere, a default read
from a file) stays an opt-in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.pipeline.tree import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def flag_on_by_default(test: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `test` `args.name` (a plain attribute of a plain name), where the file declares the
    command-line flag `name` on by default?"""
    if type(test) is not cst.Attribute or type(test.value) is not cst.Name:
        return False
    return test.attr.value in ctx.memo("flags-on-by-default", lambda: _flags_on(ctx.module))


def _flags_on(module: cst.Module) -> frozenset[str]:
    return frozenset(filter(None, (_declared_on(node) for node in code_descendants(module) if type(node) is cst.Call)))


def _declared_on(call: cst.Call) -> Optional[str]:
    """The destination of `p.add_argument('--random-init', default=True)` ("random_init"), or None."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "add_argument":
        return None
    keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
    default, action = keywords.get("default"), keywords.get("action")
    on = (type(default) is cst.Name and default.value == "True") or (
        type(action) is cst.SimpleString and action.evaluated_value == "store_false" and default is None
    )
    if not on:
        return None
    dest = keywords.get("dest")
    if type(dest) is cst.SimpleString and isinstance(dest.evaluated_value, str):
        return dest.evaluated_value
    options = [a.value.evaluated_value for a in call.args if a.keyword is None and type(a.value) is cst.SimpleString]
    longs = [o for o in options if isinstance(o, str) and o.startswith("--")]
    if not longs:
        return None
    return longs[0][2:].replace("-", "_")
