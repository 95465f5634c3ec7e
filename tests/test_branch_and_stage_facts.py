"""Facts of issue 27's twenty-first part: a binding under a test reaches a use under the same test
(analysis/stable_tests.py, analysis/reaching.py), and a stage of blocks a helper method fills
(analysis/helper_sequentials.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.context import Context
from memlint.analysis.helper_sequentials import helper_sequential_elements
from memlint.analysis.reaching import reaching_binding
from memlint.analysis.stable_tests import stable_test, condition_key
from memlint.analysis.walk import code_descendants
from memlint.pipeline.traversal import Traversal


def _context(code: str) -> Context:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # type: ignore[list-item]
    return ctx


def _function(ctx: Context, name: str) -> cst.FunctionDef:
    return next(n for n in code_descendants(ctx.module) if type(n) is cst.FunctionDef and n.name.value == name)  # type: ignore[return-value]


_HEAD = """
import torch.nn.functional as F
from torch import nn
class Head(nn.Module):
    def __init__(self, embed, norm):
        super().__init__()
        self.embed = embed
        self.norm = norm
        self.fc = nn.Linear(4, 4)
    def forward(self, x, flag=False):
        x = x.flatten(1)
        if self.embed:
            x = self.fc(x)
            n = x.shape[0]
        if self.norm:
            x = F.normalize(x)
        elif self.embed:
            y = F.relu(x)
        return x
"""


def _reaching(code: str):
    ctx = _context(code)
    forward = _function(ctx, "forward")
    use = next(n for n in code_descendants(forward) if type(n) is cst.SimpleStatementLine and "relu" in ctx.module.code_for_node(n))
    return ctx, reaching_binding(forward, use, "x", ctx)


def test_a_binding_under_the_same_constructor_flag_reaches_a_use_in_an_elif():
    ctx, found = _reaching(_HEAD)
    assert found is not None and ctx.module.code_for_node(found.value) == "self.fc(x)"


def test_no_binding_reaches_where_the_flag_may_change_or_the_tests_differ():
    # set outside the constructor: the flag may differ between the two tests
    assert _reaching(_HEAD + "def strip(model):\n    model.embed = False\n")[1] is None
    # another test: the branch that binds need not have run
    assert _reaching(_HEAD.replace("elif self.embed:", "elif self.other:"))[1] is None
    # an `else` of the flag: the binding branch did not run
    assert _reaching(_HEAD.replace("elif self.embed:", "else:"))[1] is None
    # the branch keeps the value after binding it
    assert _reaching(_HEAD.replace("n = x.shape[0]", "self.kept = x"))[1] is None


def test_a_parameter_is_a_stable_test_until_the_function_rebinds_it():
    ctx = _context(_HEAD)
    forward = _function(ctx, "forward")
    assert stable_test(("name", "flag"), forward, ctx)
    assert not stable_test(("name", "x"), forward, ctx)  # rebound by the body
    assert not stable_test(("name", "other"), forward, ctx)  # no parameter: a global may change
    assert stable_test(("self", "embed"), forward, ctx)
    assert condition_key(cst.parse_expression("self.embed")) == ("self", "embed")
    assert condition_key(cst.parse_expression("not self.embed")) is None
    rebinding = _context(_HEAD + "def strip(model):\n    setattr(model, name, False)\n")
    assert not stable_test(("self", "embed"), _function(rebinding, "forward"), rebinding)


_STAGE = """
from torch import nn
class Block(nn.Module):
    def forward(self, x):
        return x + 1
class Net(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.stage = self._stage(n)
        self.other = self._plain(n)
    def forward(self, x):
        return self.stage(x)
    def _stage(self, n):
        layers = []
        for _ in range(n):
            layers.append(Block())
        return nn.Sequential(*layers)
    def _plain(self, n):
        layers = []
        for _ in range(n):
            layers.append(nn.Linear(n, n))
            layers.append(nn.ReLU())
        return nn.Sequential(*layers)
"""


def _stages(code: str) -> dict:
    ctx = _context(code)
    node = next(s for s in ctx.module.body if type(s) is cst.ClassDef and s.name.value == "Net")
    return helper_sequential_elements(ctx, node)  # type: ignore[arg-type]


def test_a_helper_method_filling_a_sequential_with_blocks_names_their_classes():
    assert _stages(_STAGE) == {"stage": frozenset({"local:Block"}), "other": frozenset({"Linear", "ReLU"})}


def test_a_helper_whose_list_or_name_goes_elsewhere_is_not_read():
    assert "stage" not in _stages(_STAGE.replace("layers.append(Block())", "layers.append(Block())\n            keep(layers)"))
    assert "stage" not in _stages(_STAGE.replace("layers.append(Block())", "layers.insert(0, Block())"))
    assert "stage" not in _stages(_STAGE.replace("def _stage(self, n):", "def _stage(self, n, Block=None):"))
    assert "stage" not in _stages(_STAGE + "def rebuild(net):\n    return net._stage(2)\n")
    assert "stage" not in _stages(_STAGE.replace("return self.stage(x)", "return self._stage(1)(x)"))
