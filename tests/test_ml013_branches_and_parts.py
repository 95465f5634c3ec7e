"""ML013's facts about where a host tensor goes: the branch of a device check that a run on the
accelerator takes (`iteration.accelerator_branch`), the names an unpacking binds
(`moves.unpacked_bindings`), and tensors built from host parts (`host_factories.factory_under`
through `torch.stack` / `torch.cat` / `torch.meshgrid`)."""

from __future__ import annotations

import libcst as cst
import pytest

from memlint.analysis.iteration import accelerator_branch, holds_on_accelerator
from memlint.analysis.moves import later_moves, unpacked_bindings


def _test(source: str) -> cst.BaseExpression:
    return cst.parse_expression(source)


@pytest.mark.parametrize(
    "test, holds",
    [
        ("x.is_cuda", True),
        ("torch.cuda.is_available()", True),
        ('x.device.type == "cuda"', True),
        ("use_gpu and x.is_cuda", True),
        ("not x.is_cuda", False),
        ('x.device.type != "cuda"', False),
        ("not not x.is_cuda", True),
        ("x.is_cuda or y", None),
        ("use_gpu or x.is_cuda", None),
        ("args.log", None),
        ("x.is_cuda is False", None),
        # a run given accelerator ids (`tables.DEVICE_IDS`); none given may still run on every GPU
        ("self.device_id is not None", True),
        ("self.device_id != None", True),
        ("args.gpu is not None", True),
        ("None is not gpu_ids", True),
        ("self.device_id is None", None),
        ("self.device_id == None", None),
        ("not (self.device_id is None)", None),
        ("self.weight_id is not None", None),
        ("self.device is not None", None),
    ],
)
def test_which_way_a_device_check_goes_on_the_accelerator(test, holds):
    assert holds_on_accelerator(_test(test)) is holds


def _if(source: str) -> cst.If:
    statement = cst.parse_statement(source)
    assert isinstance(statement, cst.If)
    return statement


def test_the_branch_a_run_on_the_accelerator_takes():
    positive = _if("if x.is_cuda:\n    a = 1\nelse:\n    a = 2\n")
    assert accelerator_branch(positive) is positive.body
    negative = _if("if not x.is_cuda:\n    a = 1\nelse:\n    a = 2\n")
    assert accelerator_branch(negative) is negative.orelse.body
    assert accelerator_branch(_if("if not x.is_cuda:\n    a = 1\n")) is None  # the host's branch only
    assert accelerator_branch(_if("if not x.is_cuda:\n    a = 1\nelif y:\n    a = 2\n")) is None
    assert accelerator_branch(_if("if flag:\n    a = 1\nelse:\n    a = 2\n")) is None


def _moves(source: str) -> list[tuple[str, str]]:
    module = cst.parse_module(source)
    worth = lambda value: "torch." in module.code_for_node(value)  # noqa: E731
    return [(module.code_for_node(value), module.code_for_node(move)) for value, move in later_moves(module.body, worth)]


def test_a_move_in_the_accelerators_branch_that_rebinds_the_name_is_followed():
    source = "out = torch.zeros(n)\nif x.is_cuda:\n    out = out.cuda()\n    kernel(x, out)\nelse:\n    host_kernel(x, out)\ny = out\n"
    assert _moves(source) == [("torch.zeros(n)", "out.cuda()")]
    negated = "out = torch.zeros(n)\nif not x.is_cuda:\n    host_kernel(x, out)\nelse:\n    out = out.cuda()\n    kernel(x, out)\n"
    assert _moves(negated) == [("torch.zeros(n)", "out.cuda()")]


def test_a_branch_that_reads_the_host_tensor_first_or_keeps_it_is_not_followed():
    assert _moves("out = torch.zeros(n)\nif x.is_cuda:\n    fill(out)\n    out = out.cuda()\n") == []
    assert _moves("out = torch.zeros(n)\nif x.is_cuda:\n    gpu = out.cuda()\n    out.add_(1)\n") == []
    assert _moves("out = torch.zeros(n)\nif not x.is_cuda:\n    out = out.cuda()\n") == []  # the host's run


def _unpacked(source: str) -> list[tuple[str, str]]:
    module = cst.parse_module(source)
    return [(name, module.code_for_node(value)) for name, value in unpacked_bindings(module.body[0])]


