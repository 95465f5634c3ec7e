"""Models run in a helper's own loop (`analysis/looped_models.py`), which calls run a module
(`analysis/module_runs.py`) and calls of an optimizer closure (`closures.calls_optimizer_closure`)."""

from __future__ import annotations

import textwrap

import libcst as cst

from memlint.analysis.closures import calls_optimizer_closure
from memlint.analysis.context import Context
from memlint.analysis.looped_models import LOOPED_MODEL, LoopedModels, helper_work, work_at_site
from memlint.analysis.module_runs import run_receivers, runs_module, runs_own_method
from memlint.pipeline.traversal import Traversal


class _Asker:
    """Fills an evidence table as a rule would: backward, an optimizer's step, a module run."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.evidence: dict = {}
        self.def_evidence: dict = {}
        self.looped = LoopedModels()
        self.runs: list[str] = []
        self.own_methods: list[str] = []
        self.closure_calls: list[str] = []

    def _note(self, kind: str) -> None:
        ctx = self.ctx
        for loop in ctx.loops:
            self.evidence.setdefault(id(loop), set()).add(kind)
        if not ctx.loops and ctx.function_key is not None:
            self.evidence.setdefault(ctx.function_key, set()).add(kind)

    def visit_Call(self, node: cst.Call) -> None:
        ctx = self.ctx
        code = ctx.module.code_for_node(node.func)
        if runs_own_method(node, ctx):
            self.own_methods.append(code)
        if calls_optimizer_closure(node, ctx):
            self.closure_calls.append(code)
        if runs_module(node, ctx):
            self.runs.append(code)
            self._note("model")
            if ctx.loops and ctx.function_key is not None:
                self.looped.note(ctx, for_closure=True)
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in ("backward", "step"):
            self._note(node.func.attr.value)


def _ask(code: str) -> tuple[_Asker, object]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    asker = _Asker(ctx)
    Traversal(ctx, [asker]).walk(module)  # type: ignore[list-item]
    facts = ctx.facts()
    asker.looped.settle(asker.evidence, asker.def_evidence, facts)
    return asker, facts


_META = """
import torch
def outer_loss(model, tasks):
    loss = 0
    for task in tasks:
        loss = loss + model(task).mean()
    return loss
def train(model, opt, loader):
    for batch in loader:
        loss = outer_loss(model, batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
def embed(model, loader):
    with torch.no_grad():
        return outer_loss(model, loader)
"""


def test_a_model_run_in_a_helpers_own_loop_is_the_helpers_work() -> None:
    asker, facts = _ask(_META)
    assert LOOPED_MODEL in asker.evidence[("func", "outer_loss")]
    work = helper_work(asker.evidence, facts)
    sites = {site.callers[-1]: site for site in facts.call_sites[("func", "outer_loss")]}  # type: ignore[attr-defined]
    # a loop that calls it with gradients on runs a model; under no_grad nothing
    assert work_at_site(work[("func", "outer_loss")], sites[("func", "train")]) == {"model"}
    assert work_at_site(work[("func", "outer_loss")], sites[("func", "embed")]) == set()
    # a calling function keeps the looped run as it is, for the loops that call it
    assert work[("func", "embed")] == set()


def test_a_loop_that_trains_keeps_its_model_run() -> None:
    asker, _ = _ask(
        """
        def fit(model, opt, loader):
            for x in loader:
                loss = model(x).mean()
                loss.backward()
                opt.step()
        """
    )
    assert ("func", "fit") not in asker.evidence  # a training loop of its own: no helper's work


def test_a_loop_that_reaches_a_step_through_a_helper_keeps_its_model_run() -> None:
    asker, _ = _ask(
        """
        def update(loss, opt):
            loss.backward()
            opt.step()
        def fit(model, opt, tasks):
            for task in tasks:
                update(model(task).mean(), opt)
        """
    )
    assert LOOPED_MODEL not in asker.evidence.get(("func", "fit"), set())


def test_calls_that_run_a_module() -> None:
    asker, _ = _ask(
        """
        import torch.nn as nn
        class Agent(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Linear(4, 2)
            def scale(self, x):
                return x * 2
            def act(self, x):
                return self.scale(self.net(x))
        agent = Agent()
        agent.get_value(obs)
        agent.parameters()
        agent.to("cuda")
        """
    )
    # a module's own method runs it too; `self.scale(...)` is one of the class (it may fit a scalar)
    assert asker.runs == ["self.scale", "self.net", "agent.get_value"]
    assert asker.own_methods == ["self.scale"]


def test_the_names_a_call_may_run_a_module_through() -> None:
    def receivers(code: str) -> list[str]:
        return run_receivers(cst.parse_expression(code).func)  # type: ignore[attr-defined]

    assert receivers("G(z)") == ["G"]
    assert receivers("self.G(z)") == ["self.G", "self"]
    assert receivers("policy.act(s)") == ["policy.act", "policy"]
    assert receivers("policy.parameters()") == []
    assert receivers("make()(x)") == []


def test_a_call_of_an_optimizer_closure_in_a_loop() -> None:
    asker, _ = _ask(
        """
        def fit(optimizer, closure, steps):
            for _ in range(steps):
                optimizer.zero_grad()
                closure()
                optimizer.step(closure)
        def other(closure, steps):
            for _ in range(steps):
                closure()
        """
    )
    assert asker.closure_calls == ["closure"]
