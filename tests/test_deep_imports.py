"""memlint.analysis.deep_imports: facts read on CPython's AST."""

from __future__ import annotations

import textwrap

import pytest

from memlint.analysis.deep_imports import imported_frameworks
from memlint.prescreen import Source


def _frameworks(text: str):
    return imported_frameworks(Source(textwrap.dedent(text)))


@pytest.mark.parametrize(
    "text, frameworks, torch_free",
    [
        ("import paddle\nimport numpy as np\n", ["paddle"], True),
        ("import mxnet as mx\nfrom torchvision.transforms import transforms\n", ["mxnet", "torch"], False),  # any torchvision import
        ("import mxnet as mx\nfrom torchvision import transforms\n", ["mxnet", "torch"], False),
        ("import tensorflow as tf\nfrom horovod import torch as hvd\n", ["tensorflow", "torch"], False),  # the name imported is torch
        ("import tensorflow as tf\nth = __import__('torch')\n", ["tensorflow", "torch"], False),
        ("import jax\nimport importlib\nnn = importlib.import_module('torch.nn')\n", ["jax", "torch"], False),
        ("import mxnet as mx\nimport horovod.mxnet as hvd\n", ["mxnet"], True),
        ("import mxnet as mx\nfrom torchvision import models\n", ["mxnet", "torch"], False),
        ("import tensorflow as tf\nimport torch\n", ["tensorflow", "torch"], False),  # a weight converter
        ("import tensorflow as tf\ndef f():\n    import torch\n", ["tensorflow", "torch"], False),  # in a function too
        ("import jax\nimport horovod.torch as hvd\n", ["jax", "torch"], False),
        ("import jax\nimport timm\n", ["jax", "torch"], False),
        ("import jax\nx = torch.zeros(2)\n", ["jax", "torch"], False),  # names torch without importing it
        ("import numpy as np\nimport os\n", [], True),  # imports nothing deep: as before
        ("import torch\n", ["torch"], False),
    ],
)
def test_the_frameworks_a_file_imports(text, frameworks, torch_free):
    found, reached = _frameworks(text)
    assert found == frameworks
    assert (reached is not None) == torch_free


def test_a_file_of_another_framework_lists_the_modules_that_may_bring_torch():
    # known torch-free libraries (numpy, cv2) are left out: every other module must be resolved
    _, reached = _frameworks("import paddle\nimport os\nimport numpy, cv2\nfrom nets import Net\nfrom . import utils\nfrom helpers import *\n")
    assert sorted(map(tuple, reached)) == [("", "utils", 1, False), ("helpers", None, 0, True), ("nets", "Net", 0, False)]


def test_the_standard_library_is_known_without_sys_stdlib_module_names():
    # Python 3.9 has no `sys.stdlib_module_names`: the list is read from the interpreter's own
    # folders there (CI's oldest-Python run crashed on the attribute before)
    from memlint.analysis.stdlib_modules import _listed_on_disk

    listed = _listed_on_disk()
    assert {"io", "os", "json", "collections", "typing", "sys", "math", "importlib"} <= listed
    assert not {"libcst", "click", "pytest", "site-packages"} & listed
