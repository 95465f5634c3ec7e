"""local_outputs.outputs_stay_local: a module method's model outputs leave it only through its returns."""

import textwrap

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.local_outputs import outputs_stay_local

_CLASS = """
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Linear(4, 2)
        self.bank = {}
        self.feats = []
    def forward(self, x):
        return self.head(x)
    def adapt(self, x):
        self.head(x).sum().backward()
"""


def _answer(method: str) -> bool:
    # (asked outside a traversal: names resolve to no import and `self.head` has no value here, so
    # the examples run self through `self(x)` / `self.forward(x)`; ML002's examples ask the rest)
    module = cst.parse_module(_CLASS + textwrap.indent(textwrap.dedent(method), "    "))
    ctx = Context(module)
    classdef = next(s for s in module.body if type(s) is cst.ClassDef)
    function = classdef.body.body[-1]
    return outputs_stay_local(function, ctx)


@pytest.mark.parametrize("method", [
    "def predict(self, x):\n    p = self.forward(x).softmax(1).data.cpu().numpy()\n    return p\n",
    "def predict(self, x):\n    out = self(x)\n    print(out.argmax(1))\n    return out.argmax(1).cpu().numpy()\n",
    "def predict(self, x):\n    score = np.zeros(3)\n    score[0] = self.forward(x).sum().item()\n    return score\n",
    "def predict(self, x):\n    cuda = next(self.parameters()).is_cuda\n    return self(x).tolist()\n",
])
def test_outputs_that_become_plain_values_stay_local(method):
    assert _answer(method)


@pytest.mark.parametrize("method", [
    "def predict(self, x, key):\n    bank = self.bank\n    bank[key] = self.forward(x)\n",  # an alias of self's dict
    "def predict(self, x):\n    z = self.forward(x)\n    self.feats.append(z)\n    return z.sum().item()\n",
    "def predict(self, x, sink):\n    sink.append(self.forward(x))\n",  # a container handed in
    "def predict(self, x, buf):\n    buf.copy_(self.forward(x))\n",
    "def predict(self, x):\n    setattr(self, 'last', self.forward(x))\n",
    "def predict(self, x):\n    global LAST\n    LAST = self.forward(x)\n",
    "def predict(self, x):\n    self.adapt(x)\n    return self.forward(x).argmax(1).tolist()\n",  # another method of self
    "def predict(self, x):\n    return self.head.sample(x).tolist()\n",  # a submodule's method: not known
    "def predict(self, x):\n    keep(self.forward(x))\n",  # a call not known
    "async def predict(self, x):\n    return self.forward(x).tolist()\n",
])
def test_outputs_that_may_leave_do_not(method):
    assert not _answer(method)
