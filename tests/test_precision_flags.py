"""Two facts ML017 asks about what selects precision and what steps: command-line flags named for
mixed precision that select nothing (memlint/analysis/precision_flags.py), and the loops that step
each optimizer of a collection (memlint/analysis/iteration.optimizer_loop_target)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.iteration import optimizer_loop_target
from memlint.analysis.precision_flags import idle_flag_strings
from memlint.pipeline.tree import code_descendants

_DECLARED = 'import argparse\nparser = argparse.ArgumentParser()\nparser.add_argument("--use-amp", action="store_true", help="amp")\nargs = parser.parse_args()\n'


def _idle_strings(code: str) -> set[str]:
    module = cst.parse_module(_DECLARED + textwrap.dedent(code))
    idle = idle_flag_strings(Context(module))
    return {n.value for n in code_descendants(module) if type(n) is cst.SimpleString and id(n) in idle}


def test_a_flag_only_read_to_rename_the_run_is_idle():
    assert _idle_strings('name = "run"\nif args.use_amp:\n    name = "{}_amp".format(name)\n') == {'"--use-amp"', '"store_true"', '"amp"'}
    assert _idle_strings('if not args.use_amp: print("full precision")\n') == {'"--use-amp"', '"store_true"', '"amp"'}
    assert _idle_strings('if args.use_amp:\n    name += "_amp"\nelse:\n    name = str(n) + "_fp32"\n') == {'"--use-amp"', '"store_true"', '"amp"'}


@pytest.mark.parametrize(
    "code",
    [
        "",  # never read here: another file may read it
        "if args.use_amp:\n    model = enable_amp(model)\n",  # the branch calls a helper
        "train(model, args.use_amp)\n",  # handed on
        "use_amp = args.use_amp\nif args.use_amp:\n    name = 'amp'\n",  # stored
        "if args.use_amp:\n    from apex import amp\n",  # the branch imports
        "if args.use_amp:\n    cfg.MIXED = True\n",  # a setting another file may read
        "if args.use_amp:\n    log(name)\n",  # a call of something else
        "if args.use_amp:\n    name = 'amp'\nelif args.bf16:\n    name = 'bf16'\n",  # an `elif` tests more
    ],
)
def test_a_flag_whose_value_may_select_something_is_not_idle(code):
    assert _idle_strings(code) == set()


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
    ],
)
def test_optimizer_loop_target(code, target):
    assert optimizer_loop_target(_loop(code)) == target
