"""returned_elements, asked directly and through the valuation: what each element of a known
callee's returned tuple takes its history from, and which definitions a call may run."""

from __future__ import annotations

import textwrap
from typing import Optional

import libcst as cst

from memlint.analysis.context import Context
from memlint.analysis.returned_elements import element_sources
from memlint.pipeline.traversal import Traversal


def _function(text: str) -> cst.FunctionDef:
    return cst.parse_module(textwrap.dedent(text)).body[0]  # type: ignore[return-value]


def test_element_sources() -> None:
    scaled = _function("""
        def f(self, x, y, norm):
            s = self.criterion(x, y) / norm
            return s.data * norm, s
    """)
    assert element_sources(scaled) == (frozenset({"norm"}), None)
    detached = _function("""
        def f(out, y):
            loss = crit(out, y)
            hits = (out.argmax(1) == y).sum().item()
            return loss, loss.detach(), hits / y.numel(), 2, -out.size(0)
    """)
    assert element_sources(detached) == (None, frozenset(), frozenset(), frozenset(), frozenset())
    branches = _function("""
        def f(out, y):
            if y is None:
                return crit(out), out.item()
            return out.detach(), crit(out)
    """)
    assert element_sources(branches) == (None, None)  # the branches disagree at each position
    handed = _function("def f(out, y):\n    return out, y.item()\n")
    assert element_sources(handed) == (frozenset({"out"}), frozenset())  # a parameter: its argument's history


def test_unknown_shapes_of_return() -> None:
    for text in (
        "def f(x):\n    return x\n",  # no tuple
        "def f(x):\n    if x:\n        return x, x\n    return x, x, x\n",  # two lengths
        "def f(x):\n    yield x\n    return x, x\n",  # a generator
        "def f(x):\n    return (*x,)\n",  # starred
    ):
        assert element_sources(_function(text)) is None, text
    rebound = _function("""
        def f(x, norm):
            norm = norm * x
            v, w = g(x)
            return x.data * norm, v.item(), w
    """)
    assert element_sources(rebound) == (None, frozenset(), None)  # `norm` rebound from `x`; `w` unpacked


def _graphs(text: str) -> dict[str, Optional[bool]]:
    text = textwrap.dedent(text)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: dict[str, Optional[bool]] = {}

    class Asker:
        def visit_Call(self, node: cst.Call) -> None:
            if type(node.func) is cst.Name and node.func.value == "probe":
                label = node.args[0].value.evaluated_value  # type: ignore[attr-defined]
                answers[label] = ctx.lookup_value(node.args[1].value.value).graph  # type: ignore[attr-defined]

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    return answers


_HANDED = """
import torch

class Compute:
    def __call__(self, x, y, norm):
        s = self.criterion(x, y) / norm
        return s.data * norm, s

def run(batches, model, compute, opt):
    for batch in batches:
        out = model(batch.x)
        value, node = compute(out, batch.y, batch.n)
        node.backward()
        probe("unknown argument", value)
        value, node = compute(out, batch.y, 4)
        node.backward()
        probe("number argument", value)
        probe("backpropagated", node)
"""


def test_an_instance_every_caller_hands() -> None:
    graphs = _graphs(_HANDED + "run(loader, net, Compute(), opt)\n")
    assert graphs["unknown argument"] is None  # no guess from `node.backward()`
    assert graphs["number argument"] is False
    assert graphs["backpropagated"] is True
    # another caller hands something else, or the function is read as a value: the guess stays
    for tail in ("run(loader, net, Compute(), opt)\nrun(loader, net, other, opt)\n", "run(loader, net, Compute(), opt)\nhooks = [run]\n"):
        assert _graphs(_HANDED + tail)["number argument"] is True, tail


_METHODS = """
import torch

class Base:
    def fit(self, loader, opt):
        for x, y in loader:
            loss, acc = self.step(x, y)
            loss.backward()
            probe("acc", acc)

    def step(self, x, y):
        raise NotImplementedError

class Classifier(Base):
    def step(self, x, y):
        out = self.model(x)
        return self.criterion(out, y), (out.argmax(1) == y).float().mean().item()
"""


def test_a_method_is_not_read() -> None:
    # `self.step(...)`: which definition runs depends on the instance's class (a mixin earlier in the
    # method order, an override in another file), which the file cannot show: the guess stays
    assert _graphs(_METHODS)["acc"] is True


def test_a_method_an_instance_may_replace() -> None:
    replaced = _METHODS.replace("    def step(self, x, y):\n        raise", "    def __init__(self, fn):\n        self.step = fn\n\n    def step(self, x, y):\n        raise")
    assert replaced != _METHODS
    assert _graphs(replaced)["acc"] is True  # `self.step = fn`: the call may run anything


def test_an_override_that_is_no_plain_method() -> None:
    assert _graphs(_METHODS + "class Odd(Classifier):\n    step = staticmethod(lambda x, y: (x, x))\n")["acc"] is True
    assert _graphs(_METHODS + "class Odd(Classifier):\n    @property\n    def step(self):\n        return print\n")["acc"] is True


def test_a_local_instance() -> None:
    graphs = _graphs(_HANDED.replace("def run(batches, model, compute, opt):\n", "def run(batches, model, opt):\n    compute = Compute()\n"))
    assert graphs["number argument"] is False


def test_a_local_changed_in_place_is_not_known() -> None:
    # found in review: `stats.mul_(loss)` / `stats[0] = loss` give the detached copy history again
    for change in ("stats.mul_(loss)", "stats[0] = loss", "stats.data = loss"):
        changed = _function(f"""
            def f(out, y):
                loss = crit(out, y)
                stats = loss.detach()
                {change}
                return loss, stats
        """)
        assert element_sources(changed) == (None, None), change
    kept = _function("def f(out, y):\n    loss = crit(out, y)\n    stats = loss.detach()\n    return loss, stats\n")
    assert element_sources(kept) == (None, frozenset())
