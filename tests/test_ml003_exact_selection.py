"""ML003's default set and its exact selection (issue 27, deliverable 3; docs/rules/ML003.md).

The default set reports an in-place activation where `inplace=True` saves memory there: LeakyReLU /
ELU / CELU / SELU followed by a layer that keeps its input (they keep one activation fewer for
backward), any other activation only in code that runs with gradients off.  A ReLU in a module that trains leaves the step's peak
unchanged (bench/inplace_savings.py): it is reported only when ML003 is selected by its exact code,
as a rule that is off by default is; `ML`, `ML0` and `ALL` do not turn it on."""

from __future__ import annotations

import json

import pytest
from conftest import invoke, write

from memlint import api
from memlint.config import Selection, resolve_exact_selection

SOURCE = """from torch import nn
relu = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.Conv2d(8, 8, 3))
leaky = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.LeakyReLU(0.1), nn.Conv2d(8, 8, 3))
last = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.LeakyReLU(0.1))
"""
RELU, LEAKY, LAST = (2, 61), (3, 62), (4, 61)


def _sites(**selection) -> list[tuple[int, int]]:
    return [(d.location.row, d.location.column) for d in api.lint_source(SOURCE, "model.py", **selection) if d.code == "ML003"]


def test_the_default_set_reports_only_the_activation_that_saves_memory_in_training():
    assert _sites() == [LEAKY]


@pytest.mark.parametrize("selection", [{"select": ["ML003"]}, {"extend_select": ["ML003"]}, {"select": ["ml003"]}])
def test_the_exact_code_reports_every_site(selection):
    assert _sites(**selection) == [RELU, LEAKY, LAST]


@pytest.mark.parametrize("selection", [{"select": ["ML"]}, {"select": ["ML0"]}, {"select": ["ALL"]}, {"extend_select": ["ML00"]}])
def test_a_prefix_or_all_keeps_the_default_set(selection):
    assert _sites(**selection) == [LEAKY]


def test_ignore_after_select_drops_the_exact_selection():
    layers = [Selection(select=["ML003"]), Selection(ignore=["ML00"])]
    assert resolve_exact_selection(layers) == frozenset()
    assert resolve_exact_selection([Selection(select=["ML003"]), Selection(select=["ML"])]) == frozenset()
    assert resolve_exact_selection([Selection(select=["ML"]), Selection(extend_select=["ML003"])]) == {"ML003"}


def test_the_message_says_what_the_saving_is():
    relu, leaky, last = api.lint_source(SOURCE, "model.py", select=["ML003"])
    assert "leaves a training step's peak unchanged" in relu.message
    assert "one activation of this size fewer for backward (out of place" in leaky.message
    assert "only where the layer that reads it keeps its input" in last.message  # nothing after it here


def test_extend_select_in_the_configuration_file(project):
    write(project / "model.py", SOURCE)
    write(project / "pyproject.toml", '[tool.memlint]\nextend-select = ["ML003"]\n')
    found = json.loads(invoke("check", "--output-format", "json", "model.py").output)
    assert [(d["location"]["row"], d["location"]["column"]) for d in found if d["code"] == "ML003"] == [RELU, LEAKY, LAST]
