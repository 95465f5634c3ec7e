"""memlint.analysis.deep_imports and memlint.analysis.inplace_switches: facts read on CPython's AST."""

from __future__ import annotations

import textwrap

import pytest

from memlint.analysis.deep_imports import imported_frameworks
from memlint.analysis.inplace_switches import switched_on
from memlint.prescreen import Source


def _frameworks(text: str):
    return imported_frameworks(Source(textwrap.dedent(text)))


@pytest.mark.parametrize(
    "text, frameworks, foreign",
    [
        ("import paddle\nimport numpy as np\n", ["paddle"], True),
        ("import mxnet as mx\nfrom torchvision.transforms import transforms\n", ["mxnet"], True),
        ("import mxnet as mx\nfrom torchvision import transforms\n", ["mxnet"], True),
        ("import mxnet as mx\nfrom torchvision import models\n", ["mxnet", "torch"], False),
        ("import tensorflow as tf\nimport torch\n", ["tensorflow", "torch"], False),  # a weight converter
        ("import tensorflow as tf\ndef f():\n    import torch\n", ["tensorflow", "torch"], False),  # in a function too
        ("import jax\nimport horovod.torch as hvd\n", ["jax", "torch"], False),
        ("import jax\nimport timm\n", ["jax", "torch"], False),
        ("import jax\nx = torch.zeros(2)\n", ["jax", "torch"], False),  # names torch without importing it
        ("import numpy as np\nimport os\n", [], False),  # imports nothing deep: as before
        ("import torch\n", ["torch"], False),
    ],
)
def test_the_frameworks_a_file_imports(text, frameworks, foreign):
    found, reached = _frameworks(text)
    assert found == frameworks
    assert (reached is not None) == foreign


def test_a_file_of_another_framework_lists_the_modules_that_may_be_the_projects():
    _, reached = _frameworks("import paddle\nimport os\nfrom nets import Net\nfrom . import utils\nfrom helpers import *\n")
    assert sorted(map(tuple, reached)) == [("", "utils", 1, False), ("helpers", None, 0, True), ("nets", "Net", 0, False)]


def _switched(text: str) -> list[str]:
    return switched_on(Source(textwrap.dedent(text)))


def test_a_loop_over_modules_switching_listed_classes_in_place():
    assert _switched("""
        def init(model):
            for m in model.modules():
                t = type(m)
                if t is nn.Conv2d:
                    pass
                elif t in [nn.ReLU, nn.SiLU]:
                    m.inplace = True
    """) == ["ReLU", "SiLU"]
    assert _switched("for m in net.modules():\n    if isinstance(m, (nn.Hardswish, nn.ReLU6)):\n        m.inplace = True\n") == ["Hardswish", "ReLU6"]
    assert _switched("for m in net.modules():\n    m.inplace = True\n") == ["*"]


@pytest.mark.parametrize(
    "text",
    [
        "for m in net.modules():\n    if type(m) is nn.Conv2d:\n        pass\n    else:\n        m.inplace = True\n",  # an else: every other class
        "for m in net.modules():\n    if type(m) in [nn.ReLU]:\n        m.inplace = flag\n",  # not the literal True
        "for m in net.modules():\n    if m.training:\n        m.inplace = True\n",  # not a test of its class
        "for m in net.children():\n    m.inplace = True\n",  # not every module
        "for m in net.modules():\n    if type(m) in kinds:\n        m.inplace = True\n",  # classes not written out
    ],
)
def test_what_is_not_read_as_switching_every_instance(text):
    assert _switched(text) == []
