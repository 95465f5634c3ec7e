"""sequential_subclasses (issue 27, ML003's misses on the eighteenth part): a class that is an
`nn.Sequential` and nothing more, and the layer a call of it adds last for its literal flags."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.context import Context
from memlint.analysis.sequential_subclasses import constructor_layers, last_added_layer, plain_sequential_class
from memlint.pipeline.traversal import Traversal

_BLOCK = """
import torch.nn as nn
class ConvBn(nn.Sequential):
    '''Conv, norm, an optional ReLU.'''
    KIND = "plain"
    def __init__(self, c, relu=True, *, tail=False):
        super(ConvBn, self).__init__()
        self.add_module("conv", nn.Conv2d(c, c, 1))
        self.add_module("bn", nn.BatchNorm2d(c))
        if relu:
            self.add_module("relu", nn.ReLU())
        if tail:
            self.add_module("pool", nn.MaxPool2d(2))
"""


def _context(code: str) -> Context:
    module = cst.parse_module(code)
    ctx = Context(module, None, code)
    Traversal(ctx, []).walk(module)  # (the imports resolved, as where a rule asks)
    return ctx


def _last(code: str, construction: str):
    ctx = _context(code)
    return last_added_layer(ctx, cst.parse_expression(construction))


@pytest.mark.parametrize(
    "construction, kind",
    [("ConvBn(4)", "ReLU"), ("ConvBn(4, False)", "BatchNorm2d"), ("ConvBn(4, relu=False)", "BatchNorm2d"),
     ("ConvBn(4, False, tail=True)", "MaxPool2d"), ("ConvBn(4, flag)", None), ("ConvBn(*args)", None),
     ("ConvBn(4, **kw)", None), ("Other(4)", None)],
)  # fmt: skip
def test_the_layer_added_last_for_the_call_s_literal_flags(construction, kind):
    assert _last(_BLOCK, construction) == kind


@pytest.mark.parametrize(
    "extra",
    [
        # a method of its own, a subclass, a part of some container run alone, a name that changes how it runs
        "    def forward(self, x):\n        return x\n",
        "class Probe(ConvBn):\n    pass\n",
        "def f(block, x):\n    return block[1](x)\n",
        "def f(block):\n    block[0] = nn.Identity()\n",
        "    __call__ = print\n",
    ],
)
def test_not_only_a_sequential(extra):
    code = _BLOCK + extra
    assert plain_sequential_class(_context(code), "ConvBn") is None
    assert _last(code, "ConvBn(4, False)") is None


def test_a_plain_sequential_class():
    assert plain_sequential_class(_context(_BLOCK), "ConvBn") is not None


@pytest.mark.parametrize(
    "body",
    [
        # the flag rebound, an attribute bound (nn.Module adds it after the norm), a key added twice, an `else`
        "        relu = False\n        if relu:\n            self.add_module('relu', nn.ReLU())\n",
        "        self.head = nn.Tanh()\n",
        "        if relu:\n            self.add_module('bn', nn.Identity())\n",
        "        if relu:\n            self.add_module('relu', nn.ReLU())\n        else:\n            self.add_module('act', nn.Tanh())\n",
    ],
)
def test_a_last_layer_not_known(body):
    code = (
        "import torch.nn as nn\nclass ConvBn(nn.Sequential):\n    def __init__(self, c, relu=False):\n        super().__init__()\n"
        "        self.add_module('conv', nn.Conv2d(c, c, 1))\n        self.add_module('bn', nn.BatchNorm2d(c))\n" + body
    )
    assert _last(code, "ConvBn(4)") is None


def _held(use: str) -> str:
    return "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.block = ConvBn(4)\n" + use


@pytest.mark.parametrize(
    "extra",
    [
        # an instance iterated, its children run or reached by key, extended, handed on
        _held("    def forward(self, x):\n        for layer in self.block:\n            x = layer(x)\n        return x\n"),
        _held("    def forward(self, x):\n        return [m(x) for _, m in self.block.named_children()]\n"),
        _held("    def forward(self, x):\n        return self.block.relu(self.block.bn(x))\n"),
        _held("        self.block.add_module('gate', nn.Sigmoid())\n"),
        _held("        self.block.append(nn.Sigmoid())\n"),
        _held("        setattr(self.block, 'gate', nn.Sigmoid())\n"),
        "blocks = [ConvBn(4), ConvBn(8)]\n",
        # the class name bound otherwise, an attribute of the class set, a star import
        "ConvBn = nn.Sequential\n",
        "try:\n    from fast import ConvBn\nexcept ImportError:\n    pass\n",
        "from layers import *\n",
        "ConvBn.forward = lambda self, x: x\n",
        "def make(ConvBn):\n    return ConvBn(4)\n",
    ],
)
def test_an_instance_not_only_run_whole_or_the_name_rebound(extra):
    code = _BLOCK + extra
    assert plain_sequential_class(_context(code), "ConvBn") is None


@pytest.mark.parametrize(
    "extra",
    [
        _held("    def forward(self, x):\n        return self.block(x)\n"),
        "class Net(nn.Module):\n    def __init__(self, flag):\n        super().__init__()\n        self.block = ConvBn(4) if flag else nn.Identity()\n",
        "class Stem(nn.Sequential):\n    def __init__(self):\n        super().__init__()\n        self.add_module('conv1', ConvBn(4))\n",
    ],
)
def test_instances_run_whole(extra):
    assert plain_sequential_class(_context(_BLOCK + extra), "ConvBn") is not None


_LISTED = """
class Pyramid(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        branches = []
        for _ in range(n):
            branches.append(ConvBn(c))
        self.branches = nn.ModuleList(branches)
    def forward(self, x):
        return [branch(x) for branch in self.branches]
"""


def test_instances_in_a_list_given_to_a_module_list_whose_elements_run_whole():
    assert plain_sequential_class(_context(_BLOCK + _LISTED), "ConvBn") is not None


@pytest.mark.parametrize(
    "change",
    [
        ("        self.branches = nn.ModuleList(branches)\n", "        self.branches = nn.ModuleList(branches)\n        self.first = branches[0]\n"),
        ("        branches = []\n", "        branches = [nn.Identity()]\n"),
        ("nn.ModuleList(branches)", "nn.Sequential(*branches)"),
        ("[branch(x) for branch in self.branches]", "[branch[0](x) for branch in self.branches]"),
        ("[branch(x) for branch in self.branches]", "[self.branches[0][:2](x)]"),
    ],
)
def test_instances_in_a_list_not_only_run_whole(change):
    code = _BLOCK + _LISTED.replace(*change)
    assert plain_sequential_class(_context(code), "ConvBn") is None


def _constructor_layers(code: str) -> list[str]:
    ctx = _context(code)
    init = next(n for n in ctx.module.body[1].body.body if type(n) is cst.FunctionDef)  # type: ignore[attr-defined]
    ctx.__class__ = type("InBranch", (Context,), {"class_name": "Branch"})  # (as while the traversal is in the class)
    return [cst.Module([]).code_for_node(e) for e, _ in constructor_layers(ctx, init)]


_BRANCH = """
import torch.nn as nn
class Branch(nn.Sequential):
    def __init__(self, c):
{body}
class Net(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.branch = Branch(c)
    def forward(self, x):
        return self.branch(x)
"""


@pytest.mark.parametrize(
    "body, layers",
    [
        ("        super().__init__(nn.Conv2d(c, c, 1), nn.ReLU())", ["nn.Conv2d(c, c, 1)", "nn.ReLU()"]),
        ("        layers = [nn.Conv2d(c, c, 1), nn.ReLU()]\n        super(Branch, self).__init__(*layers)", ["nn.Conv2d(c, c, 1)", "nn.ReLU()"]),
        # the list changed before it is given, the call in a branch, a keyword, two calls
        ("        layers = [nn.Conv2d(c, c, 1), nn.ReLU()]\n        layers.insert(1, nn.Sigmoid())\n        super().__init__(*layers)", []),
        ("        if c:\n            super().__init__(nn.Conv2d(c, c, 1), nn.ReLU())\n        else:\n            super().__init__()", []),
        ("        super().__init__(*[nn.Conv2d(c, c, 1)], nn.ReLU())", []),
        ("        super().__init__()\n        super().__init__(nn.Conv2d(c, c, 1), nn.ReLU())", []),
    ],
)
def test_the_layers_given_to_the_sequential_s_own_constructor(body, layers):
    assert _constructor_layers(_BRANCH.format(body=body)) == layers
