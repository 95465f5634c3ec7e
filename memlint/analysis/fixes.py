"""CST builders that several rules' fixes share."""

from __future__ import annotations

import libcst as cst

_ATOMS = (cst.Name, cst.Attribute, cst.Call, cst.Subscript)


def parenthesized(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`expr` as the receiver of a method call: `a + b` -> `(a + b)`; atoms stay as they are."""
    if isinstance(expr, _ATOMS) or expr.lpar:
        return expr
    return expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def method_call(receiver: cst.BaseExpression, method: str) -> cst.Call:
    """`receiver.method()`, keeping the receiver's own formatting."""
    return cst.Call(func=cst.Attribute(value=parenthesized(receiver), attr=cst.Name(method)))
