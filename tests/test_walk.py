"""walk (and ast_nodes for CPython's tree): the small facts about one expression or one function's
code that many analyses ask."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from memlint.analysis.ast_nodes import own_nodes as ast_own_nodes
from memlint.analysis.walk import own_nodes, self_attr


@pytest.mark.parametrize(("expr", "attribute"), [
    ("self.fc", "fc"), ("self.layers", "layers"), ("self.fc.weight", None), ("other.fc", None), ("self", None),
    ("self[0]", None), ("self.fc(x)", None), ("cls.fc", None),
])  # fmt: skip
def test_self_attr_names_an_attribute_of_self(expr: str, attribute: str) -> None:
    assert self_attr(cst.parse_expression(expr)) == attribute


_NESTED = """def f(a):
    x = 1
    def g(b):
        y = 2
    class C:
        z = 3
    h = lambda c: c + 4
    return x
"""


def test_own_nodes_of_a_function_stop_at_its_nested_definitions() -> None:
    function = cst.parse_module(_NESTED).body[0]
    found = list(own_nodes(function))  # type: ignore[arg-type]
    names = {n.value for n in found if type(n) is cst.Name}
    assert {"x", "h"} <= names and not names & {"y", "z", "b", "c"}
    assert sum(type(n) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) for n in found) == 3  # listed, not entered


def test_own_nodes_of_a_cpython_function_leave_out_nested_definitions() -> None:
    function = ast.parse(_NESTED).body[0]
    found = ast_own_nodes(function)
    assert {n.id for n in found if type(n) is ast.Name} == {"x", "h"}
    assert not any(type(n) in (ast.FunctionDef, ast.ClassDef, ast.Lambda) for n in found)
    assert [type(n) for n in found if type(n) is ast.Return] == [ast.Return]
