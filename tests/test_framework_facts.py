"""Framework and precision facts of the semantic model, asked directly: what torchnet's Engine runs
(memlint/analysis/frameworks.py), which calls are evidence of mixed precision
(precision_api.mixed_precision_call) and which loop targets are parts of a model output
(outputs.output_elements). ML002, ML014, ML015 and ML017 ask these."""

from __future__ import annotations

import textwrap
from typing import Callable

import libcst as cst

from memlint.analysis import frameworks, handed_contexts, outputs, precision_api
from memlint.analysis.context import Context
from memlint.pipeline.traversal import Traversal


def _ask_calls(code: str, question: Callable[[cst.Call, Context], object]) -> list[tuple[str, object]]:
    """(the call's code, the answer) for every call of `code`, asked where the traversal is."""
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: list[tuple[str, object]] = []

    class Asker:
        def visit_Call(self, node: cst.Call) -> None:
            answers.append((module.code_for_node(node.func), question(node, ctx)))

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    return answers


def _engine_runs(code: str) -> list[tuple[str, object]]:
    """(the call's code, (what it runs, the network, whether its test builds a graph)) for every
    call the facts take for a torchnet Engine's `train` / `test`."""

    def question(call: cst.Call, ctx: Context):
        run = frameworks.torchnet_engine_run(call, ctx)
        if run is None:
            return None
        return run[0], ctx.module.code_for_node(run[1]), frameworks.torchnet_test_builds_graph(call, ctx)

    return [(func, answer) for func, answer in _ask_calls(code, question) if answer is not None]


def test_torchnet_engine_train_and_test_from_an_enclosing_scope() -> None:
    runs = _engine_runs(
        """
        import torch
        from torchnet.engine import Engine
        def main(model, optimizer, train_loader, test_loader):
            def step(sample):
                y = model(sample[0])
                return criterion(y, sample[1]), y
            def only_tested(sample):
                return criterion(model(sample[0]), sample[1]), None
            def on_end_epoch(state):
                engine.test(step, test_loader)
                engine.test(only_tested, test_loader)
            engine = Engine()
            engine.train(step, train_loader, 10, optimizer)
        """
    )
    # the hook reads `main`'s engine (bound after it); the network the file trains builds a graph
    # in the test, one it never trains is not known to
    assert runs == [
        ("engine.test", ("test", "step", True)),
        ("engine.test", ("test", "only_tested", False)),
        ("engine.train", ("train", "step", True)),
    ]


def _ignite_steps(code: str) -> list[tuple[str, str]]:
    """(the call's code, the process function's name) for every `run` the facts take for an ignite
    Engine's loop over batches."""

    def question(call: cst.Call, ctx: Context):
        run = frameworks.ignite_engine_run(call, ctx)
        return None if run is None else run[0].name.value

    return [(func, answer) for func, answer in _ask_calls(code, question) if answer is not None]


def test_ignite_engine_run_calls_the_process_function_per_batch() -> None:
    steps = _ignite_steps(
        """
        import subprocess
        from ignite.engine import Engine
        def step(engine, batch):
            return batch
        def make_trainer(model):
            def update(engine, batch):
                return model(batch)
            return Engine(update)
        def make_evaluator(model):
            def infer(engine, batch):
                return model(batch)
            engine = Engine(infer)
            return engine
        def make_either(model, train):
            def update(engine, batch):
                return model(batch)
            if train:
                return Engine(update)
            return Engine(step)
        def main(model, loader, handed):
            trainer = make_trainer(model)
            evaluator = make_evaluator(model)
            either = make_either(model, True)
            inline = Engine(step)
            trainer.run(loader, max_epochs=3)
            evaluator.run(loader)
            either.run(loader)
            inline.run(loader)
            Engine(step).run(loader)
            handed.run(loader)
            subprocess.run(["ls"])
        """
    )
    # a factory's every return must hand over one process function; an engine handed in is not read
    assert steps == [
        ("trainer.run", "update"),
        ("evaluator.run", "infer"),
        ("inline.run", "step"),
        ("Engine(step).run", "step"),
    ]


