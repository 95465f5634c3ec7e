"""step_calls: the one answer to "is this `.step()` an optimizer's or a learning-rate schedule's",
by the name its receiver is held under (the loop roles, the accumulation and Ignite's step ask it),
and the wider "may this call step parameters" (`is_parameter_step`: gradient_updates, Ignite's step)."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.step_calls import is_optimizer_step, is_parameter_step, is_schedule_step, names_step, step_receiver


def _call(code: str) -> cst.CSTNode:
    return cst.parse_expression(code)


@pytest.mark.parametrize("code", ["optimizer.step()", "self.opt_G.step()", "optimizerD.step()", "scaler.step(optimizer)"])
def test_an_optimizer_step(code: str) -> None:
    assert is_optimizer_step(_call(code)) and not is_schedule_step(_call(code))


@pytest.mark.parametrize("code", ["scheduler.step()", "self.lr_sched.step()", "lr_scheduler.step(epoch)", "warmup_lr.step()", "opt_sched.step()"])
def test_a_schedule_step(code: str) -> None:
    assert is_schedule_step(_call(code)) and not is_optimizer_step(_call(code))


@pytest.mark.parametrize("code", ["env.step(action)", "self.step()", "opts[0].step()", "step()", "optimizer.zero_grad()"])
def test_neither(code: str) -> None:
    assert not is_optimizer_step(_call(code)) and not is_schedule_step(_call(code))


def test_the_receiver_is_its_last_name() -> None:
    assert step_receiver(_call("self.opt_G.step()")) == "opt_G"
    assert step_receiver(_call("opts[0].step()")) == ""
    assert step_receiver(_call("optimizer.zero_grad()")) is None


@pytest.mark.parametrize("code", ["optimizer.step()", "scaler.step(optimizer)", "opts[0].step()", "env.step(action)", "trpo_step(policy)", "step()", "self.optimizer_step()"])
def test_a_parameter_step(code: str) -> None:
    assert is_parameter_step(_call(code))


@pytest.mark.parametrize("code", ["scheduler.step()", "self.lr_sched.step()", "warmup_lr.train_step()", "optimizer.zero_grad()", "stepper()", "optimizer.steps()"])
def test_no_parameter_step(code: str) -> None:
    assert not is_parameter_step(_call(code))


def test_a_step_name() -> None:
    assert names_step("step") and names_step("train_step") and not names_step("steps") and not names_step("stepwise")
