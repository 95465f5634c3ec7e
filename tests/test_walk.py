"""walk: the small facts about one expression or one function's code that many analyses ask."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.walk import self_attr


@pytest.mark.parametrize(("expr", "attribute"), [
    ("self.fc", "fc"), ("self.layers", "layers"), ("self.fc.weight", None), ("other.fc", None), ("self", None),
    ("self[0]", None), ("self.fc(x)", None), ("cls.fc", None),
])  # fmt: skip
def test_self_attr_names_an_attribute_of_self(expr: str, attribute: str) -> None:
    assert self_attr(cst.parse_expression(expr)) == attribute