def test_ignite_engines_rebound_unseen_or_built_by_coroutines_are_not_read() -> None:
    steps = _ignite_steps(
        """
        from ignite.engine import Engine
        def learn(engine, batch):
            return batch
        def score(engine, batch):
            return batch
        runner = Engine(learn)
        def switch():
            global runner
            runner = Engine(score)
        async def build():
            return Engine(learn)
        def main(loader):
            runner.run(loader)
            later = build()
            later.run(loader)
            once = Engine(learn)
            once.run(loader)
        """
    )
    # `global runner` lets `switch` rebind the module's engine; an async factory returns a coroutine
    assert steps == [("once.run", "learn")]


def test_ignite_runs_of_one_engine_share_its_construction() -> None:
    text = textwrap.dedent(
        """
        from ignite.engine import Engine
        def learn(engine, batch):
            return batch
        def make():
            return Engine(learn)
        first = make()
        second = make()
        first.run(a)
        first.run(b)
        second.run(c)
        """
    )
    built = [run[1] for _, run in _ask_calls(text, frameworks.ignite_engine_run) if run is not None]
    # one construction per engine: `first`'s two runs are one loop, `second` is another engine
    assert len(built) == 3 and built[0] is built[1] and built[1] is not built[2]


def _trains(code: str) -> bool:
    function = cst.parse_module(textwrap.dedent(code)).body[0]
    assert type(function) is cst.FunctionDef
    return frameworks.trains_unconditionally(function)


def test_a_step_trains_unconditionally_only_with_backward_and_step_on_every_call() -> None:
    assert _trains(
        """
        def update(engine, batch):
            opt.zero_grad()
            with amp_context():
                loss = net(batch).sum()
            loss.backward()
            opt.step()
            return loss.item()
        """
    )
    for conditional in (
        # backward and step under `if optimizer is not None:` / a training flag
        "def step(e, b):\n    loss = net(b)\n    if opt is not None:\n        loss.backward()\n        opt.step()\n",
        # an early return for evaluation before them
        "def step(e, b):\n    if not training:\n        return net(b)\n    net(b).sum().backward()\n    opt.step()\n",
        # only a scheduler steps unconditionally
        "def step(e, b):\n    net(b).sum().backward()\n    scheduler.step()\n",
        # stepping inside a loop that may not run
        "def step(e, b):\n    net(b).sum().backward()\n    for o in opts:\n        o.step()\n",
    ):
        assert not _trains(conditional), conditional


def test_ignite_runs_cost_one_scope_walk_per_scope(monkeypatch) -> None:
    walks: list[object] = []
    real = frameworks._bindings

    def counted(scope):
        walks.append(scope)
        return real(scope)

    monkeypatch.setattr(frameworks, "_bindings", counted)
    calls = "\n".join(f"    subprocess.run(cmd{i})\n    t{i}.run(cmd)" for i in range(200))
    code = f"import subprocess\nfrom ignite.engine import Engine\ndef main():\n{calls}\n"
    assert _ignite_steps(code) == []
    # each scope's bindings are read once for the file, not once per `run` call
    assert len(walks) == len({id(scope) for scope in walks}) <= 2


def test_other_engines_are_not_ignite() -> None:
    steps = _ignite_steps(
        """
        from ignite.metrics import Accuracy
        from mylib import Engine
        def step(engine, batch):
            return batch
        def main(loader):
            engine = Engine(step)
            engine.run(loader)
        """
    )
    # the file imports ignite, but this `Engine` is another library's
    assert steps == []


def test_other_engines_are_not_torchnet() -> None:
    runs = _engine_runs(
        """
        from protonets.engine import Engine
        import torchnet as tnt
        def main(model, optimizer, loader, make_engine):
            def step(sample):
                return criterion(model(sample[0]), sample[1]), None
            engine = Engine()
            engine.train(step, loader, 10, optimizer)
            other = make_engine()
            other.train(step, loader, 10, optimizer)
            model.train(False)
            tnt.engine.Engine().test(step, loader)
        """
    )
    # only the last is torchnet's: protonets' Engine, a factory's result and a module's `.train` are
    # not (and `step` is handed to no torchnet `train`: its test is not known to build a graph)
    assert runs == [("tnt.engine.Engine().test", ("test", "step", False))]


def test_a_network_that_sets_its_own_grad_mode_builds_no_known_graph() -> None:
    runs = _engine_runs(
        """
        import torch
        from torchnet.engine import Engine
        engine = Engine()
        def step(sample):
            with torch.set_grad_enabled(sample[2]):
                return criterion(model(sample[0]), sample[1]), None
        engine.test(step, loader)
        engine.train(step, loader, 10, optimizer)
        """
    )
    assert runs[0] == ("engine.test", ("test", "step", False))


