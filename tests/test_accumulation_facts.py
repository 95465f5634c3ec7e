"""The accumulation facts of the semantic model (memlint/analysis/accumulation.py, loop_work.py, and
roles.per_batch_function), asked directly: the shapes that keep a value, the accumulator's life, a
loop's work with its values and the functions run once per batch (issue 27: ML001 and ML014 ask
these instead of deriving them)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis import accumulation, loop_work, roles
from memlint.analysis.context import Context
from memlint.pipeline.traversal import Traversal


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _code(nodes: list) -> list[str]:
    return [cst.Module([]).code_for_node(n) for n in nodes]


@pytest.mark.parametrize(
    "target, value, others",
    [
        ("total", "total + loss", ["loss"]),
        ("total", "loss + total", ["loss"]),
        ("s", "0.98 * s + 0.02 * loss", ["0.02 * loss"]),
        ("s", "s * momentum + (1 - momentum) * loss", ["(1 - momentum) * loss"]),
        ("total", "total - loss - reg", ["loss", "reg"]),
        ("x", "x + f(x)", ["f(x)"]),
        ("x", "x * 2 + x", []),  # the target twice: no running sum
        ("s", "s / s + loss", []),  # scaled by itself
        ("total", "a + b", []),  # the target is not a term
        ("total", "total * loss", []),  # not a sum
    ],
)
def test_running_sum_terms(target: str, value: str, others: list[str]) -> None:
    assert _code(accumulation.running_sum_terms(_expr(value), _expr(target))) == others


def test_kept_values_of_displays_one_level_deep() -> None:
    assert _code(accumulation.kept_values(_expr('{"preds": [p], "loss": l, **rest}'))) == ["p", "l", "rest"]
    assert _code(accumulation.kept_values(_expr("(loss, *extra)"))) == ["loss"]
    assert _code(accumulation.kept_values(_expr("model(x)"))) == ["model(x)"]


def test_accumulator_names() -> None:
    assert accumulation.base_name(_expr('stats["loss"]')) == "stats"
    assert accumulation.base_name(_expr("self.losses")) is None
    assert accumulation.self_attribute(_expr('self.stats["loss"][0]')) == "stats"
    assert accumulation.self_attribute(_expr("trainer.history")) is None
    assert _code([accumulation.holder(_expr('out["logits"][i]'))]) == ["out"]


@pytest.mark.parametrize(
    "code, source",
    [
        ("[criterion(model(x), y) for x, y in val_loader]", "val_loader"),
        ("(model(x) for i, (x, _) in enumerate(tqdm(test_dataloader)))", "test_dataloader"),
        ("[f(a) for a in rows for b in a]", None),
    ],
)
def test_comprehension_batch_source(code: str, source) -> None:
    assert accumulation.comprehension_batch_source(_expr(code)) == source


def _loop(code: str) -> cst.For:
    module = cst.parse_module(textwrap.dedent(code))
    return next(s for s in module.body if isinstance(s, cst.For))


@pytest.mark.parametrize(
    "body, reset",
    [
        ("total += loss\ntotal = 0", True),  # emptied every iteration
        ("losses.append(loss)\nlosses.clear()", True),
        ("total += loss\nif (i + 1) % accum == 0:\n    optimizer.step()\n    total = 0", True),  # a window
        ("total += loss\nif i % 100 == 0:\n    print(total)\n    total = 0", False),  # a logging period
        ("total = total + loss", False),  # the sum itself is no reset
        ("total += loss\nfor t in range(3):\n    total = 0", False),  # in a nested loop
    ],
)
def test_reset_per_window(body: str, reset: bool) -> None:
    loop = _loop("for i, (x, y) in enumerate(loader):\n" + textwrap.indent(body, "    ") + "\n")
    assert accumulation.reset_per_window(loop, "total" if "total" in body else "losses") is reset


class _Asker:
    """Asks the facts that need the traversal's point at every `+=` and `.append(...)`."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.answers: list[tuple] = []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        ctx = self.ctx
        per_batch = roles.per_batch_function(ctx)
        loop = ctx.loop
        self.answers.append((
            ctx.module.code_for_node(node.target),
            accumulation.started_as_statistic(node.target, ctx),
            per_batch and (per_batch.name, per_batch.kind),
            loop is not None and loop_work.trains_kept_values(loop, [node.value], ctx),
        ))  # fmt: skip

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "append":
            per_batch = roles.per_batch_function(self.ctx)
            self.answers.append((self.ctx.module.code_for_node(node.func.value), per_batch and (per_batch.name, per_batch.kind)))


def _ask(code: str) -> list[tuple]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    asker = _Asker(ctx)
    Traversal(ctx, [asker]).walk(module)  # type: ignore[list-item]
    return asker.answers


def test_the_accumulators_start_and_the_loops_work() -> None:
    answers = _ask(
        """
        import torch
        total = 0.0
        latents = torch.randn(4, 3)
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            total += loss
            latents += model(latents)
        evaluated = torch.tensor(0.0)
        for x, y in val_loader:
            evaluated += criterion(model(x), y)
        """
    )
    assert answers == [
        ("total", True, None, True),  # a number, in a loop that backpropagates the kept value
        ("latents", False, None, True),  # a tensor updated in a loop: a computation
        ("evaluated", True, None, False),  # a number-like tensor, in a loop without backward
    ]


