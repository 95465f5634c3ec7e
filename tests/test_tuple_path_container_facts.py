"""Three facts ML003 asks (issue 27, its misses on the sixteenth part): the positions of a file
class's tuple return whose element is fresh (analysis/fresh_forwards.py: Glow's `Actnorm`), an `if`
whose branch returns first is off the path to the next statement (analysis/exits.py), and the
container a Sequential no name holds lives in, with whether it only runs its elements whole
(analysis/sequential_homes.py)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.context import Context
from memlint.analysis.exits import leaves_first
from memlint.analysis.fresh_forwards import fresh_element_classes
from memlint.analysis.sequential_homes import runs_elements_whole, sequential_home
from memlint.analysis.walk import code_descendants
from memlint.pipeline.traversal import Traversal


def _context(code: str) -> Context:
    """A context whose imports the traversal has read (the facts resolve `nn.` names)."""
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)  # type: ignore[list-item]
    return ctx


_NORMS = """
import torch
from torch import nn
class Norm(nn.Module):
    def forward(self, x):
        if self.first:
            self.first = False
        y = (x - self.shift) / self.scale
        logdet = self.scale.log().sum() * x.shape[2]
        return y, logdet
class Kept(nn.Module):
    def forward(self, x):
        y = x / self.scale
        self.last = y
        return y, 1.0
class Mixed(nn.Module):
    def forward(self, x):
        if self.skip:
            return x, x * 2
        return x / 2, x * 2
class Named(nn.Module):
    def forward(self, x):
        y = x * 2
        return y, y.view(-1)
class Single(nn.Module):
    def forward(self, x):
        return x * 2
"""


def test_the_fresh_positions_of_a_tuple_every_return_builds():
    # `Kept` keeps `y`; `Mixed` returns the input at 0 on one path; `Named` returns a view of `y` beside it
    assert fresh_element_classes(_context(_NORMS)) == {"Norm": frozenset({0, 1}), "Mixed": frozenset({1})}


def _first_statement(code: str) -> cst.CSTNode:
    return cst.parse_module(textwrap.dedent(code)).body[0]


def test_an_if_whose_branch_returns_first_is_off_the_path():
    assert leaves_first(_first_statement("if raw:\n    y = out * 2\n    return y\n"), "out")
    assert leaves_first(_first_statement("if raw: raise ValueError(out)\n"), "out")
    assert not leaves_first(_first_statement("if out.any():\n    return out\n"), "out")  # the test reads it on every path
    assert not leaves_first(_first_statement("if raw:\n    return out\nelse:\n    pass\n"), "out")
    assert not leaves_first(_first_statement("if raw:\n    kept = out\n"), "out")
    assert not leaves_first(_first_statement("if raw:\n    if deep:\n        return out\n"), "out")
    assert not leaves_first(_first_statement("for i in x:\n    return out\n"), "out")


_HOMES = """
from torch import nn
class Net(nn.Module):
    def __init__(self, c, names):
        super().__init__()
        self.a = nn.ModuleList()
        for _ in names:
            self.a.append(nn.Sequential(nn.Linear(c, c), nn.ReLU()))
        self.b = nn.ModuleDict({n: nn.Sequential(nn.Linear(c, c), nn.ReLU()) for n in names})
        self.c = nn.ModuleList([nn.Sequential(nn.Linear(c, c), nn.ReLU()) for _ in names])
        self.d = nn.ModuleList([nn.Sequential(nn.Linear(c, c), nn.ReLU())])
        self.e = nn.Sequential(nn.Linear(c, c), nn.ReLU())
    def forward(self, x):
        ys = [self.a[i](x) for i in range(len(self.a))]
        for n in ["p", "q"]:
            head = self.b[n]
            ys.append(head(x))
        ys += [g(x) for g in self.c]
        for m in self.d:
            for layer in m:
                x = layer(x)
        return ys, x
"""


def test_the_container_a_sequential_lives_in_and_whether_it_runs_elements_whole():
    ctx = _context(_HOMES)
    homes = [sequential_home(ctx, n) for n in code_descendants(ctx.module) if type(n) is cst.Call and ctx.module.code_for_node(n.func) == "nn.Sequential"]
    assert homes == ["a", "b", "c", "d", None]
    assert [runs_elements_whole(ctx, h) for h in "abcd"] == [True, True, True, False]  # `for layer in m`: the layers of `d`'s element run one by one
    reused = _context(_HOMES.replace("[g(x) for g in self.c]", "[m(x) for m in self.c]"))
    assert not runs_elements_whole(reused, "c")  # `m` is also the name of `d`'s element, whose layers run apart


def test_a_part_of_an_element_run_apart_or_an_element_handed_on():
    parted = _context(_HOMES.replace("ys = [self.a[i](x)", "ys = [self.a[i][0](x)"))
    assert not runs_elements_whole(parted, "a")
    handed = _context(_HOMES.replace("ys.append(head(x))", "ys.append(probe(head, x))"))
    assert not runs_elements_whole(handed, "b")
    replaced = _context(_HOMES + "def swap(net):\n    net.a[0] = nn.Identity()\n")
    assert not runs_elements_whole(replaced, "a")
