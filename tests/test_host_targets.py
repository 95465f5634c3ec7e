"""host_targets: where the tensor a move follows (`.type_as(x)`, `.to(x.device)`) lives, when its
function shows it is the host; every other binding, or a file that moves torch's default device,
leaves it unknown."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis import host_targets
from memlint.analysis.context import Context
from memlint.pipeline.traversal import Traversal


def _on_host(code: str, name: str = "x") -> bool:
    text = "import torch\n" + textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # the imports resolved, as where a rule asks
    function = next(s for s in module.body if type(s) is cst.FunctionDef)
    return host_targets._local_host_tensor(name, function, ctx)


@pytest.mark.parametrize("value", [
    "torch.LongTensor([[1, 2, 3]])", "torch.tensor([0.5, -1.0])", "torch.zeros(2, 3)", "torch.arange(5).long()",
    "torch.FloatTensor(4, 4).fill_(0)", "torch.from_numpy(a)", "torch.as_tensor((1, 2))",
])  # fmt: skip
def test_a_local_built_on_the_host(value: str) -> None:
    assert _on_host(f"def f(a):\n    x = {value}\n    return torch.ones(1).type_as(x)\n")


@pytest.mark.parametrize("value", [
    "torch.tensor(a)", "torch.zeros(2, device=d)", "torch.LongTensor(a)", "torch.zeros_like(a)", "a.new_zeros(2)",
    "torch.tensor([1, 2]).cuda()", "torch.zeros(2, **kw)",
])  # fmt: skip
def test_a_construction_that_may_be_on_a_device_is_unknown(value: str) -> None:
    assert not _on_host(f"def f(a, d, kw):\n    x = {value}\n    return x\n")


@pytest.mark.parametrize("other", [
    "x = x.cuda()", "x += 1", "x.data = x.data.cuda()", "for x in a:\n        pass", "global x", "def g(x):\n        pass",
    "x, y = a", "del x",
])  # fmt: skip
def test_any_other_binding_makes_it_unknown(other: str) -> None:
    assert not _on_host(f"def f(a):\n    x = torch.zeros(2)\n    {other}\n    return x\n")


def test_a_parameter_or_an_unbound_name_is_unknown() -> None:
    assert not _on_host("def f(x):\n    return x\n")
    assert not _on_host("def f(a):\n    return x\n")


def test_a_move_that_binds_nothing_keeps_it_on_the_host() -> None:
    assert _on_host("def f(a):\n    x = torch.zeros(2)\n    x.cuda()\n    return x\n")


@pytest.mark.parametrize("setting", ['torch.set_default_device("cuda")', 'torch.set_default_tensor_type("torch.cuda.FloatTensor")'])
def test_a_file_that_moves_the_default_device_gets_no_answer(setting: str) -> None:
    assert not _on_host(f"{setting}\ndef f(a):\n    x = torch.zeros(2)\n    return x\n")
    assert not _on_host("def f(a):\n    with torch.device('cuda'):\n        x = torch.zeros(2)\n    return x\n")


@pytest.mark.parametrize(("target", "root"), [("x", "x"), ("x.data", "x"), ("x.detach().long()", "x"), ("x.cuda()", None), ("self.x", None)])
def test_the_tensor_a_target_names(target: str, root: str) -> None:
    found = host_targets._tensor_root(cst.parse_expression(target))
    assert (found.value if found is not None else None) == root


def _given(code: str, unimported: bool = True) -> bool:
    from memlint.pipeline.project import FileView

    text = "import torch\n" + textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, FileView(unimported=unimported), text)
    Traversal(ctx, []).walk(module)
    function = next(s for s in module.body if type(s) is cst.FunctionDef)
    return host_targets._given_host_tensors("x", function, ctx)


_CALLEE = "def f(m, x, n=1):\n    return x\n"


@pytest.mark.parametrize("call", ["f(m, x)", "f(m, x=x, n=2)"])
def test_a_parameter_every_call_gives_a_host_local(call: str) -> None:
    assert _given(_CALLEE + f"def g(m):\n    x = torch.LongTensor([[1, 2]])\n    return {call}\n")


@pytest.mark.parametrize("other", [
    "def h(m, y):\n    return f(m, y)\n",  # a parameter of the caller
    "def h(m):\n    return f(m, torch.zeros(2))\n",  # not a name
    "def h(m, a):\n    return f(m, *a)\n",  # spread
    "def h(m):\n    return f(m)\n",  # left to a default
    "run = f\n",  # read otherwise than called
    "y = torch.zeros(2)\nf(None, y)\n",  # a call at module level
    "class C:\n    def f(self):\n        pass\n",  # another `f` defined
])  # fmt: skip
def test_a_call_that_may_give_anything_else_makes_it_unknown(other: str) -> None:
    assert not _given(_CALLEE + "def g(m):\n    x = torch.LongTensor([[1, 2]])\n    return f(m, x)\n" + other)


def test_a_parameter_bound_again_or_of_an_imported_module_is_unknown() -> None:
    caller = "def g(m):\n    x = torch.LongTensor([[1, 2]])\n    return f(m, x)\n"
    assert not _given("def f(m, x):\n    x = x.cuda()\n    return x\n" + caller)
    assert not _given(_CALLEE + caller, unimported=False)
    assert not _given("@cache\n" + _CALLEE + caller)
