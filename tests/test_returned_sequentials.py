"""Which `self` attribute holds the Sequential a method returns (analysis/returned_sequentials.py;
issue 27, ML003's miss in deep-person-reid's `_construct_fc_layer` on the nineteenth part)."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.returned_sequentials import attribute_holding_returned

_HELPER = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = self._head(8)
    def _head(self, width):
        if width < 0:
            return None
        layers = [nn.Linear(width, width), nn.ReLU()]
        return nn.Sequential(*layers)
"""


def _held(code: str):
    module = cst.parse_module(code)
    ctx = Context(module, None, code)
    cls = next(s for s in module.body if type(s) is cst.ClassDef)
    helper = next(s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "_head")
    returned = [n.body[0].value for n in helper.body.body if type(n) is cst.SimpleStatementLine and type(n.body[0]) is cst.Return]
    return attribute_holding_returned(ctx, helper, returned[-1] if returned else None)


def test_a_helper_whose_one_caller_stores_it_in_self():
    assert _held(_HELPER) == ("Net", "fc")
    assert _held(_HELPER + "        self.fc2 = None\n") == ("Net", "fc")


@pytest.mark.parametrize(
    "change",
    [
        ("        self.fc = self._head(8)\n", "        self.fc = self._head(8)\n        self.aux = self._head(4)\n"),  # two attributes
        ("        self.fc = self._head(8)\n", "        self.fc = self._head(8)\n        make = self._head\n"),  # handed on
        ("        self.fc = self._head(8)\n", "        self.fc = [self._head(8)]\n"),  # not the whole value
        ("        self.fc = self._head(8)\n", "        self.fc = getattr(self, '_head')(8)\n"),  # by a string
        ("            return None\n", "            return nn.Identity()\n"),  # another module returned
    ],
)
def test_any_other_use_and_it_is_not_known(change):
    assert _held(_HELPER.replace(*change)) is None


def test_a_call_from_another_object_or_class_is_not_followed():
    assert _held(_HELPER + "def build(net):\n    return net._head(4)\n") is None
    assert _held(_HELPER + "class Other(nn.Module):\n    def __init__(self):\n        self.fc = self._head(4)\n") is None


def test_a_new_standard_container_is_no_module():
    from memlint.analysis.module_changes import elements_may_change_anywhere

    def anywhere(code: str) -> bool:
        return elements_may_change_anywhere(Context(cst.parse_module(code), None, code))

    assert not anywhere("def load(model, items):\n    from collections import OrderedDict\n    state = OrderedDict()\n    for k, v in items:\n        state[k] = v\n")
    assert not anywhere("def load(items):\n    state = dict()\n    for k, v in items:\n        state[k] = v\n")
    assert anywhere("def load(items, OrderedDict):\n    state = OrderedDict()\n    state[0] = items\n")
    assert anywhere("def load(items):\n    from collections import OrderedDict\n    OrderedDict = items\n    state = OrderedDict()\n    state[0] = items\n")
