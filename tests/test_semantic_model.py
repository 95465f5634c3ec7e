"""The semantic model (memlint/analysis/model.py): its facts and the evidence each rests on, and that
the summaries' and the screens' reading of the same evidence (memlint/analysis/evidence.py) agrees."""

from __future__ import annotations

import ast
import re
import textwrap

import libcst as cst
import pytest

from memlint.analysis import evidence
from memlint.analysis.model import SemanticModel


def _model(code: str) -> tuple[SemanticModel, cst.Module]:
    text = textwrap.dedent(code)
    module = cst.parse_module(text)
    return SemanticModel(module, text), module


def _assignments(module: cst.Module) -> list[cst.Assign]:
    found: list[cst.Assign] = []

    class Finder(cst.CSTVisitor):
        def visit_Assign(self, node: cst.Assign) -> None:
            found.append(node)

    module.visit(Finder())
    return found


def _evidenced(code: str) -> dict[str, str]:
    """name -> evidence kind, over every assignment of `code`."""
    model, module = _model(code)
    return {name: ev.kind for a in _assignments(module) for name, ev in model.history_at(a).items()}


FORMS = {
    "loss.backward()": "loss.backward()",
    "scaler": "scaler.scale(loss).backward()",
    "divided": "(loss / accum_steps).backward()",
    "mean": "loss.mean().backward()",
    "accelerate": "accelerator.backward(loss)",
    "fabric": "fabric.backward(loss)",
    "deepspeed": "model_engine.backward(loss)",
    "lightning": "self.manual_backward(loss)",
    "autograd.backward": "torch.autograd.backward(loss)",
    "autograd.grad": "torch.autograd.grad(loss, params)",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_of_backward_is_evidence(form):
    code = f"""
        import torch
        from losses import objective
        for x, y in loader:
            loss = objective(x, y)
            {FORMS[form]}
    """
    assert _evidenced(code) == {"loss": "backward"}
    tree = ast.parse(textwrap.dedent(code))
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assigns = [n for n in ast.walk(tree) if isinstance(n, ast.Assign)]
    assert "loss" in evidence.backpropagated_names(calls, assigns)  # the summaries' reading
    assert "loss" in evidence.backpropagated_names(calls, assigns, loose=True)  # the screens'


def test_grad_imported_from_torch_autograd_is_evidence():
    assert _evidenced("""
        from torch.autograd import grad
        out = critic(x)
        g = grad(out, x)
    """) == {"out": "backward"}


def test_the_other_results_of_the_call_are_siblings():
    assert _evidenced("""
        loss, mse, ce = criterion(pred, y)
        loss.backward()
    """) == {"loss": "backward", "mse": "sibling", "ce": "sibling"}


def test_evidence_goes_to_the_assignment_that_reaches_the_call():
    model, module = _model("""
        loss = first(x)
        loss = second(x)
        loss.backward()
        loss = loss.item()
    """)
    first, second, third = _assignments(module)
    assert not model.history_at(first) and not model.history_at(third)
    assert model.history_at(second)["loss"].kind == "backward"


def test_a_running_sum_backpropagated_later_carries_history():
    """`loss = 0.0; loss += term; loss.backward()`: backward runs on what the last `+=` bound."""
    model, module = _model("""
        for x in loader:
            loss = 0.0
            for out in outputs(x):
                loss += compute(out)
            loss.backward()
            total += loss
    """)
    sums = [n for n in _aug_assignments(module)]
    assert model.history_at(sums[0])["loss"].kind == "backward"
    assert not model.history_at(sums[1])  # `total` is never backpropagated
    assert not model.history_at(_assignments(module)[0])  # `loss = 0.0` is not what backward runs on


@pytest.mark.parametrize(
    "body, reached",
    [
        ("loss += term\nloss.backward()", True),
        ("for t in terms:\n    loss += t\n    if t is None:\n        break\nloss.backward()", True),  # the loop ends, then backward
        ("if not train:\n    loss += term\nelse:\n    loss.backward()", False),  # the other branch
        ("if not train:\n    loss += term\n    continue\nloss.backward()", False),  # skipped by `continue`
        ("loss += term\nif done:\n    return\nloss.backward()", False),  # a return between
        ("if train:\n    loss += term\nloss.backward()", True),  # the `+=`'s block flows on to backward
    ],
)
def test_a_running_sum_carries_history_only_where_backward_is_reached_from_it(body: str, reached: bool):
    """The last `+=` before a backward in source order is its value only on a path that reaches it."""
    text = "def run(loader):\n    for x in loader:\n        loss = 0.0\n" + textwrap.indent(body, " " * 8) + "\n"
    model, module = _model(text)
    assert bool(model.history_at(_aug_assignments(module)[0])) is reached


def _aug_assignments(module: cst.Module) -> list[cst.AugAssign]:
    found: list[cst.AugAssign] = []

    class Finder(cst.CSTVisitor):
        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            found.append(node)

    module.visit(Finder())
    return found


def test_a_rebinding_that_is_not_an_assignment_ends_the_evidence():
    assert _evidenced("""
        loss = compute(x)
        loss += 1
        loss.backward()
    """) == {}
    assert _evidenced("""
        loss = compute(x)
        for loss in losses:
            loss.backward()
    """) == {}


def test_each_function_has_its_own_names():
    assert _evidenced("""
        def a():
            loss = compute(x)
        def b(loss):
            loss.backward()
    """) == {}


def test_a_gradient_argument_is_not_the_backpropagated_value():
    # `y.backward(v)` takes a gradient of y's shape; the receiver of an argument form is an engine
    assert _evidenced("""
        v = make(x)
        y = net(x)
        y.backward(v)
    """) == {"v": "backward"}  # (the Context never upgrades a value it knows: see test_context_*)


def test_without_the_word_the_file_is_not_walked():
    model, module = _model("""
        loss = compute(x)
        total += loss
    """)
    assert model.history_at(_assignments(module)[0]) == {}
    assert model._walked is False


def test_backward_through_the_files_own_helpers():
    model, module = _model("""
        def inner(loss):
            loss.backward()
        def step(batch):
            inner(compute(batch))
        def fit(loader):
            for batch in loader:
                step(batch)
            for batch in loader:
                evaluate(batch)
    """)
    functions = {n.name.value: n for n in module.body if isinstance(n, cst.FunctionDef)}
    loops = [s for s in functions["fit"].body.body if isinstance(s, cst.For)]
    assert model.calls_backward(functions["inner"]) and model.calls_backward(functions["step"])
    assert model.calls_backward(loops[0]) and model.backward_in_own_statements(loops[0])
    assert not model.calls_backward(loops[1])


def test_backward_in_a_nested_loop_is_not_the_outer_loops_own():
    model, module = _model("""
        for epoch in range(3):
            for x, y in loader:
                criterion(net(x), y).backward()
    """)
    outer = module.body[0]
    inner = outer.body.body[0]
    assert model.calls_backward(outer) and not model.backward_in_own_statements(outer)
    assert model.backward_in_own_statements(inner)


def test_device_facts():
    model, _ = _model("""
        import torch
        net = Net()
        net.to(device)
        x = x.to(torch.float16)
        trainer = Trainer(accelerator="cpu")
    """)
    assert model.device.accelerator and model.device.moved == frozenset({"net"})  # (not `x`: a dtype moves nothing)
    assert model.device.cpu_trainer
    only_dtype, _ = _model("""
        import torch
        x = x.to(torch.float16)
        y = y.to("cpu")
    """)
    assert not only_dtype.device.accelerator and only_dtype.device.moved == frozenset()



@pytest.mark.parametrize(
    "move, where",
    [
        ("x.cuda()", "accelerator"),
        ("x.to(device)", "accelerator"),
        ("x.to(args.device)", "accelerator"),  # the run's configured device, as a plain `device` is
        ("x.to(self.opt.device)", "accelerator"),
        ("x.to(model.device)", "model"),  # follows the model: on a device only where it is moved
        ("x.to(self.device)", "self"),  # a Lightning module's own device
        ("x.to(torch.float16)", None),
    ],
)
def test_where_a_loop_sends_its_inputs(move, where):
    model, module = _model(f"""
        import torch
        for x, y in test_loader:
            x = {move}
    """)
    loop = next(s for s in module.body if isinstance(s, cst.For))
    assert model.loop_device(loop) == where


@pytest.mark.parametrize(
    "code, evidence_code",
    [
        ("self.net = cuda(net(z_dim), self.use_cuda)\n", "cuda"),  # placed by a helper: named, not placed
        ("trainer = Trainer(opt, device_id, model)\n", "device_id"),
        ('run(model, "cuda:0")\n', '"cuda:0"'),
        ("n = args.gpu\n", "gpu"),
        ("import torch as th\nth.cuda.manual_seed(0)\nok = th.cuda.is_available()\n", None),  # seeding, asking
        ("mode = 'per_device'\ndevices = []  # a comment on cuda is no code\n", "devices"),
        ("debug_mode = True\nprint('a gpuless run')  # the GPU\n", None),
    ],
)
def test_accelerator_named(code, evidence_code):
    model, module = _model(code)
    found = model.accelerator_named
    assert (module.code_for_node(found) if found is not None else None) == evidence_code
    if found is not None:
        assert not model.host_only(host_importers=True)  # named: it may run on an accelerator


def test_host_only():
    script, _ = _model("""
        import torch
        if torch.cuda.is_available():
            torch.cuda.manual_seed(0)
        for x, y in loader:
            loss = model(x).sum()
    """)
    assert script.runs_at_module_level and script.accelerator_named is None and script.host_only(host_importers=False)
    library, _ = _model("""
        def train(model, loader):
            for x, y in loader:
                model(x).sum().backward()
    """)
    assert not library.runs_at_module_level
    assert not library.host_only(host_importers=False)  # its caller may pick the device
    assert library.host_only(host_importers=True)  # its importers in the project name none

def test_context_gives_evidenced_bindings_history_only_where_it_cannot_tell():
    from memlint.analysis.context import Context
    from memlint.pipeline.traversal import Traversal

    text = textwrap.dedent("""
        import torch
        from losses import objective
        class Perceptron:
            def backward(self, x):
                return x
        for x, y in loader:
            loss, mse = objective(x, y)
            loss.backward()
            p = Perceptron()
            p.backward(x)
    """)
    module = cst.parse_module(text)
    ctx = Context(module, None, text)
    Traversal(ctx, []).walk(module)
    assert ctx.lookup_value("loss").graph is True and ctx.lookup_value("loss").scalar
    assert ctx.lookup_value("mse").graph is True
    assert ctx.lookup_value("p").graph is False  # a plain object of the file: its backward is its own


def test_running_meters_by_what_their_class_does():
    model, module = _model("""
        from utils import AverageMeter
        class Keeps:
            def update(self, val, n=1):
                self.sum += val * n
        class Converts:
            def update(self, val, n=1):
                self.sum += val.item() * n
        a = AverageMeter("Loss")
        b = Keeps()
        c = Converts()
        d = Logger()
    """)
    assert [model.is_meter(cst.Name(n)) for n in "abcd"] == [True, True, False, False]


def test_constructed_names_through_module_methods():
    model, module = _model("""
        G = Generator().cuda()
        D = Discriminator()
        B = nn.BatchNorm1d(2)
        D = build(D)
        x = torch.randn(3)
        def inner():
            H = Other()
    """)
    found = {name: [module.code_for_node(c) for c in calls] for name, calls in model.constructed(module).items()}
    assert found == {"G": ["Generator()"], "B": ["nn.BatchNorm1d(2)"]}  # (D is rebound by a helper, x by a function)


def test_a_model_by_evidence_needs_a_module_method_and_a_call():
    model, _ = _model("""
        def sample(G, z, scheduler):
            G.eval()
            scheduler.step()
            return G(z), scheduler(z)
        def fit(self):
            self.D.train()
            return self.D(x)
    """)
    assert model.module_evidence("G") and model.module_evidence("self.D")
    assert not model.module_evidence("scheduler") and not model.module_evidence("z")


def test_the_entries_of_a_container_are_models_by_the_same_evidence():
    code = """
        def build(self, defs, steps):
            for key in defs:
                self.nets[key] = make(key).cuda()
                params = list(self.nets[key].parameters())
            self.metrics[key].load_state_dict(saved)
            self.parts["net"].train()
            return self.nets["G"](x), steps["augment"](x), self.opts["G"].zero_grad(), self.metrics["acc"](x), self.parts["tok"](t)
    """
    model, _ = _model(code)
    assert model.module_evidence("self.nets[]")
    assert not model.module_evidence("steps[]")  # called, never given a module's method
    assert not model.module_evidence("self.opts[]")  # given `zero_grad()`, never called
    # a metric's `load_state_dict`, `train()` of one entry: methods others have too, no proof
    assert not model.module_evidence("self.metrics[]") and not model.module_evidence("self.parts[]")
    # the screens' copy of the fact (CPython's AST) agrees
    calls = [n for n in ast.walk(ast.parse(textwrap.dedent(code))) if isinstance(n, ast.Call)]
    assert evidence.module_names(calls) == {"self.nets[]"}


# ------------------------------------------------------------------ notebook semantics (notebooks.py)

NOTEBOOK = """
import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import torch
    import torch.nn as nn
    from torch.nn import functional as F
    return F, nn, torch


@app.cell
def _(nn):
    class Network(nn.Module):
        pass

    def helper():
        pass

    device = "cuda"
    return Network, device, helper


@app.cell(hide_code=True)
def _(Network, device, nn):
    net = Network().to(device)
    return
"""


def test_a_marimo_cell_parameter_is_what_the_defining_cell_binds():
    model, module = _model(NOTEBOOK)
    notebook = model.notebook
    assert notebook is not None and notebook.app == "app"
    exports = {name: (e.kind, e.qualified) for name, e in notebook.exports.items()}
    assert exports == {
        "torch": ("import", "torch"),
        "nn": ("import", "torch.nn"),
        "F": ("import", "torch.nn.functional"),
        "Network": ("class", None),
        "helper": ("function", None),
    }  # `device`, a value, stays unknown
    cells = [s for s in module.body if isinstance(s, cst.FunctionDef)]
    assert all(notebook.is_cell(c) for c in cells)
    assert notebook.parameter(cells[2], "nn").qualified == "torch.nn"
    assert [s.name.value for s in notebook.top_level(module) if isinstance(s, (cst.ClassDef, cst.FunctionDef))] == ["Network", "helper"]
    assert model._module_imports()["nn"] == "torch.nn"  # the notebook's globals, for the model's own facts


@pytest.mark.parametrize(
    "change",
    [
        ("import marimo\n", "import notebooks as marimo_like\n"),  # no marimo import
        ('app = marimo.App(width="full")', "app = make_app()"),  # no marimo.App
        ("@app.cell", "@other.cell"),  # not cells of the app
    ],
)
def test_without_the_evidence_a_file_is_no_notebook(change):
    model, _ = _model(NOTEBOOK.replace(*change))
    assert model.notebook is None or not model.notebook.exports.get("nn")


def test_a_name_two_cells_define_is_left_out():
    code = NOTEBOOK.replace("    return F, nn, torch", "    return F, nn, torch\n\n\n@app.cell\ndef _():\n    import mylib.nn as nn\n    return (nn,)")
    model, _ = _model(code)
    assert "nn" not in model.notebook.exports and model.notebook.exports["torch"].qualified == "torch"


@pytest.mark.parametrize(
    "text, named",
    [("x = use_cuda", True), ("n_gpus = 2", True), ("d = gpu0", True), ("to(device)", True), ("'GPU'", True),
     ("mps_device = 1", True), ("s.devices_list", True), ("CUDAExtension", True),
     ("output = dumps(inputs)", False), ("mydevice = 1", False), ("gpuish = 1", False)],
)
def test_the_accelerator_pre_check_is_whole_words_and_necessary(text: str, named: bool) -> None:
    """tables.ACCELERATOR_LETTERS lets through every text the identifier or string test could match
    (a necessary condition), and no more than the whole words they ask for."""
    from memlint.analysis import tables

    words = [w for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*|'[^']*'", text)]
    exact = any(tables.ACCELERATOR_IDENTIFIER.search(w) or tables.ACCELERATOR_STRING.search(w) for w in words)
    assert exact is named
    assert bool(tables.ACCELERATOR_LETTERS.search(text)) is named


def test_an_optimizer_step_by_construction_or_by_name():
    # SemanticModel.steps_optimizer: the one answer ML017 and the closures read
    model, module = _model("""
        import torch.optim as optim
        Gopt = optim.Adam(G.parameters())
        sched = optim.lr_scheduler.StepLR(Gopt, 10)
        Gopt.step()
        optimizer.step()
        self.opt_G.step()
        sched.step()
        env.step(0)
        scaler.step(optimizer)
    """)
    calls = [n for n in _descendants(module) if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "step"]
    assert [model.steps_optimizer(c) for c in calls] == [True, True, True, False, False, False]


def test_a_summarys_loop_steps_an_optimizer_by_its_construction():
    # summaries' loop evidence asks _steps_an_optimizer (construction or name), not the name alone:
    # SEGAN's `Gopt` steps in a loop over a counter
    from memlint.analysis.summaries import summarize
    from memlint.prescreen import Source

    summary = summarize(Source(textwrap.dedent("""
        import torch.optim as optim

        def fit(G, batches):
            Gopt = optim.Adam(G.parameters())
            for i in range(100):
                train_step(G, batches)
                Gopt.step()
    """)))
    assert summary["functions"]["fit"].get("pass") is True


def _descendants(module: cst.Module) -> list:
    from memlint.analysis.walk import code_descendants

    return list(code_descendants(module))


def test_an_annotated_binding_of_a_helpers_optimizer_is_a_binding():
    # optimizer_bindings reads `opt: Optimizer = Adam(...)` in a helper as it reads `opt = Adam(...)`
    model, _ = _model("""
        import torch.optim as optim

        def build(params):
            opt: optim.Optimizer = optim.Adam(params)
            return opt

        def unused(params):
            return optim.SGD(params)

        Gopt = build(G.parameters())
        Dopt: optim.Optimizer = build(D.parameters())
    """)
    assert model.optimizers() == {"opt", "Gopt", "Dopt"}  # (any binding in the file counts)


def test_apex_fused_optimizers_are_built_optimizers():
    from memlint.analysis.optimizers import builds_optimizer

    assert builds_optimizer("apex.optimizers.FusedAdam") and builds_optimizer("apex.optimizers.fused_lamb.FusedLAMB")
    assert not builds_optimizer("torch.optim.lr_scheduler.StepLR") and not builds_optimizer("apex.amp.initialize")