def test_a_test_network_is_the_trained_function_by_scope_and_switches_no_grad_through_its_callees() -> None:
    runs = _engine_runs(
        """
        import torch
        from torchnet.engine import Engine
        def forward(sample, training):
            with torch.set_grad_enabled(training):
                return criterion(model(sample[0]), sample[1]), None
        def main(loader, optimizer):
            def step(sample):
                return forward(sample, sample[2])
            def plain(sample):
                # torch.no_grad() named in a comment only
                return criterion(model(sample[0]), sample[1]), None
            engine = Engine()
            engine.train(step, loader, 10, optimizer)
            engine.train(plain, loader, 10, optimizer)
            engine.test(step, loader)
            engine.test(plain, loader)
        def given(plain, loader):
            engine = Engine()
            engine.test(plain, loader)
        def other(loader):
            def plain(sample):
                return model(sample[0]), None
            engine = Engine()
            engine.test(plain, loader)
        """
    )
    tests = [answer for func, answer in runs if answer[0] == "test"]
    assert tests == [("test", "step", False), ("test", "plain", True), ("test", "plain", False), ("test", "plain", False)]


def test_mixed_precision_evidence() -> None:
    answers = dict(
        _ask_calls(
            """
            import torch
            from apex import amp
            from apex.optimizers import FusedAdam
            from apex.fp16_utils import FP16_Optimizer, to_python_float
            from accelerate import Accelerator
            accelerator = Accelerator()
            model, optimizer = amp.initialize(model, optimizer, opt_level="O1")
            with amp.scale_loss(loss, optimizer) as scaled:
                pass
            FP16_Optimizer(optimizer)
            FusedAdam(params)
            torch.autocast("cuda")
            torch.cuda.amp.GradScaler()
            accelerator.autocast()
            simulator.autocast()
            to_python_float(loss)
            torch.optim.Adam(params)
            """,
            precision_api.mixed_precision_call,
        )
    )
    assert answers == {
        "amp.initialize": True, "amp.scale_loss": True, "FP16_Optimizer": True, "FusedAdam": False,
        "torch.autocast": True, "torch.cuda.amp.GradScaler": True, "accelerator.autocast": True,
        "torch.optim.Adam": False, "simulator.autocast": False, "to_python_float": False, "Accelerator": False,
    }  # fmt: skip


