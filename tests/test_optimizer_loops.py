"""A fact ML017 asks about what steps: the loops that step each optimizer of a collection
(memlint/analysis/iteration.optimizer_loop_target), and not a collection of schedulers."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.iteration import optimizer_loop_target


def _loop(code: str) -> cst.For:
    return cst.parse_module(code).body[0]  # type: ignore[return-value]


@pytest.mark.parametrize(
    "code, target",
    [
        ("for optimizer in optimizers: optimizer.step()", "optimizer"),
        ("for o in self.optims: o.step()", "o"),
        ("for opt in opt_list: opt.step()", "opt"),  # the element named like one optimizer
        ("for optim in [enc_optim, dec_optim]: optim.step()", "optim"),
        ("for batch in loader: opt.step()", None),
        ("for scheduler in schedulers: scheduler.step()", None),
        ("for i, opt in enumerate(opts): opt.step()", None),
        ("for opt_sched in opt_scheds: opt_sched.step()", None),  # schedulers, whatever the `opt` in their name
        ("for opt in lr_opts: opt.step()", None),
        ("for optimizer in optimizer_schedulers: optimizer.step()", None),
    ],
)
def test_optimizer_loop_target(code, target):
    assert optimizer_loop_target(_loop(code)) == target