def test_functions_run_once_per_batch() -> None:
    answers = _ask(
        """
        import lightning as L
        from transformers import Trainer
        class Net(L.LightningModule):
            def training_step(self, batch, i):
                self.losses.append(self(batch))
            def validation_step(self, batch, i):
                self.outputs.append(self(batch))
            def helper(self):
                self.seen.append(1)
        class MyTrainer(Trainer):
            def compute_loss(self, model, inputs):
                self.history.append(model(**inputs))
        def compute_loss(model, inputs):
            history.append(model(**inputs))
        """
    )
    assert answers == [
        ("self.losses", ("training_step", "training")),
        ("self.outputs", ("validation_step", "evaluation")),
        ("self.seen", None),
        ("self.history", ("compute_loss", "training")),
        ("history", None),  # not a method of a Trainer's subclass
    ]


def test_a_recurrence_unrolled_without_backward() -> None:
    text = textwrap.dedent(
        """
        def run(model, xs, h):
            outs = []
            for t in range(T):
                h = model(xs[t], h)
                outs.append(h)
            return outs
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    found: list[bool] = []

    class Asker:
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute) and node.func.attr.value == "append":
                found.append(loop_work.unrolls_a_recurrence(ctx.loop, ctx, "outs"))  # type: ignore[arg-type]

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    assert found == [True]  # `h`, a parameter, fed back through a model call (history)


class _CombinationAsker:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.answers: list[tuple] = []

    def visit_Assign(self, node: cst.Assign) -> None:
        ctx, target = self.ctx, node.targets[0].target
        parts = accumulation.added_parts(node.value, target, ctx)
        if parts:
            extremum = accumulation.running_extremum(node.value, ctx)
            started = accumulation.started_as_statistic(target, ctx, True, False, extremum)
            self.answers.append((ctx.module.code_for_node(target), _code(parts), extremum, started))


def test_running_extrema_combine_like_sums() -> None:
    text = textwrap.dedent(
        """
        import torch
        worst = torch.zeros(8)
        total = torch.zeros(8)
        best = torch.full((8,), 9.0)
        for _ in range(restarts):
            loss = criterion(model(x), y)
            worst = torch.max(worst, loss)
            total = torch.add(total, loss)
            best = best.minimum(loss)
            peak = torch.max(loss, 1)
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    asker = _CombinationAsker(ctx)
    Traversal(ctx, [asker]).walk(module)  # type: ignore[list-item]
    assert asker.answers == [
        ("worst", ["loss"], True, True),  # a per-sample running maximum: a statistic
        ("total", ["loss"], False, False),  # a sum started from a per-sample tensor: a computation
        ("best", ["loss"], True, True),
    ]  # (`torch.max(loss, 1)` reduces `loss`, no running value)


class _WindowAsker:
    """At every `+=`: whether optimizer steps run between two bindings of its target."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.answers: list[bool] = []

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.answers.append(accumulation.steps_between_bindings(self.ctx, self.ctx.module.code_for_node(node.target)))


@pytest.mark.parametrize(
    "inner, steps",
    [
        ("loss.backward()\noptim_d.step()", True),  # every inner turn frees its own graph and steps
        ("loss.backward()", False),  # one optimizer step per window (after the inner loop), or none
        ("optim_d.step()", False),  # no backward in the inner loop
        ("loss.backward()\nif t % 2 == 0:\n    optim_d.step()", False),  # a step behind a condition
        ("pass", False),
    ],
)
def test_steps_between_bindings(inner: str, steps: bool) -> None:
    text = textwrap.dedent(
        """
        for x, y in loader:
            total = 0.0
            for t in range(reps):
                loss = criterion(disc(x), y)
                {inner}
                total += loss
        """
    ).format(inner=inner.replace("\n", "\n" + " " * 8))
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    asker = _WindowAsker(ctx)
    Traversal(ctx, [asker]).walk(module)  # type: ignore[list-item]
    assert asker.answers == [steps]


def test_each_loop_is_searched_for_an_every_turn_step_once(monkeypatch) -> None:
    """`steps_between_bindings` asks every `+=` about the loops inside its binding: each loop's body is
    walked once per file (Context.memo), not once per accumulation (40 sums, one walk)."""
    walked: list[cst.CSTNode] = []
    original = accumulation._steps_every_turn

    def counting(loop: cst.CSTNode) -> bool:
        walked.append(loop)
        return original(loop)

    monkeypatch.setattr(accumulation, "_steps_every_turn", counting)
    sums = "\n".join(f"        total_{i} += loss" for i in range(40))
    starts = "\n".join(f"    total_{i} = 0.0" for i in range(40))
    text = (
        "for x, y in loader:\n" + starts + "\n    for t in range(reps):\n        loss = criterion(disc(x), y)\n"
        "        loss.backward()\n        optim_d.step()\n" + sums + "\n"
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    asker = _WindowAsker(ctx)
    Traversal(ctx, [asker]).walk(module)  # type: ignore[list-item]
    assert asker.answers == [True] * 40
    assert len(walked) == 1
