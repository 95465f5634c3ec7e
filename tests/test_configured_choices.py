"""Calls behind configured choices (memlint/analysis/configured_choices.py, the summaries' side of
`iteration.condition_is_configured_choice`) and loops that bind their counter's name again
(`iteration.refines_one_input` and its summaries twin), loops over windows of one input
(`iteration.tiles_one_input` and its twin) and `if` / `elif` chains of configuration flags
(`iteration.configured_flag_chains`)."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from memlint.analysis.configured_choices import configured_choice, flag_chain
from memlint.analysis.iteration import condition_is_configured_choice, configured_flag_chains, refines_one_input, tiles_one_input
from memlint.analysis.summaries import _refines_one_input, _tiles_one_input


@pytest.mark.parametrize(
    "test, chosen",
    [
        ("args.attack == 'pgd'", True),
        ("self.args.padding == 0", True),
        ("cfg.mode in ('a', 'b')", True),
        ("args.beta != -1", True),
        ("args.loss == 'hinge' and opt.mode is None", True),
        ("args.log_images", False),  # a flag opts in to extra work
        ("step % 10 == 0", False),  # a counter: periodic
        ("args.attack == other", False),  # no literal
        ("self.padding == 0", False),  # `self` alone is no configuration
        ("args.attack == 'pgd' and step > 3", False),
    ],
)
def test_configured_choice_agrees_with_the_rules_own(test: str, chosen: bool):
    assert configured_choice(ast.parse(test, mode="eval").body) is chosen
    assert condition_is_configured_choice(cst.parse_expression(test)) is chosen


RESTARTS = """
for _ in range(restarts):
    delta = torch.zeros_like(x)
    for _ in range(steps):
        loss = model(x + delta).sum()
"""
READS = """
for _ in range(restarts):
    for _ in range(steps):
        pass
    print(_)
"""


@pytest.mark.parametrize("code, refines", [(RESTARTS, True), (READS, False)])
def test_an_inner_loop_binding_the_counter_again_is_no_read(code: str, refines: bool):
    assert refines_one_input(cst.parse_module(code).body[0]) is refines  # type: ignore[arg-type]
    assert _refines_one_input(ast.parse(code).body[0]) is refines


TILES = """
for j in range(0, w, t):
    out[..., i:i + t, j:j + t] = net(img[..., i:i + t, j:j + t])
"""
BATCHES = """
for i in range(0, n, bs):
    out = net(data[i:i + bs])
"""
INDEXED = """
for j in starts:
    out = net(img[..., j:j + t]) + weights[j]
"""
DRAWS = """
for j in starts:
    out = net(next(loader_iter)[..., j:j + t])
"""


@pytest.mark.parametrize("code, tiles", [(TILES, True), (BATCHES, False), (INDEXED, False), (DRAWS, False), (RESTARTS, False)])
def test_a_loop_over_windows_of_one_input_tiles_it(code: str, tiles: bool):
    assert tiles_one_input(cst.parse_module(code).body[0]) is tiles  # type: ignore[arg-type]
    assert _tiles_one_input(ast.parse(code).body[0]) is tiles


@pytest.mark.parametrize(
    "code, chained",
    [
        ("if not opt.a:\n    pass\nelif opt.b:\n    pass\n", 2),  # one masking method of two
        ("if opt.a:\n    pass\nelif args.loss == 'l1':\n    pass\nelse:\n    pass\n", 2),
        ("if opt.a:\n    pass\n", 0),  # a lone flag opts in to extra work
        ("if opt.a:\n    pass\nelse:\n    pass\n", 0),  # no `elif`: nothing says the branches are methods
        ("if opt.a:\n    pass\nelif step % 10 == 0:\n    pass\n", 0),  # a counter: periodic
        ("if self.a:\n    pass\nelif self.b:\n    pass\n", 0),  # `self` alone is no configuration
    ],
)
def test_an_elif_chain_of_configuration_flags_picks_a_method(code: str, chained: int):
    assert len(list(configured_flag_chains(cst.parse_module(code).body))) == chained
    tests, node = [], ast.parse(code).body[0]
    while type(node) is ast.If:
        tests.append(node.test)
        node = node.orelse[0] if len(node.orelse) == 1 else None
    assert flag_chain(tests) is (chained > 0)
