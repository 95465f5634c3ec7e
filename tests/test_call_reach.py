"""Which function a bare-name call reaches (`CallSite.nested`, `FileFacts.reaches`), which loop
holds code in a loop's `else:`, and which device-id tests are a run's device check."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.iteration import condition_is_device_check, step_loop_called_functions
from memlint.pipeline.traversal import Traversal


def _facts(code: str):
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)
    return ctx.facts()


def _per_step(code: str) -> set:
    return step_loop_called_functions(_facts(code), lambda loop: True)


def test_a_nested_function_called_in_its_own_loop() -> None:
    assert ("func", "mix") in _per_step(
        """
        def train(loader):
            def mix(y):
                return y
            for x in loader:
                mix(x)
        """
    )


@pytest.mark.parametrize(
    "caller",
    [
        "def train(loader, mix):\n    for x in loader:\n        mix(x)\n",  # a parameter of that name
        "def train(loader):\n    mix = lambda y: y\n    for x in loader:\n        mix(x)\n",  # a lambda
        "def train(loader):\n    for x in loader:\n        mix(x)\n",  # nothing in scope: a star import's, a global's
    ],
)
def test_a_namesake_in_another_function_reaches_no_nested_function(caller: str) -> None:
    code = "def setup(x):\n    def mix(y):\n        return y\n    return mix(x)\n" + caller
    assert ("func", "mix") not in _per_step(code)


def test_a_nested_function_bound_again_is_not_reached() -> None:
    assert ("func", "mix") not in _per_step(
        """
        def train(loader, other):
            def mix(y):
                return y
            for x in loader:
                mix(x)
                mix = other
        """
    )


def test_a_call_in_a_loops_else_is_not_in_the_loop() -> None:
    facts = _facts(
        """
        def train(loader):
            def mix(y):
                return y
            for x in loader:
                pass
            else:
                mix(x)
        """
    )
    (site,) = facts.call_sites[("func", "mix")]
    assert site.loop is None and not site.in_loop


def test_a_call_after_a_loops_else_in_an_outer_loop() -> None:
    facts = _facts(
        """
        def train(epochs, loader):
            for epoch in epochs:
                for x in loader:
                    pass
                else:
                    step()
                step()
        """
    )
    first, second = facts.call_sites[("func", "step")]
    assert isinstance(first.loop, cst.For) and first.loop is second.loop  # the epoch loop, both
    assert first.loop.target.value == "epoch"


@pytest.mark.parametrize(
    "test, check",
    [
        ("self.device_id is not None", True),
        ("args.gpu is not None", True),
        ("self.opt.gpu_ids != None", True),
        ("device_id is not None", True),
        ("batch.device_id is not None", False),  # a record's own field
        ("sample.meta.gpu is None", False),
    ],
)
def test_device_ids_only_of_a_runs_setting(test: str, check: bool) -> None:
    assert condition_is_device_check(cst.parse_expression(test)) is check
