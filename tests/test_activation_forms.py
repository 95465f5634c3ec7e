"""The forms an activation or a layer takes (issue 27, the twenty-first part): the Tensor-method
form of an activation (analysis/activations.py), an attribute chosen by a conditional expression
or bound in a `try`'s blocks (analysis/inventory.py), and the elements of a ModuleList built from a
`+` of lists whose elements may be conditional expressions (analysis/module_lists.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.activations import tensor_method_activation
from memlint.analysis.context import Context
from memlint.analysis.inventory import inventory
from memlint.analysis.module_lists import element_classes
from memlint.pipeline.traversal import Traversal

_CODE = textwrap.dedent(
    """
    import torch.nn as nn
    class Net(nn.Module):
        def __init__(self, c, act=True, skips=(), make=None):
            super().__init__()
            try:
                self.act = nn.Hardswish() if act else nn.Identity()
            except AttributeError:
                self.act = nn.Identity()
            self.gate = nn.ReLU() if act else make(c)
            try:
                self.conv = nn.Conv2d(c, c, 3)
            except RuntimeError:
                pass
            self.chosen = nn.ModuleList([nn.Linear(c, c)] + [nn.Linear(c, c) if i not in skips else nn.Linear(2 * c, c) for i in range(3)])
            self.mixed = nn.ModuleList([nn.Linear(c, c)] + [nn.Linear(c, c) if i else make(c) for i in range(3)])
            self.named = nn.ModuleList([nn.Linear(c, c)] + self.extra(c))
    """
)


def _parsed() -> tuple[cst.Module, Context]:
    module = cst.parse_module(_CODE)
    ctx = Context(module, None, _CODE)
    Traversal(ctx, []).walk(module)
    return module, ctx


def _call(code: str) -> cst.Call:
    return cst.parse_expression(code)  # type: ignore[return-value]


def test_the_tensor_method_form_names_the_activation_and_its_receiver() -> None:
    found = tensor_method_activation(_call("self.w_1(x).relu()"))
    assert found is not None and found[0] == "relu"
    assert cst.Module([]).code_for_node(found[1]) == "self.w_1(x)"
    assert tensor_method_activation(_call("torch.relu(x)")) is None  # the function form: its argument is the input
    assert tensor_method_activation(_call("x.relu(1)")) is None  # a method taking an argument is not Tensor.relu
    assert tensor_method_activation(_call("x.sigmoid()")) is None  # no in-place twin with the same backward


def test_a_conditional_expression_of_layers_binds_each_branch_and_a_try_binds_as_a_branch() -> None:
    _, ctx = _parsed()
    described = inventory(ctx)["Net"]
    assert [layer.kind for layer in described.branches["act"]] == ["Hardswish", "Identity", "Identity"]
    assert "act" in described.chosen and "act" not in described.attributes
    assert "gate" not in described.branches  # a branch that builds no known layer: nothing recorded
    assert described.conditional["conv"].kind == "Conv2d"  # bound in a `try` only: where it exists, that layer


def test_a_module_list_of_a_list_plus_a_comprehension_of_chosen_layers() -> None:
    module, ctx = _parsed()
    init = module.body[1].body.body[0]  # type: ignore[attr-defined]
    assert element_classes(ctx, init, "chosen") == frozenset({"Linear"})
    assert element_classes(ctx, init, "mixed") is None  # one branch may be anything
    assert element_classes(ctx, init, "named") is None  # a part that is no display: what it holds is not read
