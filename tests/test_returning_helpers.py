"""returning_helpers.hands_back_only, asked directly: a function of the file that can pass what it is
handed on only through its return value (ML001 then reads the call as its result is used)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.returning_helpers import hands_back_only
from memlint.pipeline.traversal import Traversal

_HELPERS = """
import torch
import numpy as np
from torch import autograd
buffer = []
def gae(last, rewards, values, gamma=0.99):
    values = values + [last]
    g = 0
    out = []
    for t in reversed(range(len(rewards))):
        d = rewards[t] + gamma * values[t + 1] - values[t]
        g = d + gamma * g
        out.insert(0, g + values[t])
    return out
def stacked(values):
    total = 0
    for v in values:
        total += v.sum()
    return torch.stack(values).mean(), total
def slots(values):
    out = [None] * len(values)
    for i, v in enumerate(values):
        out[i] = v.detach()
    return np.array([o.item() for o in out])
def keeps(values):
    buffer.append(values)
    return len(values)
def on_object(values, store):
    store.data = values
    return 0
def extends(values, other):
    other += values
    return other
def backprops(values):
    torch.stack(values).sum().backward()
    return 0
def grads(values, params):
    return autograd.grad(torch.stack(values).sum(), params)
def calls_model(values, model):
    return model(torch.stack(values))
def in_place(values):
    values[0].add_(1)
    return values
def in_place_function(values, total):
    torch.Tensor.add_(total, torch.stack(values).sum())
    return total
def nested(values):
    def inner():
        return values
    return inner
def uses_global(values):
    return values + buffer
@torch.no_grad()
def decorated(values):
    return values
def maps(values, buf):
    list(map(buf.append, values))
    return len(values)
def keyed(values, seen):
    return sorted(values, key=seen.append)
def holder(values, store):
    box = [store]
    box[0]["kept"] = values
    return 0
def loop_target(values, store):
    for store.last in values:
        pass
    return 0
def logs(values, writer):
    writer.log(values)
    return 0
def moves(values, model):
    model.to(values[0].device)
    return 0
def later(values):
    return defined_below(values)
def reads_later(values):
    return [critic(v) for v in values]
def redefined(values):
    return values
if torch.cuda.is_available():
    def redefined(values):
        buffer.append(values)
        return values
def defined_below(values):
    buffer.append(values)
    return values
critic = torch.nn.Linear(1, 1)
"""

_CALLS = {
    "gae(last, rewards, vals)": True,
    "stacked(vals)": True,
    "slots(vals)": True,
    "keeps(vals)": False,  # stores into a list of the module
    "on_object(vals, obj)": False,  # stores into an attribute
    "extends(vals, other)": False,  # `+=` on a parameter extends the caller's list
    "backprops(vals)": False,
    "grads(vals, params)": False,
    "calls_model(vals, model)": False,  # a parameter is called: anything may keep the input
    "in_place(vals)": False,  # an in-place method
    "in_place_function(vals, total)": False,  # a torch function that writes into a parameter
    "nested(vals)": False,
    "uses_global(vals)": False,  # reads a name of the module that is no import
    "decorated(vals)": False,  # a decorator may replace the function
    "undefined(vals)": False,
    "maps(vals, buf)": False,  # `map` calls what it is handed: `buf.append` stores
    "keyed(vals, seen)": False,  # `sorted(key=...)` calls it too
    "holder(vals, store)": False,  # a slot of what its own list holds is the caller's object
    "loop_target(vals, store)": False,  # a loop that assigns an attribute
    "logs(vals, writer)": False,  # a method of a parameter that is no tensor may store its argument
    "moves(vals, model)": False,  # `.to()` moves a module in place
    "later(vals)": False,  # calls a function defined further down, that stores
    "reads_later(vals)": False,  # a name the module binds further down is no builtin
    "redefined(vals)": False,  # defined again under a module-level `if`
}


def _answers() -> dict[str, bool]:
    text = textwrap.dedent(_HELPERS) + "".join(f"r = {call}\n" for call in _CALLS)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: dict[str, bool] = {}

    class Asker:
        def leave_Module(self, node: cst.Module) -> None:
            for statement in node.body:
                small = statement.body[0] if type(statement) is cst.SimpleStatementLine else None
                if type(small) is cst.Assign and type(small.value) is cst.Call:
                    call = small.value
                    handed = next((a for a in call.args if module.code_for_node(a.value) == "vals"), None)
                    if handed is None:
                        continue  # a module-level binding of the helpers' text
                    answers[module.code_for_node(call)] = hands_back_only(call, handed, (), ctx)

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    return answers


@pytest.mark.parametrize("call, expected", list(_CALLS.items()))
def test_hands_back_only(call: str, expected: bool) -> None:
    assert _answers()[call] is expected


def test_a_parameter_of_the_caller_named_like_the_helper_is_another_function() -> None:
    text = _HELPERS + "def update(vals, gae):\n    return gae(0, [], vals)\n"
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    update = module.body[-1]
    call = update.body.body[0].body[0].value
    handed = call.args[2]
    assert hands_back_only(call, handed, (update,), ctx) is False
    assert hands_back_only(call, handed, (), ctx) is True
