"""Facts of issue 27's twentieth part: layers kept in a plain dict, a library's subclasses of torch
classes, and calls an activation module cannot take."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.activations import cannot_run_activation
from memlint.analysis.context import Context
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.layer_dicts import dict_layer_classes
from memlint.analysis.walk import code_descendants
from memlint.pipeline.traversal import Traversal
from memlint.prescreen.source import Source


def _context(code: str) -> Context:
    """A context whose imports the traversal has read (the facts resolve `nn.` names)."""
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # type: ignore[list-item]
    return ctx


_DICT = """
from collections import OrderedDict
from torch import nn
class Dec(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["a"] = nn.Conv2d(c, c, 1)
        self.convs[("b", 0)] = nn.BatchNorm2d(c)
        self.plain = {}
        self.plain["x"] = nn.Linear(c, c)
        self.net = nn.ModuleList(list(self.convs.values()))
    def forward(self, x):
        return self.plain["x"](self.convs[("b", 0)](self.convs["a"](x)))
"""


def _dicts(code: str) -> dict:
    ctx = _context(code)
    node = next(s for s in ctx.module.body if type(s) is cst.ClassDef)
    init = next(s for s in node.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__")  # type: ignore[attr-defined]
    return dict_layer_classes(ctx, node, init)  # type: ignore[arg-type]


def test_a_dict_the_constructor_fills_with_layers_holds_those_layers():
    assert _dicts(_DICT) == {"convs": frozenset({"Conv2d", "BatchNorm2d"}), "plain": frozenset({"Linear"})}


def test_a_dict_changed_handed_on_or_hooked_holds_what_is_not_known():
    assert "convs" not in _dicts(_DICT + 'Dec(1).convs["a"] = nn.Identity()\n')  # set outside the constructor
    assert "convs" not in _dicts(_DICT.replace("        self.net =", "        self.convs.update(extra)\n        self.net ="))
    assert "convs" not in _dicts(_DICT.replace("        self.net =", "        keep(self.convs)\n        self.net ="))
    assert "convs" not in _dicts(_DICT.replace('self.convs["a"] = nn.Conv2d(c, c, 1)', 'self.convs["a"] = make(c)'))
    assert _dicts(_DICT + "for m in Dec(1).modules():\n    m.register_forward_hook(print)\n") == {}


def test_a_dict_of_a_file_relating_classes_unseen_or_rebinding_unseen_holds_what_is_not_known():
    # `Base = Dec` then `class Lite(Base)`: the subclass's `self.convs[...] = ...` may be Dec's dict
    assert _dicts(_DICT + "Base = Dec\nclass Lite(Base):\n    def strip(self):\n        self.convs['a'] = nn.Identity()\n") == {}
    assert _dicts(_DICT + "class Patch:\n    pass\nBoth = type('Both', (Dec, Patch), {})\n") == {}
    assert _dicts(_DICT + "def swap(m, name):\n    m._modules[name] = nn.Identity()\n") == {}


def test_references_of_an_unrelated_class_through_self_are_not_this_class_s():
    other = "class Other(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.convs = [1]\n"
    assert "convs" in _dicts(_DICT + other)  # another class's own `self.convs` is its own list
    assert "convs" not in _dicts(_DICT + other + "Other().convs.append(2)\n")  # not through `self`: may be Dec's


def test_a_library_subclass_answers_as_its_torch_class():
    ctx = _context("from torchmeta.modules import MetaSequential\nimport torchmeta.modules.linear as L\nfrom other import MetaConv2d\n")
    names = {n.value: n for n in code_descendants(ctx.module) if type(n) is cst.Name}
    assert torch_nn_name(ctx, names["MetaSequential"]) == "Sequential"
    linear = cst.parse_expression("L.MetaLinear")
    assert torch_nn_name(ctx, linear) == "Linear"
    assert torch_nn_name(ctx, names["MetaConv2d"]) is None  # another library's class of that name
    assert "MetaSequential" in Source("x = 1\n").names_for(["Sequential"])  # the screens see the name too


def test_two_arguments_cannot_run_an_activation_module():
    assert cannot_run_activation(cst.parse_expression("self.criterion(outputs, labels)"))  # type: ignore[arg-type]
    assert not cannot_run_activation(cst.parse_expression("self.criterion(1 + outputs)"))  # type: ignore[arg-type]
    assert not cannot_run_activation(cst.parse_expression("self.criterion(x, *rest)"))  # type: ignore[arg-type]
