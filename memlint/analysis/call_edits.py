"""CST edits of a call's arguments that keep its formatting: add a keyword, drop an argument, put an
argument first.  Several rules' fixes use them (ML007, ML011, ML012, ML013, ML016)."""

from __future__ import annotations

from typing import Sequence

import libcst as cst

_SPACE_COMMA = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _with_args(call: cst.Call, args: Sequence[cst.Arg]) -> cst.Call:
    return call.with_changes(args=tuple(args))


def append_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`f(a, b)` -> `f(a, b, new)`; a multi-line call with a trailing comma stays multi-line."""
    args = list(call.args)
    if not args:
        return _with_args(call, [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT)])
    last = args[-1]
    if isinstance(last.comma, cst.Comma):  # trailing comma: the new argument takes it over
        separator = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else _SPACE_COMMA
        args[-1] = last.with_changes(comma=separator)
        args.append(arg.with_changes(comma=last.comma))
    else:
        args[-1] = last.with_changes(comma=_SPACE_COMMA)
        args.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return _with_args(call, args)


def append_keyword(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
    keyword = cst.Arg(
        value=value,
        keyword=cst.Name(name),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return append_argument(call, keyword)


def remove_argument(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """`f(a, b=1)` -> `f(a)`, keeping a trailing comma where there was one."""
    args = list(call.args)
    index = next(i for i, a in enumerate(args) if a is arg)
    del args[index]
    if args and index == len(args):  # removed the last one: its predecessor now ends the list
        args[-1] = args[-1].with_changes(comma=arg.comma)
    return _with_args(call, args)


def prepend_argument(call: cst.Call, value: cst.BaseExpression) -> cst.Call:
    """`f(a)` -> `f(value, a)`."""
    args = list(call.args)
    comma = _SPACE_COMMA if args else cst.MaybeSentinel.DEFAULT
    return _with_args(call, [cst.Arg(value=value, comma=comma), *args])


def positional_to_keywords(call: cst.Call, names: Sequence[str]) -> cst.Call:
    """Name the positional arguments after the parameters they bind (`f(True)` -> `f(enabled=True)`)."""
    args = []
    position = 0
    for arg in call.args:
        if arg.keyword is None and not arg.star:
            arg = arg.with_changes(
                keyword=cst.Name(names[position]),
                equal=cst.AssignEqual(
                    whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")
                ),
            )
            position += 1
        args.append(arg)
    return _with_args(call, args)


def dotted(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return f"{dotted(expr.value)}.{expr.attr.value}"
    return ""


def attribute_chain(text: str) -> cst.BaseExpression:
    """`"torch.amp.autocast"` -> the Attribute node for it."""
    parts = text.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(value=node, attr=cst.Name(part))
    return node
