"""The loop-scope, function-role and device facts of the semantic model (memlint/analysis/roles.py,
model.py), with the evidence each rests on (issue 27)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis.model import SemanticModel
from memlint.analysis.naming import OPTIMIZER_NAME, OPTIMIZER_ONLY_NAME


def _model(code: str) -> tuple[SemanticModel, cst.Module]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    return SemanticModel(module, text), module


def _nodes(module: cst.Module, kind: type) -> list:
    found: list = []

    class Finder(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, kind):
                found.append(node)
            return True

    module.visit(Finder())
    return found


@pytest.mark.parametrize(
    "header, body, kind",
    [
        ("for i in range(10):", "z = generator(noise)", "fixed"),
        ("for i, name in enumerate(['a', 'b']):", "model(x)", "fixed"),
        ("for i in range(1000):", "loss = model(x); loss.backward()", "step"),
        ("for x, y in train_loader:", "pass", "step"),
        ("for i, batch in enumerate(tqdm(val_dl)):", "pass", "step"),
        ("for x in pairs:", "pass", "step"),  # `pairs = DataLoader(...)` below
        ("for epoch in range(epochs):", "model(x)", "epoch"),
        # full-batch training: an epoch loop whose own body steps is one step per iteration
        ("for epoch in range(epochs):", "loss = model(x); loss.backward(); optimizer.step()", "step"),
        ("for epoch in range(epochs):", "batch = sample_batch(train_loader); model(batch).backward()", "step"),
        # a scheduler named after its optimizer steps the learning rate, not the weights: per epoch
        ("for epoch in range(epochs):", "self.model_optimizer_scheduler.step(); model(x)", "epoch"),
        ("for epoch in range(epochs):", "opt_sched.step(); model(x)", "epoch"),
        ("for epoch in range(epochs):", "self.sched_optim.step(); model(x)", "step"),  # a wrapper named last as an optimizer
        ("for i in range(num_epochs):", "train_one_epoch(model, train_loader)", "epoch"),
        ("for i in range(args.epochs):", "log(i)", "epoch"),
        ("for name in files:", "print(name)", "unknown"),
        # a loop that sets the run's configuration per item: one whole run per item
        ("for opt.weights in opt.weights:", "model(x)", "run"),
        ("for self.args.seed in seeds:", "loss = model(x); loss.backward(); optimizer.step()", "run"),
        ("for weights in opt.weights:", "model(x)", "step"),  # a plain name: the step evidence decides
    ],
)
def test_loop_scope(header: str, body: str, kind: str) -> None:
    code = f"from torch.utils.data import DataLoader\npairs = DataLoader(ds)\n{header}\n    {body}\n"
    model, module = _model(code)
    loop = _nodes(module, cst.For)[0]
    scope = model.loop_scope(loop)
    assert scope.kind == kind, scope
    assert scope.evidence


def test_an_outer_loop_holding_a_loader_loop_is_per_epoch() -> None:
    model, module = _model(
        """
        for i in range(n):
            for x in train_loader:
                model(x)
        """
    )
    outer, inner = _nodes(module, cst.For)
    assert model.loop_scope(outer).kind == "epoch"
    assert model.loop_scope(inner).kind == "step"


def test_an_epoch_loop_that_steps_after_its_loader_loop_is_per_epoch() -> None:
    # the scheduler's or a whole-epoch optimizer step in the outer body: still once per pass
    model, module = _model(
        """
        for epoch in range(n):
            for x in train_loader:
                model(x).backward()
            scheduler.step()
            optimizer.step()
        """
    )
    outer, inner = _nodes(module, cst.For)
    assert model.loop_scope(outer).kind == "epoch"


def test_function_roles() -> None:
    model, module = _model(
        """
        import torch
        import matplotlib.pyplot as plt
        def train(model, x):
            model(x).sum().backward()
        def show(images):
            plt.imshow(images[0])
        @torch.no_grad()
        def evaluate(model, x):
            return model(x)
        def other(x):
            return x + 1
        def draws_with_its_own_plot(x):
            plot(x)
        """
    )
    roles = {f.name.value: model.function_role(f) for f in _nodes(module, cst.FunctionDef)}
    assert roles == {"train": "training", "show": "plotting", "evaluate": "evaluation", "other": None, "draws_with_its_own_plot": None}


@pytest.mark.parametrize(
    "code, explicit",
    [
        ("y = torch.ones(3).to(x.device)", False),
        ("y = torch.ones(3, device=x.device)", False),
        ("y = x.to('cpu')", False),
        ("y = x.cuda()", True),
        ("y = x.to(device)", True),
        ("y = x.to(args.device)", True),  # a configured device
        ("y = x.to(self.device)", True),
    ],
)
def test_device_named_or_followed(code: str, explicit: bool) -> None:
    model, _ = _model("import torch\n" + code + "\n")
    assert model.device.explicit is explicit


@pytest.mark.parametrize(
    "signature, loop, kind",
    [
        # a loop over a loader cut short by a counter at a parameter's small default: a fixed count
        ("def run(loader, num_examples=2):", "for batch in loader:\n        count += 1\n        model(batch)\n        if count == num_examples:\n            break", "fixed"),
        ("def run(loader):", "for i, batch in enumerate(loader):\n        model(batch)\n        if i >= 5:\n            break", "fixed"),
        # `enumerate`'s literal start is where its index begins (summaries' copy took any start, this one none)
        ("def run(loader):", "for i, batch in enumerate(loader, 1):\n        model(batch)\n        if i == 5:\n            break", "fixed"),
        ("def run(loader):", "for i, batch in enumerate(loader, start=1):\n        model(batch)\n        if i == 5:\n            break", "fixed"),
        ("def run(loader, first):", "for i, batch in enumerate(loader, first):\n        model(batch)\n        if i == 5:\n            break", "step"),
        ("def run(loader):", "for i, batch in enumerate(loader, 10):\n        model(batch)\n        if i == 5:\n            break", "step"),
        # the break is behind another condition, or the bound is not known: still per step
        ("def run(loader, n):", "for batch in loader:\n        count += 1\n        model(batch)\n        if count == n:\n            break", "step"),
        ("def run(loader):", "for batch in loader:\n        count += 1\n        model(batch)\n        if count == 100000:\n            break", "step"),
    ],
)
def test_a_loop_cut_short_by_a_counter(signature: str, loop: str, kind: str) -> None:
    model, module = _model(f"{signature}\n    count = 0\n    {loop}\n")
    scope = model.loop_scope(_nodes(module, cst.For)[0])
    assert scope.kind == kind, scope


def test_a_while_decoding_loop_is_per_step() -> None:
    code = "def decode(model, src):\n    while True:\n        out = model.decode(src)\n        if out is None:\n            break\n"
    model, module = _model(code)
    assert model.loop_scope(_nodes(module, cst.While)[0]).kind == "step"


@pytest.mark.parametrize(
    "call, fixed",
    [("enumerate(loader)", True), ("enumerate(loader, 1)", True), ("enumerate(loader, start=1)", True),
     ("enumerate(loader, first)", False), ("enumerate(loader, 10)", False)],
)
def test_the_project_pass_decides_a_counted_loop_as_the_analysis_does(call: str, fixed: bool) -> None:
    """summaries._counted_break (CPython's tree) and loop_bounds.counted_break (libcst's) read the same
    loop and hand it to one decision, memlint.analysis.counted_loops."""
    import ast

    from memlint.analysis.summaries import _counted_break

    code = f"def run(loader, first):\n    for i, batch in {call}:\n        model(batch)\n        if i == 5:\n            break\n"
    loop = next(n for n in ast.walk(ast.parse(code)) if type(n) is ast.For)
    assert _counted_break(loop, lambda node: None) is fixed
    model, module = _model(code)
    assert (model.loop_scope(_nodes(module, cst.For)[0]).kind == "fixed") is fixed


@pytest.mark.parametrize(
    "header, passes",
    [
        ("for i, batch in enumerate(iterator):", True),  # a generic iterator the loop takes batches from
        ("for batch in tqdm(data_iter):", True),
        ("for motions, kwargs in tqdm(dataiterator, desc='gen'):", True),  # named like a data iterator
        ("for item in iterator:", False),  # a bare iterator may walk anything
        ("for i, batch in enumerate(chunks):", False),
        ("for batch in self.iterator_fn():", False),  # not an iterator held by a name
    ],
)
def test_passes_over_data_through_iterators(header: str, passes: bool) -> None:
    from memlint.analysis.iteration import iterates_batches

    module = cst.parse_module(f"{header}\n    pass\n")
    assert iterates_batches(module.body[0]) is passes  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "name, steps_weights",
    [
        ("optimizer", True),
        ("optimizerD", True),
        ("d_optim", True),
        ("custom_lr_optimizer", True),
        ("scheduled_optim", True),
        ("model_optimizer_scheduler", False),  # the last word says what it is: a scheduler
        ("opt_sched", False),
        ("optimizerScheduler", False),
        ("optim_schedulers", False),
    ],
)
def test_optimizer_names_exclude_schedulers(name: str, steps_weights: bool) -> None:
    assert bool(OPTIMIZER_NAME.search(name)) is steps_weights
    assert bool(OPTIMIZER_ONLY_NAME.search(name)) is steps_weights


def test_the_project_pass_takes_no_loop_over_runs_for_a_step_loop() -> None:
    """summaries' loop fact ends in "runs" for `for opt.weights in ...` (run_loops.py), and the
    project's per-step fact does not go through it, however much the callee runs a model."""
    from pathlib import Path

    from memlint.analysis.summaries import summarize
    from memlint.pipeline.project import Project
    from memlint.prescreen.source import Source

    run = "import torch\ndef run(weights, device, load):\n    model = load(weights)\n    return model(torch.zeros(1, 3).to(device))\n"
    by_runs = run + "def main(opt):\n    for opt.weights in opt.weights:\n        run(opt.weights, opt.device, opt.load)\n"
    by_items = run + "def sweep(opt, weights):\n    for w in weights:\n        run(w, opt.device, opt.load)\n"
    summary = summarize(Source(by_runs))
    assert [site[2][3:] for site in summary["functions"]["main"]["calls"] if site[2] is not None] == [["runs"]]
    for code, per_step in ((by_runs, False), (by_items, True)):  # a plain loop is a step loop by what its callee runs
        view = Project([(Path("m.py"), "m.py", summarize(Source(code)))]).view(0)
        assert (view.per_step_of(("func", "run")) is not None) is per_step


