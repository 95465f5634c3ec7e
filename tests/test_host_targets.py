"""host_targets: where the tensor a move follows (`.type_as(x)`, `.to(x.device)`) lives, when its
function shows it is the host; every other binding, or a file that moves torch's default device,
leaves it unknown."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis import host_targets
from memlint.analysis.context import Context
from memlint.analysis.model import names_cpu
from memlint.pipeline.traversal import Traversal


def _on_host(code: str, name: str = "x") -> bool:
    text = "import torch\n" + textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # the imports resolved, as where a rule asks
    function = next(s for s in module.body if type(s) is cst.FunctionDef)
    return host_targets._local_host_tensor(name, function, ctx)


@pytest.mark.parametrize("value", [
    "torch.LongTensor([[1, 2, 3]])", "torch.FloatTensor(4, 4).fill_(0)", "torch.from_numpy(a)", "torch.zeros(2, device='cpu')",
    "torch.tensor([0.5, -1.0], device=torch.device('cpu'))", "a.cpu()", "a.cuda().cpu().long()",
    # sizes and place-keeping methods as their owners (host_factories.is_size, tables) know them
    "torch.FloatTensor(a.size() + (2,))", "torch.LongTensor(a[0].size(0), len(a))", "torch.ByteTensor(2).view_as(a).char()",
])  # fmt: skip
def test_a_local_built_on_the_host(value: str) -> None:
    assert _on_host(f"def f(a):\n    x = {value}\n    return torch.ones(1).type_as(x)\n")


@pytest.mark.parametrize("value", [
    "torch.tensor(a)", "torch.zeros(2, device=d)", "torch.LongTensor(a)", "torch.zeros_like(a)", "a.new_zeros(2)",
    "torch.tensor([1, 2]).cuda()", "torch.zeros(2, **kw)",
    # the default device decides these, and another file may set it to the accelerator
    "torch.tensor([0.5, -1.0])", "torch.zeros(2, 3)", "torch.arange(5).long()", "torch.as_tensor((1, 2))",
    "torch.arange(3, out=a)", "torch.zeros(2, device='cuda')",
    # the host named for certain only: `torch.device("cpu")` itself, with that one argument
    "torch.zeros(2, device=place('cpu'))", "torch.zeros(2, device=torch.device('cpu', 0))",
])  # fmt: skip
def test_a_construction_that_may_be_on_a_device_is_unknown(value: str) -> None:
    assert not _on_host(f"def f(a, d, kw):\n    x = {value}\n    return x\n")


_HOST = "def f(a, m):\n    x = torch.LongTensor([1, 2])\n"


@pytest.mark.parametrize("use", [
    "y = x + 1", "y = x.data[0] > 0", "y = torch.cat((a, torch.ones(2).type_as(x.data)))", "y = m(x, a)",
    "y = x.float().sum()", "n = x.shape[0] + x.size(0)", "z = torch.ones(2).to(x.device)", "x.fill_(0)",
])  # fmt: skip
def test_a_name_only_read_stays_on_the_host(use: str) -> None:
    assert _on_host(_HOST + f"    {use}\n    return torch.ones(1).type_as(x)\n")


@pytest.mark.parametrize("use", [
    "x.data, b = x.data.cuda(), 0", "[x.data] = [x.data.cuda()]", "setattr(x, 'data', a)", "x.__setattr__('data', a)",
    "y = x", "m(x)", "x.set_(a)", "exec('x.data = a')", "y = [x]", "x[0] = 1", "x.data += 1",
])  # fmt: skip
def test_a_use_that_may_move_or_alias_it_makes_it_unknown(use: str) -> None:
    assert not _on_host(_HOST + f"    {use}\n    return torch.ones(1).type_as(x)\n")


@pytest.mark.parametrize("other", [
    "x = x.cuda()", "x += 1", "x.data = x.data.cuda()", "for x in a:\n        pass", "global x", "def g(x):\n        pass",
    "x, y = a", "del x",
])  # fmt: skip
def test_any_other_binding_makes_it_unknown(other: str) -> None:
    assert not _on_host(f"def f(a):\n    x = torch.LongTensor(2)\n    {other}\n    return x.sum()\n")


def test_a_parameter_or_an_unbound_name_is_unknown() -> None:
    assert not _on_host("def f(x):\n    return x\n")
    assert not _on_host("def f(a):\n    return x\n")


def test_a_move_that_binds_nothing_keeps_it_on_the_host() -> None:
    assert _on_host("def f(a):\n    x = torch.LongTensor(2)\n    y = x.cuda()\n    return torch.ones(1).type_as(x)\n")


@pytest.mark.parametrize("setting", ['torch.set_default_device("cuda")', 'torch.set_default_tensor_type("torch.cuda.FloatTensor")'])
def test_a_file_that_moves_the_default_device_gets_no_answer(setting: str) -> None:
    assert not _on_host(f"{setting}\ndef f(a):\n    x = torch.LongTensor(2)\n    return x.sum()\n")
    assert not _on_host("def f(a):\n    with torch.device('cuda'):\n        x = torch.LongTensor(2)\n    return x.sum()\n")


@pytest.mark.parametrize(("target", "root"), [("x", "x"), ("x.data", "x"), ("x.detach().long()", "x"), ("x.cuda()", None), ("self.x", None)])
def test_the_tensor_a_target_names(target: str, root: str) -> None:
    found = host_targets._tensor_root(cst.parse_expression(target))
    assert (found.value if found is not None else None) == root


@pytest.mark.parametrize(("expr", "loose", "certain"), [
    ('"cpu"', True, True), ('torch.device("cpu")', True, True), ('torch.device("cuda")', False, False),
    ('place("cpu")', True, False), ('torch.device("cpu", 0)', True, False), ("torch.device(d)", False, False),
])  # fmt: skip
def test_names_cpu_loose_and_certain(expr: str, loose: bool, certain: bool) -> None:
    """`model.names_cpu`: any call given `"cpu"` first reads as the host; with a Context (host_targets'
    question), only `torch.device("cpu")` resolved through the imports."""
    text = "import torch\n"
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)
    parsed = cst.parse_expression(expr)
    assert names_cpu(parsed) is loose
    assert names_cpu(parsed, ctx) is certain
