"""Calls behind configured choices (memlint/analysis/configured_choices.py, the summaries' side of
`iteration.condition_is_configured_choice`) and loops that bind their counter's name again
(`iteration.refines_one_input` and its summaries twin)."""

from __future__ import annotations

import ast

import libcst as cst
import pytest

from memlint.analysis.configured_choices import configured_choice
from memlint.analysis.iteration import condition_is_configured_choice, refines_one_input
from memlint.analysis.summaries import _refines_one_input


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
        ("hyp['loss_ota'] == 1", True),  # an entry of a configuration dict
        ("'loss_ota' not in hyp or hyp['loss_ota'] == 1", True),  # whether it has the key
        ("self.cfg['mode'] == 'a'", True),
        ("hyp['mixup']", False),  # a flag
        ("'k' in cache", False),  # no configuration
        ("cache['k'] == 1", False),
        ("hyp[key] == 1", False),  # a key of unknown value
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