@pytest.mark.parametrize(
    "code, kind",
    [
        # a walk over a dataset's items that runs the model on each one: one sample per iteration
        ("def val(model, dataset):\n    for idx in range(len(dataset)):\n        val_data = dataset[idx]\n        model(val_data)\n", "step"),
        # through a method of the class whose own body runs the network (the item is named like a loader)
        ("class M:\n    def test(self):\n        self.net_g.eval()\n        self.output = self.net_g(self.lq)\n"
         "    def val(self, dataset, rank, world):\n        for idx in range(rank, len(dataset), world):\n"
         "            val_data = dataset[idx]\n            self.feed_data(val_data)\n            self.test()\n", "step"),
        # through another file's method: the project pass's model runners, as written here
        ("class M(Base):\n    def val(self):\n        for i in tqdm(range(len(self.val_set))):\n            self.feed(self.val_set[i])\n            self.test()\n", "step"),
        # no model run: preprocessing
        ("def cache(dataset):\n    for idx in range(len(dataset)):\n        save(dataset[idx])\n", "unknown"),
        # the dataset's length without reading its items, and a count of layers
        ("class M:\n    def test(self):\n        self.out = self.net_g(self.lq)\n    def val(self, dataset):\n        for idx in range(len(dataset)):\n            self.test()\n", "unknown"),
        ("class M:\n    def run(self, x):\n        for i in range(len(self.blocks)):\n            x = self.blocks[i](x)\n            self.step_once()\n", "unknown"),
        # a method whose model run is in a loop of its own: a pass per call, not one run
        ("class M:\n    def test(self):\n        for x in xs:\n            self.net_g(x)\n"
         "    def val(self, dataset):\n        for idx in range(len(dataset)):\n            self.feed(dataset[idx])\n            self.test()\n", "unknown"),
        # a helper whose call is only named like a model (a tokenizer), or builds one: no evidence of a run
        ("class M:\n    def tok(self, t):\n        return self.encoder(t)\n"
         "    def val(self, dataset):\n        for idx in range(len(dataset)):\n            self.tok(dataset[idx])\n", "unknown"),
        ("class M:\n    def fresh(self):\n        self.backbone = torchvision.models.resnet50()\n"
         "    def val(self, dataset):\n        for idx in range(len(dataset)):\n            c = dataset[idx]\n            self.fresh()\n", "unknown"),
        # a module function that runs a model, its name rebound by a later import: the call reaches the import
        ("def ev(model, x):\n    model.eval()\n    return model(x)\nfrom utils import summarize as ev\n"
         "def walk(dataset):\n    for idx in range(len(dataset)):\n        ev(dataset[idx])\n", "unknown"),
        # a task loop that builds a loader and hands it to an inner training pass: a pass per item
        ("def meta(model, meta_dataset, inner):\n    for idx in range(len(meta_dataset)):\n        task = meta_dataset[idx]\n"
         "        support_loader = DataLoader(task.support)\n        inner(model, support_loader)\n        model(task.x)\n", "epoch"),
    ],
)
def test_a_walk_over_a_dataset_that_runs_a_model_per_item(code: str, kind: str) -> None:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    model = SemanticModel(module, text, model_runner_calls=frozenset({"M.test"}) if "Base" in code else frozenset())
    loops = _nodes(module, cst.For)
    scope = model.loop_scope(loops[-1] if "for x in xs" not in code else loops[1])
    assert scope.kind == kind, scope


def test_a_walk_asks_once_whether_a_method_runs_a_model(monkeypatch) -> None:
    """Many walk loops calling the same method many times look at that method once (the cost of a
    file grows with its loops, not with loops times calls times the method's size)."""
    from memlint.analysis import model as model_module

    walked: list[str] = []
    real = model_module.function_runs_model

    def counting(function, holds_module):
        walked.append(function.name.value)
        return real(function, holds_module)

    monkeypatch.setattr(model_module, "function_runs_model", counting)
    loops = "".join(
        f"    def val{n}(self, dataset):\n        for idx in range(len(dataset)):\n            item = dataset[idx]\n"
        + "            self.test()\n" * 5
        for n in range(6)
    )
    text = "class M:\n    def test(self):\n        self.prep(self.x)\n" + loops
    module = cst.parse_module(text)
    model = SemanticModel(module, text)
    for loop in _nodes(module, cst.For):
        assert model.loop_scope(loop).kind == "unknown"
    assert walked == ["test"]
