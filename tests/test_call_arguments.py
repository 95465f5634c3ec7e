"""call_arguments: which argument of a call a function's parameter receives."""

from __future__ import annotations

from typing import Optional

import libcst as cst
import pytest

from memlint.analysis.call_arguments import argument_for

_DEF = "def step(self, model, batch, phase='train', *, scale=1):\n    pass\n"


def _handed(call: str, parameter: str, skipped: int = 0, definition: str = _DEF) -> Optional[str]:
    function = cst.parse_module(definition).body[0]
    found = argument_for(cst.parse_expression(call), function, parameter, skipped)  # type: ignore[arg-type]
    return None if found is None else cst.Module([]).code_for_node(found)


@pytest.mark.parametrize(("call", "skipped", "parameter", "argument"), [
    ("step(s, m, b, 'val')", 0, "phase", "'val'"), ("self.step(m, b, 'val')", 1, "phase", "'val'"),
    ("self.step(m, b, phase=p)", 1, "phase", "p"), ("self.step(m, b, scale=2)", 1, "scale", "2"),
    ("self.step(m, b)", 1, "phase", None),  # left to its default
    ("self.step(*args)", 1, "phase", None), ("self.step(m, **kw)", 1, "phase", None),  # a star before it: unknown
    ("self.step(m, b, 'val', *rest)", 1, "phase", "'val'"),  # (a star after it changes nothing)
])  # fmt: skip
def test_the_argument_a_parameter_receives(call: str, skipped: int, parameter: str, argument: Optional[str]) -> None:
    assert _handed(call, parameter, skipped) == argument


def test_positional_only_parameters_are_filled_by_position_only() -> None:
    definition = "def f(a, b, /, c):\n    pass\n"
    assert _handed("f(1, 2, 3)", "b", definition=definition) == "2"
    assert _handed("f(1, 2, c=3)", "c", definition=definition) == "3"
    assert _handed("f(1, b=2)", "b", definition=definition) is None  # (a keyword never fills `b`: it goes to `**kw`, or errs)