def test_a_context_manager_the_caller_hands_in_is_of_unknown_precision() -> None:
    text = textwrap.dedent(
        """
        import contextlib
        amp_ctx = contextlib.nullcontext
        def epoch(model, x, amp_autocast, region, timer):
            with amp_autocast():
                model(x)
            with region:
                model(x)
            with amp_ctx():
                model(x)
            timer = contextlib.nullcontext()
            with timer:
                model(x)
            def inner(y):
                with amp_autocast():
                    model(y)
                amp_autocast = contextlib.nullcontext
                with amp_autocast():
                    model(y)
        class Runner:
            amp_autocast = contextlib.nullcontext
            def run(self, x):
                with amp_autocast():
                    pass
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: list[tuple[str, bool]] = []

    class Asker:
        def visit_WithItem(self, node: cst.WithItem) -> None:
            answers.append((module.code_for_node(node.item), handed_contexts.handed_context(node, ctx) is not None))

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    # a parameter of the function around it (the enclosing one's, for a nested function that has not bound
    # the name) may be autocast; one the function binds again (`timer = nullcontext()`), a module-level
    # name, a local of a nested function and a class attribute are not handed in
    assert answers == [
        ("amp_autocast()", True), ("region", True), ("amp_ctx()", False), ("timer", False),
        ("amp_autocast()", True), ("amp_autocast()", False), ("amp_autocast()", False),
    ]  # fmt: skip


def test_a_handed_in_context_manager_kept_by_a_fallback_and_shown_by_its_region() -> None:
    text = textwrap.dedent(
        """
        import contextlib
        def kept(model, x, a=None, b=None, c=None):
            a = a or contextlib.nullcontext()
            if b is None:
                b = contextlib.nullcontext()
            with a:
                model(x)
            with b:
                model(x)
            for c in range(2):
                with c:
                    model(x)
        def shown(model, x, timer, prof, amp_autocast):
            with timer("forward"):
                model(x)
            with prof:
                model(x)
                prof.step()
            with amp_autocast("cuda"):
                model(x)
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    answers: list[tuple[str, bool]] = []

    class Asker:
        def visit_With(self, node: cst.With) -> None:
            answers.append((module.code_for_node(node.items[0].item), handed_contexts.handed_region(node, ctx) is not None))

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    # a fallback keeps the caller's choice (`x = x or ...`, `if x is None: x = ...`); a loop target is
    # the function's own; a timer called with a label and a profiler stepped in the body are no autocast
    assert answers == [
        ("a", True), ("b", True), ("c", False),
        ('timer("forward")', False), ("prof", False), ('amp_autocast("cuda")', True),
    ]  # fmt: skip


def test_callers_in_the_file_that_all_hand_a_plain_context_make_the_region_plain() -> None:
    text = textwrap.dedent(
        """
        import contextlib
        import torch
        from tqdm import tqdm
        def step(model, x, ctx):
            with ctx():
                model(x)
        def bar_epoch(model, loader, bar):
            with bar:
                model(loader)
        def amp_epoch(model, x, region):
            with region():
                model(x)
        def unseen(model, x, region):
            with region():
                model(x)
        class Runner:
            def run(self, model, x, ctx):
                with ctx():
                    model(x)
        def main(model, loader, flag, chosen):
            for i, x in enumerate(loader):
                sync = model.no_sync if i % 2 else contextlib.nullcontext
                step(model, x, sync)
                step(model, x, ctx=torch.no_grad)
                amp_epoch(model, x, torch.autocast if flag else contextlib.nullcontext)
                amp_epoch(model, x, contextlib.nullcontext)
                Runner().run(model, x, chosen)
            bar_epoch(model, loader, tqdm(total=3))
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    regions: list[tuple[str, handed_contexts.Handed]] = []
    scopes: dict[int, cst.CSTNode] = {}

    class Asker:
        def visit_With(self, node: cst.With) -> None:
            handed = handed_contexts.handed_region(node, ctx)
            if handed is not None:
                regions.append((handed.name, handed))

        def visit_Call(self, node: cst.Call) -> None:
            if ctx.function_node is not None:
                scopes[id(node)] = ctx.function_node

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    facts = ctx.facts()
    answers = [(name, handed_contexts.callers_hand_plain(h, facts.call_sites.get(h.key, []), scopes)) for name, h in regions]
    # no_sync or nullcontext (by a name the caller binds), no_grad, a progress bar: plain; a choice that
    # may be autocast, no caller in the file, an argument not known: unknown
    assert answers == [("ctx", True), ("bar", True), ("region", False), ("region", False), ("ctx", False)]


def test_rows_of_a_model_output_used_as_tensors_are_outputs() -> None:
    text = textwrap.dedent(
        """
        for out in model(x):
            feats.append(out[:-1].float())
        for i, row in enumerate(model(x).squeeze()):
            keep(row[0] * 2)
        for o in model(x):
            keep(o)
        for o in model(x):
            keep(o["boxes"].cpu())
        for name in names:
            pass
        for a, b in zip(model(x), y):
            pass
        """
    )
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    found: list[list[str]] = []

    class Asker:
        def visit_For(self, node: cst.For) -> None:
            found.append(outputs.output_elements(node, ctx))

    Traversal(ctx, [Asker()]).walk(module)  # type: ignore[list-item]
    # a row is an output only where the body indexes it and uses it as a tensor (not a list of
    # detection dicts, not a dict's string keys)
    assert found == [["out"], ["row"], [], [], [], []]


def test_shape_keeping_and_per_sample_reductions_of_an_output_are_outputs() -> None:
    code = """
        import torch
        import torch.nn.functional as F
        F.normalize(model(x), dim=-1)
        model(x).mean(dim=1)
        model(x).sum((2, 3))
        torch.logsumexp(model(x), dim=1)
        model(x).mean()
        model(x).mean(0)
        model(x).mean(dim=-1)
        model(x).sum(axis)
        F.normalize(x, dim=-1)
        model(x).norm(2)
        torch.norm(model(x), 2)
        model(x).norm(dim=1)
        """

    def question(call: cst.Call, ctx: Context):
        return outputs.model_output(call, ctx)

    asked = [func for func, answer in _ask_calls(code, question) if answer]
    # an axis after the batch's keeps one value per sample; none, the batch's, `-1` or a name may not
    # (`norm`'s first argument is the order p, not an axis: only `dim=` names one)
    assert [a for a in asked if a != "model"] == ["F.normalize", "model(x).mean", "model(x).sum", "torch.logsumexp", "model(x).norm"]


def test_a_stride_loop_moving_chunks_of_a_host_collection() -> None:
    from memlint.analysis.host_chunks import moves_host_chunks

    text = textwrap.dedent(
        """
        def f(loader, X, batch, device):
            texts = loader.dataset.text
            for i in range(0, n, text_bs):
                chunk = texts[i:min(n, i + text_bs)]
                ids = tok(chunk).to(device)
            rows = loader.dataset.rows
            for i in range(0, len(rows), batch_size):
                out = model(rows[i:i + batch_size].cuda())
            for i in range(0, len(rows), batch_size):
                out = model(rows[i:i + batch_size])
            for i in range(0, n, hop):
                out = model(texts[i:i + hop].to(device))
            for i in range(0, n, batch_size):
                out = model(rows[:, i:i + batch_size].to(device))
            for i in range(0, n, batch_size):
                out = model(rows[i:i + batch_size].to(torch.float16))
            for i in range(0, len(batch), micro_bs):
                out = model(batch[i:i + micro_bs].to(device))
            X = X.to(device)
            for i in range(0, len(X), eval_bs):
                out = model(X[i:i + eval_bs].to(device))
            for i in range(0, n, text_bs):
                match i:
                    case 0:
                        pass
        """
    )
    function = cst.parse_module(text).body[0]
    loops = [s for s in function.body.body if isinstance(s, cst.For)]
    # only a local read from a dataset is a collection on the host: a parameter (one batch a helper
    # splits) or a tensor moved whole before the loop is not; a `match` is not read (no crash)
    assert [moves_host_chunks(loop, function) for loop in loops] == [True, True, False, False, False, False, False, False, False]


def test_a_loader_picked_by_a_split_key_is_a_pass_over_batches() -> None:
    from memlint.analysis.iteration import iterates_batches

    text = textwrap.dedent(
        """
        for x, y in tqdm(self.data[phase]):
            pass
        for x, y in datasets[split]:
            pass
        for k in config[key]:
            pass
        for x, y in dataloaders["val"]:
            pass
        for tf in transforms[phase]:
            pass
        """
    )
    module = cst.parse_module(text)
    # a split key picks a loader only from a collection named `data` (or named like loaders)
    assert [iterates_batches(s) for s in module.body] == [True, False, False, True, False]


def test_an_element_of_a_collection_of_models_is_a_model() -> None:
    code = """
        import torch.nn as nn
        nets = {}
        nets["a"] = nn.DataParallel(build()).cuda()
        opt = make_opt(nets["a"].parameters())
        nets["a"](x)
        heads["b"](x)
        criterions = {"ce": nn.CrossEntropyLoss()}
        opt2 = make_opt(criterions["ce"].parameters())
        criterions["ce"](x, y)
        """

    def question(call: cst.Call, ctx: Context):
        return outputs.model_output(call, ctx)

    asked = [func for func, answer in _ask_calls(code, question) if answer]
    assert asked == ['nets["a"]']


def test_where_a_class_binds_its_attributes_of_self() -> None:
    from memlint.analysis.self_bindings import class_bindings, loop_bindings

    text = textwrap.dedent(
        """
        class R:
            def step(self, x):
                self.logits, self.memory = self.net(x)
            def to_host(self):
                self.memory = self.memory.cpu()
                del self.extra
            def ev(self):
                for x in self.data[phase]:
                    self.step(x)
                    self.acc = torch.cat((self.acc, self.logits))
                    self.acc += 0
        """
    )
    cls = cst.parse_module(text).body[0]
    bindings = class_bindings(cls)
    assert bindings == {"logits": ["step"], "memory": ["step", "to_host"], "extra": ["to_host"], "acc": ["ev", "ev"]}
    loop = cls.body.body[2].body.body[0]
    counts, called = loop_bindings(loop)
    assert counts == {"acc": 2} and called == {"step"}
