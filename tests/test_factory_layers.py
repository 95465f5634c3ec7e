"""initialisers.built_layer: a factory of the file that returns the layer it built, also through a
local name it only initialises (fairseq's `Linear`); and the inventory's kind for such a call."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.context import Context
from memlint.analysis.initialisers import built_layer
from memlint.analysis.inventory import inventory
from memlint.pipeline.traversal import Traversal

_CODE = textwrap.dedent(
    """
    import torch.nn as nn
    def Linear(i, o, bias=True):
        m = nn.Linear(i, o, bias)
        nn.init.xavier_uniform_(m.weight)
        if bias:
            m.bias.data.zero_()
        return m
    def conv1x1(i, o):
        return nn.Conv2d(i, o, 1)
    def Branchy(i, o):
        if i == o:
            return nn.Identity()
        m = nn.Linear(i, o)
        return m
    def Hooked(i, o):
        m = nn.Linear(i, o)
        m.register_forward_hook(print)
        return m
    def Rebound(i, o):
        m = nn.Linear(i, o)
        m = nn.utils.weight_norm(m)
        return m
    def Passed(m):
        nn.init.zeros_(m.weight)
        return m
    def Act():
        return nn.ReLU()
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = Linear(4, 4)
            self.conv = conv1x1(4, 4)
            self.branchy = Branchy(4, 4)
            self.hooked = Hooked(4, 4)
            self.rebound = Rebound(4, 4)
            self.act = Act()
    """
)


def _parsed() -> tuple[cst.Module, Context]:
    module = cst.parse_module(_CODE)
    ctx = Context(module, None, _CODE)
    Traversal(ctx, []).walk(module)
    return module, ctx


def _call(name: str) -> cst.Call:
    return cst.parse_expression(f"{name}(4, 4)")  # type: ignore[return-value]


def test_a_factory_returning_its_initialised_local_layer_builds_it() -> None:
    _, ctx = _parsed()
    built = built_layer(ctx, _call("Linear"))
    assert cst.Module([]).code_for_node(built.func) == "nn.Linear"
    assert cst.Module([]).code_for_node(built_layer(ctx, _call("conv1x1")).func) == "nn.Conv2d"


def test_a_factory_that_may_return_another_module_or_hooks_or_rebinds_it_builds_none_known() -> None:
    _, ctx = _parsed()
    for name in ("Branchy", "Hooked", "Rebound", "Passed"):
        call = _call(name)
        assert built_layer(ctx, call) is call, name


def test_the_inventory_gives_a_factory_call_its_layer_kind_without_sizes() -> None:
    _, ctx = _parsed()
    attributes = inventory(ctx)["Net"].attributes
    assert attributes["fc"].kind == "Linear" and attributes["fc"].params is None
    assert attributes["conv"].kind == "Conv2d"
    assert not {"branchy", "hooked", "rebound"} & set(attributes)
    assert "act" not in attributes  # an activation: an `inplace=` fix would belong in the factory


def test_a_name_a_function_around_the_call_binds_is_not_the_factory() -> None:
    """`def __init__(self, d, Linear=nn.Identity)`: the constructor's `Linear` is its parameter,
    not the file's factory; the inventory and an asker naming the functions around it both see so."""
    code = _CODE + textwrap.dedent(
        """
        class Head(nn.Module):
            def __init__(self, d, Linear=nn.Identity):
                super().__init__()
                self.fc = Linear(d, d)
        """
    )
    module = cst.parse_module(code)
    ctx = Context(module, None, code)
    Traversal(ctx, []).walk(module)
    assert "fc" not in inventory(ctx)["Head"].attributes
    init = next(n for n in module.body if isinstance(n, cst.ClassDef) and n.name.value == "Head").body.body[0]
    call = _call("Linear")
    assert built_layer(ctx, call, [init]) is call  # type: ignore[list-item]
    assert built_layer(ctx, call, []) is not call
