"""Facts ML003 asks about a file's layers (issue 27, the nineteenth part): a norm parameter's value
through a caller's `**kwargs` is unknown (analysis/norm_layers.py: a caller in another file may give
it anything), and torch's `F.relu` is no instance's `.relu` only where nothing may rebind `F`
(analysis/attribute_owners.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis import attribute_owners, norm_layers
from memlint.analysis.context import Context
from memlint.pipeline.traversal import Traversal

_BLOCK = """
import torch.nn as nn
class Block(nn.Module):
    def __init__(self, c, norm_layer=nn.BatchNorm2d, **kwargs):
        super().__init__()
        self.bn = norm_layer(c)
class Net(nn.Module):
    def __init__(self, c, **kwargs):
        super().__init__()
        self.block = Block(c, **kwargs)
"""


def _parsed(code: str) -> tuple[cst.Module, Context]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)
    return module, ctx


def _values(code: str):
    module, ctx = _parsed(code)
    block = module.body[1]
    init = block.body.body[0]  # type: ignore[attr-defined]
    return norm_layers._parameter_values(ctx, init, "norm_layer", 0)


def test_a_forwarded_kwargs_chain_is_unknown() -> None:
    # a caller in another file may hand `norm_layer=nn.Identity` through the chain
    assert _values(_BLOCK + "def build(**kwargs):\n    return Net(4, **kwargs)\n") is None
    assert _values(_BLOCK + "net = Net(4, norm_layer=nn.SyncBatchNorm)\n") is None


def test_torch_functions_are_no_instance_attribute() -> None:
    code = "import torch.nn.functional as F\nclass A:\n    def f(self, x):\n        return self.relu(x)\ndef g(x):\n    return F.relu(x)\n"
    _, ctx = _parsed(code)
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 1
    _, ctx = _parsed(code + "def h(F, x):\n    return F.relu(x)\n")
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 3  # a parameter `F` may be anything


def test_torch_functions_count_where_the_name_may_be_rebound() -> None:
    head = "import torch.nn.functional as F\nclass A:\n    def f(self, x):\n        return self.relu(x)\n"
    for tail in ("def g(x):\n    import blocks as F\n    return F.relu(x)\n",
                 "from helpers import *\ndef g(x):\n    return F.relu(x)\n",
                 "globals()['F'] = A()\ndef g(x):\n    return F.relu(x)\n"):
        _, ctx = _parsed(head + tail)
        assert attribute_owners.attribute_uses(ctx, "A", "relu") == 2, tail


def test_one_import_target_bound_twice_still_names_torch() -> None:
    body = "class A:\n    def f(self, x):\n        return self.relu(x)\ndef g(x):\n    return F.relu(x)\n"
    _, ctx = _parsed("import torch.nn.functional as F\nimport torch.nn.functional as F\n" + body)
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 1  # two notebook cells importing it alike
    _, ctx = _parsed("import torch.nn.functional as F\nimport blocks as F\n" + body)
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 2  # the later import may be the class's module
