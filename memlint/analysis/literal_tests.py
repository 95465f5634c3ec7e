"""What an `if` test says when its parameters hold known literals.

A helper called with a literal argument (`self._run_epoch(cross_valid=True)`, `self.run('val',
loader)`) runs only the branches that literal leaves live: `if not cross_valid:` and `if phase ==
'train':` blocks are dead for those calls (delegation._ruled_out_branches, which ML002 asks).
Only tests whose outcome is certain are decided: a parameter alone or negated (for `True` /
`False`), and `==`, `!=`, `in`, `not in` between the parameter and constants of the same kind
(strings by value, `True`/`False`/`None`, integers); anything else is unknown (None).
"""

from __future__ import annotations

from typing import Mapping, Optional

import libcst as cst

_NAMED = ("True", "False", "None")


def literal_key(expr: cst.BaseExpression) -> Optional[tuple[str, object]]:
    """(kind, value) of a literal the tests can compare: a string, `True`/`False`/`None`, an
    integer; None for anything else (a float, an f-string, a name)."""
    kind = type(expr)
    if kind is cst.SimpleString:
        try:
            return "str", expr.evaluated_value  # type: ignore[attr-defined]
        except Exception:  # (a string libcst cannot evaluate)
            return None
    if kind is cst.Name and expr.value in _NAMED:  # type: ignore[attr-defined]
        return "name", expr.value  # type: ignore[attr-defined]
    if kind is cst.Integer:
        try:
            return "int", int(expr.value, 0)  # type: ignore[attr-defined]
        except ValueError:
            return None
    return None


def outcome_of_test(test: cst.BaseExpression, known: Mapping[str, tuple[str, object]]) -> Optional[bool]:
    """Does `test` hold (True), fail (False), or is it unknown (None) where each parameter of
    `known` has that literal (`literal_key`)?"""
    kind = type(test)
    if kind is cst.UnaryOperation and type(test.operator) is cst.Not:  # type: ignore[attr-defined]
        inner = outcome_of_test(test.expression, known)  # type: ignore[attr-defined]
        return None if inner is None else not inner
    if kind is cst.Name:
        value = known.get(test.value)  # type: ignore[attr-defined]
        return value[1] == "True" if value is not None and value[0] == "name" and value[1] in ("True", "False") else None
    if kind is not cst.Comparison or len(test.comparisons) != 1:  # type: ignore[attr-defined]
        return None
    left, operator, right = test.left, type(test.comparisons[0].operator), test.comparisons[0].comparator  # type: ignore[attr-defined]
    if operator in (cst.In, cst.NotIn):
        value = known.get(left.value) if type(left) is cst.Name else None  # type: ignore[attr-defined]
        if value is None or type(right) not in (cst.Tuple, cst.List, cst.Set):
            return None
        options = [literal_key(e.value) for e in right.elements]  # type: ignore[attr-defined]
        if not options or any(o is None or o[0] != value[0] or type(e) is cst.StarredElement for o, e in zip(options, right.elements)):  # type: ignore[attr-defined]
            return None
        inside = value in options
        return inside if operator is cst.In else not inside
    if operator not in (cst.Equal, cst.NotEqual):
        return None
    if type(right) is cst.Name and right.value in known and not (type(left) is cst.Name and left.value in known):  # type: ignore[attr-defined]
        left, right = right, left  # (`'train' == phase`)
    value = known.get(left.value) if type(left) is cst.Name else None  # type: ignore[attr-defined]
    other = literal_key(right)
    if value is None or other is None or other[0] != value[0]:
        return None  # (`0 == False` holds in Python: only literals of one kind are compared)
    equal = value == other
    return equal if operator is cst.Equal else not equal
