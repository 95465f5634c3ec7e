"""Three facts ML003 asks about a file's layers (issue 27, the nineteenth part): a norm parameter's
value through a caller's `**kwargs` (analysis/norm_layers.py), torch's `F.relu` as no instance's
`.relu` (analysis/attribute_owners.py), and a `None` placeholder beside a branch's layer
(analysis/class_layers.py)."""

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


def test_a_forwarded_kwargs_chain_with_no_other_value_keeps_the_default() -> None:
    assert _values(_BLOCK + "def build(**kwargs):\n    if kwargs.get('v'):\n        print(kwargs['v'])\n    return Net(4, **kwargs)\n") == ("BatchNorm2d",)


def test_a_keyword_given_through_the_chain_counts() -> None:
    assert _values(_BLOCK + "net = Net(4, norm_layer=nn.SyncBatchNorm)\n") == ("BatchNorm2d", "SyncBatchNorm")
    assert _values(_BLOCK + "net = Net(4, norm_layer=nn.Identity)\n") is None


def test_a_dictionary_changed_on_the_way_is_unknown() -> None:
    for change in ("kwargs['norm_layer'] = f", "kwargs.pop('norm', None)", "kwargs = dict(kwargs)", "g = lambda: kwargs"):
        code = _BLOCK.replace("        self.block = Block(c, **kwargs)", f"        {change}\n        self.block = Block(c, **kwargs)")
        assert _values(code) is None, change


def test_a_dictionary_of_another_name_is_unknown() -> None:
    code = _BLOCK.replace("self.block = Block(c, **kwargs)", "self.block = Block(c, **options)")
    assert _values(code) is None


def test_a_caller_with_its_own_norm_parameter_forwards_none() -> None:
    code = _BLOCK.replace("def __init__(self, c, **kwargs):", "def __init__(self, c, norm_layer=None, **kwargs):")
    assert _values(code + "net = Net(4, norm_layer=nn.Identity)\n") == ("BatchNorm2d",)


def test_torch_functions_are_no_instance_attribute() -> None:
    code = "import torch.nn.functional as F\nclass A:\n    def f(self, x):\n        return self.relu(x)\ndef g(x):\n    return F.relu(x)\n"
    _, ctx = _parsed(code)
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 1
    _, ctx = _parsed(code + "def h(F, x):\n    return F.relu(x)\n")
    assert attribute_owners.attribute_uses(ctx, "A", "relu") == 3  # a parameter `F` may be anything


def test_the_project_pass_names_the_norm_keywords_given_something_else() -> None:
    from pathlib import Path

    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen.source import Source

    files = {
        "blocks.py": "import torch.nn as nn\ndef make(c, norm_layer=nn.BatchNorm2d, **kw):\n    return nets(c, norm_layer=norm_layer)\n",
        "train.py": (
            "import torch.nn as nn\nfrom blocks import make\nBatchNorm2d = nn.SyncBatchNorm\n"
            "a = make(4, norm_layer=BatchNorm2d)\nb = make(4, norm=None)\n"
            "c = make(4, bn_layer=lambda c: nn.Identity())\nd = dict(kw={'norm_cfg': 'BN'})\n"
        ),
    }
    project = Project([(Path(name), name, summarize(Source(text))) for name, text in files.items()])
    assert project.view(0).other_norm_keywords == frozenset({"bn_layer", "norm_cfg"})


def test_a_file_no_import_connects_vetoes_nothing() -> None:
    from pathlib import Path

    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen.source import Source

    files = {
        "blocks.py": "import torch.nn as nn\ndef make(c, norm_layer=nn.BatchNorm2d, **kw):\n    return nets(c, norm_layer=norm_layer)\n",
        "train.py": "import torch.nn as nn\nfrom blocks import make\na = make(4, norm_layer=nn.BatchNorm2d)\n",
        "other_repo.py": "import timm\nm = timm.create_model('r', norm_layer=BatchNormAct2d)\n",
    }
    project = Project([(Path(name), name, summarize(Source(text))) for name, text in files.items()])
    assert project.view(0).other_norm_keywords == frozenset()
    assert project.view(2).other_norm_keywords == frozenset({"norm_layer"})
