"""The list/Sequential facts ML003 asks for every pair of layers a scope adds are computed once per
scope and name, not once per pair (a constructor of many appends stays linear)."""

from __future__ import annotations

import memlint.analysis.sequences as sequences
import memlint.analysis.sequential_subclasses as sequential_subclasses
from memlint.pipeline.registry import all_rules
from memlint.rule import Valid
from memlint.testing import lint_example

_EXACT = {"extend-select": ["ML003"]}


def _ml003():
    return next(rule for rule in all_rules() if rule.code == "ML003")


def _counting(monkeypatch, module, name: str) -> list:
    calls: list = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_appended_list_asked_once_per_scope(monkeypatch):
    calls = _counting(monkeypatch, sequences, "_unpacked_into_sequential_only")
    bound = _counting(monkeypatch, sequences, "_sequential_bound_to")
    lines = ["from torch import nn", "class Head(nn.Module):", "    def __init__(self, c):", "        super().__init__()", "        layers = []"]
    for i in range(40):
        lines += ["        layers.append(nn.Conv2d(c, c, 3))", f"        w{i} = c"]
    lines += ["        layers.append(nn.ReLU())", "        self.layers = nn.Sequential(*layers)", ""]
    findings = lint_example(_ml003(), Valid("\n".join(lines), config=_EXACT))
    assert [d.code for d in findings if d.code == "ML003"] == ["ML003"]  # the ReLU after the last conv
    assert len(calls) == 1 and len(bound) == 1


def test_instances_container_asked_once_per_list(monkeypatch):
    calls = _counting(monkeypatch, sequential_subclasses, "_list_given_to_container")
    lines = [
        "from torch import nn",
        "class Branch(nn.Sequential):",
        "    def __init__(self, c):",
        "        super().__init__(nn.Conv2d(c, c, 1), nn.GroupNorm(2, c), nn.ReLU())",
        "class Net(nn.Module):",
        "    def __init__(self, c):",
        "        super().__init__()",
        "        modules = []",
    ]
    lines += ["        modules.append(Branch(c))"] * 40
    lines += ["        self.convs = nn.ModuleList(modules)", "    def forward(self, x):", "        return [m(x) for m in self.convs]", ""]
    lint_example(_ml003(), Valid("\n".join(lines), config=_EXACT))
    assert len(calls) == 1