def test_an_unpacking_binds_each_name():
    assert _unpacked("a, b = torch.arange(n), m\n") == [("a", "torch.arange(n)"), ("b", "m")]
    assert _unpacked("ys, xs = torch.meshgrid(h, w)\n") == [("ys", "torch.meshgrid(h, w)"), ("xs", "torch.meshgrid(h, w)")]
    assert _unpacked("a, *b = t\n") == []
    assert _unpacked("a, a = t\n") == []
    assert _unpacked("a, b = c, d, e\n") == []
    assert _unpacked("a = b = t\n") == []
    assert _unpacked("a, self.b = t\n") == []


def test_unpacked_grids_moved_together_are_followed():
    source = "ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w))\nxs, ys = xs.cuda(), ys.cuda()\n"
    assert sorted(move for _, move in _moves(source)) == ["xs.cuda()", "ys.cuda()"]


def test_with_an_else_only_a_rebinding_move_is_followed():
    # a `return` of the moved tensor with an `else` returning the host one is held back: such helpers
    # are reached by name through model-like receivers, where the class that runs is unknown
    assert _moves("z = torch.zeros(n)\nif use_cuda:\n    return z.cuda()\nelse:\n    return z\n") == []
    assert _moves("z = torch.zeros(n)\nif use_cuda:\n    return z.cuda()\nreturn z\n") == [("torch.zeros(n)", "z.cuda()")]


def test_nested_stacks_cost_linearly(monkeypatch):
    """Each level of `torch.stack([torch.stack([...]), torch.ones(3)])` asks whether its parts hold a
    host factory and then walks its first part itself: kept per node, the work grows with the depth,
    not twice per level (depth 14 asked `factory_under` over 30,000 times before)."""
    from memlint import api
    from memlint.analysis import host_factories

    calls = 0
    original = host_factories.factory_under

    def counting(*args, **kwargs):
        nonlocal calls
        calls += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(host_factories, "factory_under", counting)
    nested = "torch.ones(3)"
    for _ in range(14):
        nested = f"torch.stack([{nested}, torch.ones(3)])"
    source = f"import torch\nimport torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n        return x + {nested}.cuda()\n"
    found = api.lint_source(source, "deep.py", select=["ML013"])
    assert [d.code for d in found] == ["ML013"]
    assert calls < 500


def test_a_test_of_given_device_ids_is_fixed_for_the_run():
    from memlint.analysis.iteration import condition_is_device_check, device_ids_given

    assert condition_is_device_check(_test("self.device_id is not None"))
    assert condition_is_device_check(_test("args.gpu is None"))  # either way, the same on every step
    assert not condition_is_device_check(_test("self.mask is None"))
    assert device_ids_given(_test("args.gpu is None")) is False
    assert device_ids_given(_test("args.gpu < None")) is None


def test_a_move_behind_given_device_ids_is_followed():
    source = "one_hot = torch.zeros(n)\nif self.device_id != None:\n    one_hot = one_hot.cuda(self.device_id[0])\none_hot.scatter_(1, y, 1)\n"
    assert _moves(source) == [("torch.zeros(n)", "one_hot.cuda(self.device_id[0])")]
    assert _moves("one_hot = torch.zeros(n)\nif self.device_id is None:\n    one_hot = one_hot.cuda()\n") == []


def test_the_accelerators_arm_of_a_conditional_expression_is_followed():
    assert _moves("z = torch.zeros(n)\nz = z.cuda() if x.is_cuda else z\n") == [("torch.zeros(n)", "z.cuda()")]
    assert _moves("z = torch.zeros(n)\nz = z if not x.is_cuda else z.cuda()\n") == [("torch.zeros(n)", "z.cuda()")]
    assert _moves("z = torch.zeros(n)\nz = z if x.is_cuda else z.cuda()\n") == []  # the host's arm moves
    assert _moves("z = torch.zeros(n)\nz = z.cuda() if flag else z\n") == []  # no device check
    assert _moves("z = torch.zeros(n)\nz = z.cuda() if x.is_cuda else z.half()\n") == []  # the other arm computes


def test_a_part_joined_into_a_name_moved_later_goes_with_it():
    source = "noise = torch.ones(n)\nimg = torch.cat((img, noise), dim=1)\nimg = img.to(device)\n"
    assert ("torch.ones(n)", "img.to(device)") in _moves(source)  # (the join, holding `torch.`, is moved too)
    read_after = "noise = torch.ones(n)\nbatch = torch.cat((img, noise), 1)\nbatch = batch.to(device)\nlog(noise)\n"
    assert ("torch.ones(n)", "batch.to(device)") not in _moves(read_after)  # the host part is still used on the host
    never_moved = "noise = torch.ones(n)\nimg = torch.cat((img, noise), 1)\nshow(img)\n"
    assert _moves(never_moved) == []
