"""Reading and setting the `inplace` argument of an activation or dropout call (which ones can
run in place, and where the argument sits, is data in `tables.INPLACE_MODULES` / `INPLACE_FUNCTIONS`)."""

from __future__ import annotations

from typing import Optional

import libcst as cst


def inplace_argument(call: cst.Call, position: int) -> tuple[Optional[cst.Arg], Optional[bool]]:
    """The `inplace` argument of `call` and its literal value: (None, False) when it is not passed,
    (arg, None) when it is not a literal (`inplace=inplace`)."""
    positional = 0
    for argument in call.args:
        if argument.star:
            return argument, None  # `*args` may carry it
        if argument.keyword is not None:
            if argument.keyword.value == "inplace":
                return argument, _literal(argument.value)
            continue
        if positional == position:
            return argument, _literal(argument.value)
        positional += 1
    return None, False


def with_inplace(call: cst.Call, position: int) -> cst.Call:
    """`call` with its `inplace` argument set to True (replacing a literal False, or added)."""
    argument, _ = inplace_argument(call, position)
    if argument is not None:
        args = [a.with_changes(value=cst.Name("True")) if a is argument else a for a in call.args]
        return call.with_changes(args=args)
    no_space = cst.SimpleWhitespace("")
    equal = cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
    added = cst.Arg(keyword=cst.Name("inplace"), value=cst.Name("True"), equal=equal)
    args = list(call.args)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        comma = args[-1].comma
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        added = added.with_changes(comma=comma)
    return call.with_changes(args=[*args, added])


def _literal(expr: cst.BaseExpression) -> Optional[bool]:
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return expr.value == "True"
    return None
