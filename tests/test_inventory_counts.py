"""The inventory's parameter counts of the file's own classes: a class built in many places, or
classes building each other, is described once per distinct construction (inventory._Builder's
memoised `_local_params`), with the same counts as describing it at every construction."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis import inventory as inventory_module
from memlint.analysis.context import Context
from memlint.analysis.inventory import inventory
from memlint.pipeline.traversal import Traversal


def _described(code: str, monkeypatch) -> tuple[dict, dict[str, int]]:
    """The inventory of `code`, and how often each class was described to get it."""
    calls: dict[str, int] = {}
    describe = inventory_module._Builder._describe

    def counting(self, name, args=None):
        calls[name] = calls.get(name, 0) + 1
        return describe(self, name, args)

    monkeypatch.setattr(inventory_module._Builder, "_describe", counting)
    module = cst.parse_module(code)
    ctx = Context(module, None, code)
    Traversal(ctx, []).walk(module)
    return inventory(ctx), calls


def _nested(depth: int) -> str:
    """Level i builds two of level i - 1, each 8 wide: 2**depth leaves of 8 * 8 + 8."""
    code = "import torch.nn as nn\nclass L0(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.fc = nn.Linear(n, n)\n"
    for i in range(1, depth + 1):
        code += f"class L{i}(nn.Module):\n    def __init__(self, n):\n        super().__init__()\n        self.a = L{i - 1}(8)\n        self.b = L{i - 1}(8)\n"
    return code + f"class Top(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.body = L{depth}(8)\n"


def test_classes_building_each_other_are_described_once_per_construction_not_per_path(monkeypatch) -> None:
    classes, calls = _described(_nested(12), monkeypatch)
    assert classes["Top"].param_count == 2**12 * (8 * 8 + 8)
    assert max(calls.values()) <= 3  # (once by the inventory, once per distinct construction)


def test_a_class_built_with_other_arguments_is_counted_again(monkeypatch) -> None:
    code = textwrap.dedent(
        """
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, n, bias=True):
                super().__init__()
                self.fc = nn.Linear(n, n, bias=bias)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.small = Block(4)
                self.large = Block(8)
                self.again = Block(4)
                self.plain = Block(4, bias=False)
        """
    )
    classes, calls = _described(code, monkeypatch)
    assert classes["Net"].param_count == (16 + 4) + (64 + 8) + (16 + 4) + 16
    assert calls["Block"] == 4  # the inventory's own, `Block(4)`, `Block(8)`, `Block(4, bias=False)`


def test_a_chain_of_subclasses_is_described_linearly(monkeypatch) -> None:
    code = "import torch.nn as nn\nclass B0(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.fc = nn.Linear(8, 8)\n"
    code += "".join(f"class B{i}(B{i - 1}):\n    pass\n" for i in range(1, 60))
    classes, calls = _described(code, monkeypatch)
    assert classes["B59"].param_count == 72
    assert max(calls.values()) <= 2


def test_classes_that_build_each_other_stay_uncounted(monkeypatch) -> None:
    code = textwrap.dedent(
        """
        import torch.nn as nn
        class A(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = B()
        class B(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
                self.a = A()
        class C(nn.Module):
            def __init__(self):
                super().__init__()
                self.b = B()
                self.a = A()
        """
    )
    classes, _ = _described(code, monkeypatch)
    assert classes["A"].param_count is None and classes["B"].param_count is None and classes["C"].param_count is None
