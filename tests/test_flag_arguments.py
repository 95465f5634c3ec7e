"""The summaries' `flags` and `passes` (memlint/analysis/flag_arguments.py): a function's parameters
that default to False, and the call arguments that turn such a flag on."""

from __future__ import annotations

import ast

from memlint.analysis.flag_arguments import arguments_on, constructor_flags, default_false_flags


def _function(code: str) -> ast.AST:
    return ast.parse(code).body[0]


def _call(code: str) -> ast.Call:
    return ast.parse(code).body[0].value  # type: ignore[attr-defined,return-value]


def test_parameters_defaulting_to_false_with_their_positions():
    found = default_false_flags(_function("def f(a, b=None, cuda=False, *, hard=False, n=0): pass"))
    assert found == [["cuda", 2], ["hard", -1]]


def test_arguments_that_turn_a_flag_on():
    assert arguments_on(_call("sinc(band, t, cuda)")) == ([2], [])
    assert arguments_on(_call("f(x, x.is_cuda, hard=True, soft=False, gpu=torch.cuda.is_available())")) == ([1], ["hard", "gpu"])
    assert arguments_on(_call("f(x, hard=args.hard, flag=1)")) == ([], [])


def test_positions_after_a_spread_are_unknown():
    assert arguments_on(_call("f(*args, True)")) == ([], [])


def test_a_constructors_flags_are_positioned_as_a_construction_passes_them():
    init = ast.parse("class C:\n    def __init__(self, n, lu=False, *, hard=False): pass").body[0].body[0]  # type: ignore[attr-defined]
    assert constructor_flags(init) == [["lu", 1], ["hard", -1]]
