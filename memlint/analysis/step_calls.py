"""Which `.step()` a call is: an optimizer's (it moves weights) or a learning-rate schedule's (it
moves none).  The one answer, by the name the receiver is held under (`optimizer.step()`,
`self.opt_G.step()`, `scheduler.step()`, `self.lr_sched.step()`); the names themselves are
naming.py's (OPTIMIZER_NAME, `names_schedule`).  Where the file shows what built the receiver,
the model's `steps_optimizer` and optimizer_bindings.py ask the construction first.

`is_parameter_step` is the wider question "may this step move parameters": any call named a step
(`step`, `*_step`) but a schedule's, whatever its receiver is named (gradient_updates.py, ignite's
process functions in frameworks.py)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.naming import OPTIMIZER_NAME, names_schedule


def step_receiver(node: cst.CSTNode) -> Optional[str]:
    """`x.step(...)` -> the last name of `x` (`optimizer`, `self.opt_G` -> "opt_G"), "" when `x` is
    no name or attribute (`opts[0].step()`); None when `node` is no `.step(...)` call."""
    if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value != "step":  # type: ignore[attr-defined]
        return None
    return _last_name(node.func.value)  # type: ignore[attr-defined]


def _last_name(receiver: cst.BaseExpression) -> str:
    kind = type(receiver)
    return receiver.value if kind is cst.Name else receiver.attr.value if kind is cst.Attribute else ""  # type: ignore[attr-defined]


def names_step(name: str) -> bool:
    """Does a called name say it steps: `step` itself or a name ending `_step` (`trpo_step`,
    `optimizer_step`)?"""
    return name == "step" or name.endswith("_step")


def is_parameter_step(node: cst.CSTNode) -> bool:
    """Is `node` a call of a step that may move parameters: a function or method named a step
    (`optimizer.step()`, `scaler.step(opt)`, `opts[0].step()`, `trpo_step(...)`,
    `self.optimizer_step()`), not a learning-rate schedule's (`scheduler.step()`,
    `self.lr_sched.step()`: by the receiver's last name; a plain function has no receiver to ask)?"""
    if type(node) is not cst.Call:
        return False
    func = node.func  # type: ignore[attr-defined]
    kind = type(func)
    if kind is cst.Name:
        return names_step(func.value)  # type: ignore[attr-defined]
    return kind is cst.Attribute and names_step(func.attr.value) and not names_schedule(_last_name(func.value))  # type: ignore[attr-defined]


def is_optimizer_step(node: cst.CSTNode) -> bool:
    """Is `node` a call `<optimizer>.step()` (a receiver named like an optimizer, or GradScaler's
    `scaler.step(optimizer)`: `optim_d.step()`, `self.opt_G.step()`)?"""
    name = step_receiver(node)
    return name is not None and OPTIMIZER_NAME.search(name) is not None


def is_schedule_step(node: cst.CSTNode) -> bool:
    """Is `node` a call `<schedule>.step()` (a receiver named like a learning-rate schedule:
    `scheduler.step()`, `self.lr_sched.step()`, `warmup_lr.step()`)?  It steps no parameters."""
    name = step_receiver(node)
    return name is not None and names_schedule(name)
