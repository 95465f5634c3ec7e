"""The shared analysis, queried the way rules query it: through a probe rule that records what the
Context says at each `probe(...)` call of a snippet."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.analysis import GradMode
from memlint.config import Settings
from memlint.pipeline.engine import lint_text
from memlint.rule import Rule

PROBES: list[dict] = []


class Probe(Rule):
    code = "ML998"
    name = "probe"

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "probe":
            arg = node.args[0].value
            PROBES.append(
                {
                    "resolve": self.ctx.resolve(arg),
                    "assigned_alias": self.ctx.names_assigned_alias(arg),
                    "grad": self.ctx.grad_mode,
                    "graph": self.ctx.holds_graph(arg),
                    "scalar": self.ctx.value_of(arg).scalar,
                    "loop": self.ctx.in_loop,
                }
            )

    def finish(self, facts) -> None:
        PROBES.append({"no_grad_functions": facts.no_grad_functions})


def probe(source: str, monkeypatch) -> list[dict]:
    PROBES.clear()
    monkeypatch.setattr(Settings, "rules_for", lambda self, filename: [Probe])
    text = "import torch\n" + textwrap.dedent(source)
    # A rule the prescreen has no check for always runs.
    assert lint_text(text, "probe.py", Settings(enabled=frozenset({Probe.code}))) == []
    return PROBES[:-1]


def facts_of(source: str, monkeypatch) -> dict:
    probe(source, monkeypatch)
    return PROBES[-1]


@pytest.mark.parametrize(
    "source, expected",
    [
        ("import torch.nn as nn\nprobe(nn.ReLU)", "torch.nn.ReLU"),
        ("from torch import nn\nprobe(nn.ReLU)", "torch.nn.ReLU"),
        ("from torch.nn import ReLU as R\nprobe(R)", "torch.nn.ReLU"),
        ("import torch.nn.functional as F\nprobe(F.relu)", "torch.nn.functional.relu"),
        ("from torch.utils.checkpoint import checkpoint as ckpt\nprobe(ckpt)", "torch.utils.checkpoint.checkpoint"),
        ("import torch.utils.checkpoint\nprobe(torch.utils.checkpoint.checkpoint)", "torch.utils.checkpoint.checkpoint"),
        ("F = torch.nn.functional\nprobe(F.relu)", "torch.nn.functional.relu"),
        # A user's own function, a parameter, a later import, a rebinding: not torch's.
        ("def checkpoint(f): pass\nprobe(checkpoint)", None),
        ("def f(F):\n    probe(F.relu)", None),
        ("probe(nn.ReLU)\nfrom torch import nn", None),
        ("from torch.nn import ReLU\nReLU = object\nprobe(ReLU)", None),
        # Rebound later at module level: ambiguous inside functions, which run after the module loads.
        ("from torch.utils.checkpoint import checkpoint\ndef f():\n    probe(checkpoint)\ndef checkpoint(x): pass", None),
        # The usual optional-import fallback does not make a name ambiguous.
        ("try:\n    from torch.nn import functional as F\nexcept ImportError:\n    F = None\ndef f():\n    probe(F.relu)", "torch.nn.functional.relu"),
    ],
)
def test_resolution(source, expected, monkeypatch):
    (result,) = probe(source, monkeypatch)
    assert result["resolve"] == expected


@pytest.mark.parametrize(
    "source, expected",
    [
        # bound by assigning another name: the name it refers to is written at that assignment
        ("def f(args):\n    ac = contextlib.nullcontext\n    if args.amp:\n        ac = torch.cuda.amp.autocast\n    probe(ac)", True),
        ("AC = torch.cuda.amp.autocast\ndef f():\n    probe(AC)", True),
        ("from torch.cuda.amp import autocast\nac = autocast\nprobe(ac)", True),
        # an import, the name written out, a parameter, a name bound to a call: no alias of an assignment
        ("from torch.cuda.amp import autocast\nprobe(autocast)", False),
        ("probe(torch.cuda.amp.autocast)", False),
        ("def f(ac=torch.cuda.amp.autocast):\n    probe(ac)", False),
        ("ac = make_autocast()\nprobe(ac)", False),
    ],
)
def test_assigned_alias(source, expected, monkeypatch):
    (result,) = probe(source, monkeypatch)
    assert result["assigned_alias"] is expected


@pytest.mark.parametrize(
    "source, expected",
    [
        ("probe(x)", GradMode.ENABLED),
        ("with torch.no_grad():\n    probe(x)", GradMode.DISABLED),
        ("with torch.inference_mode():\n    probe(x)", GradMode.DISABLED),
        ("with torch.inference_mode(False):\n    probe(x)", GradMode.ENABLED),
        ("with torch.no_grad():\n    with torch.enable_grad():\n        probe(x)", GradMode.ENABLED),
        ("with torch.set_grad_enabled(False):\n    probe(x)", GradMode.DISABLED),
        ("with torch.set_grad_enabled(training):\n    probe(x)", GradMode.UNKNOWN),
        # a conditional expression may set either branch's mode (evaluation's `_under_grad_off` asks it too)
        ("with (torch.enable_grad() if train else torch.no_grad()):\n    probe(x)", GradMode.UNKNOWN),
        ("with torch.no_grad() if frozen else contextlib.nullcontext():\n    probe(x)", GradMode.UNKNOWN),
        ("with torch.no_grad() if frozen else torch.inference_mode():\n    probe(x)", GradMode.DISABLED),
        ("with contextlib.nullcontext() if a else contextlib.suppress(E):\n    probe(x)", GradMode.ENABLED),
        ("torch.set_grad_enabled(False)\nprobe(x)", GradMode.DISABLED),
        ("@torch.no_grad()\ndef f():\n    probe(x)", GradMode.DISABLED),
        ("@torch.no_grad\ndef f():\n    probe(x)", GradMode.DISABLED),
        ("@torch.inference_mode()\ndef f():\n    probe(x)", GradMode.DISABLED),
        ("from torch import no_grad as ng\n@ng()\ndef f():\n    probe(x)", GradMode.DISABLED),
        ("class M:\n    def validation_step(self, b, i):\n        probe(x)", GradMode.DISABLED),
        ("class M:\n    def training_step(self, b, i):\n        probe(x)", GradMode.ENABLED),
        # A project's own decorator that wraps no_grad, defined in the same file.
        (
            "import functools\n"
            "def evaluation(fn):\n"
            "    @functools.wraps(fn)\n"
            "    def inner(*a, **k):\n"
            "        with torch.no_grad():\n"
            "            return fn(*a, **k)\n"
            "    return inner\n"
            "@evaluation\n"
            "def f():\n"
            "    probe(x)",
            GradMode.DISABLED,
        ),
        ("def no_grad_eval(fn):\n    return torch.no_grad()(fn)\n@no_grad_eval\ndef f():\n    probe(x)", GradMode.DISABLED),
        # A function body does not inherit the with-block it is defined in.
        ("with torch.no_grad():\n    def f():\n        probe(x)", GradMode.ENABLED),
    ],
)
def test_grad_mode(source, expected, monkeypatch):
    results = [r for r in probe(source, monkeypatch)]
    assert results[-1]["grad"] is expected


def test_functions_only_called_without_grad(monkeypatch):
    source = """
    def helper(m, x):
        return m(x)
    def only_eval(m, x):
        return helper(m, x)
    def mixed(m, x):
        return m(x)
    class Runner:
        def run(self):
            with torch.no_grad():
                self.step()
                mixed(model, x)
        def step(self):
            pass
    with torch.no_grad():
        only_eval(model, x)
    mixed(model, x)
    """
    facts = facts_of(source, monkeypatch)
    assert facts["no_grad_functions"] == {("func", "only_eval"), ("func", "helper"), ("method", "Runner", "step")}


def test_functions_picked_out_of_a_literal(monkeypatch):
    # A call of a function picked out of a list / tuple / dict literal of functions may reach each of
    # them: under no_grad, every call of each runs without gradients (airbench's `infer_fn`).
    source = """
    def infer(model, batches, level):
        def plain(x, net):
            return net(x)
        def mirror(x, net):
            return net(x) + net(x.flip(-1))
        def both(x, net):
            return mirror(x, net) + plain(x, net)
        infer_fn = [plain, mirror, both][level]
        with torch.no_grad():
            return [infer_fn(x, model) for x in batches]
    def by_key(model, x, key):
        def score(x):
            return model(x)
        def rank(x):
            return model(x).argsort()
        with torch.no_grad():
            return {"score": score, "rank": rank}[key](x)
    def held(model, x, key):
        def first(x):
            return model(x)
        table = (first,)
        with torch.no_grad():
            return table[key](x)
    """
    facts = facts_of(source, monkeypatch)
    assert facts["no_grad_functions"] == {
        ("func", "plain"), ("func", "mirror"), ("func", "both"), ("func", "score"), ("func", "rank"), ("func", "first"),
    }  # fmt: skip


@pytest.mark.parametrize(
    "source",
    [
        # the pick called with gradients on
        "def f(x):\n    return x\ndef g(x):\n    return x\nfn = [f, g][0]\nfn(1)",
        # called under no_grad, but the picked name is also handed on: it may be called anywhere
        "def f(x):\n    return x\nfn = [f][0]\nwith torch.no_grad():\n    fn(1)\nrun(fn)",
        # bound twice: which function a call reaches depends on which binding ran
        "def f(x):\n    return x\nfn = [f][0]\nwith torch.no_grad():\n    fn(1)\nfn = [f][0]",
        # the literal held by a name that is also iterated (each element called there, grad on)
        "def f(x):\n    return x\nfns = [f]\nwith torch.no_grad():\n    fns[0](1)\nfor h in fns:\n    h(1)",
        # a function called directly with gradients on, and picked under no_grad
        "def f(x):\n    return x\nf(1)\nwith torch.no_grad():\n    [f][0](1)",
        # a module-level literal called under no_grad here: another file may import it and call it
        "def f(x):\n    return x\nfns = {'a': f}\ndef run(k):\n    with torch.no_grad():\n        return fns[k](1)",
        # a second pick of the same function, bound twice (in an `if`) and called with gradients on:
        # no evidence, so it blocks the proven pick under no_grad instead of being dropped
        "def f(x):\n    return x\ndef g(x):\n    return x\ndef run(i):\n    fn = [f, g][i]\n    with torch.no_grad():\n"
        "        fn(1)\n    if i:\n        other = [f, g][i]\n    else:\n        other = f\n    other(1)",
    ],
)
def test_picks_that_prove_nothing(source, monkeypatch):
    assert facts_of(source, monkeypatch)["no_grad_functions"] == set()


def test_a_pick_with_gradients_on_reaches_a_function_otherwise_called_without(monkeypatch):
    source = "def f(x):\n    return x\nwith torch.no_grad():\n    f(1)\nfn = [f][0]\nfn(1)"
    assert facts_of(source, monkeypatch)["no_grad_functions"] == set()


@pytest.mark.parametrize(
    "source, graph, scalar",
    [
        # `scalar` is what is known, not guessed from a name: `.item()` on `criterion` of
        # `reduction="none"` raises (issue 25).
        ("loss = criterion(model(x), y)\nprobe(loss)", True, False),
        ("from torch import nn\ncriterion = nn.MSELoss()\nprobe(criterion(model(x), y))", True, True),
        ("from torch import nn\ncriterion = nn.MSELoss(reduction='sum')\nprobe(criterion(model(x), y))", True, True),
        ("from torch import nn\ncriterion = nn.MSELoss(reduction='none')\nprobe(criterion(model(x), y))", True, False),
        ("from torch import nn\ncriterion = nn.MSELoss(reduction=mode)\nprobe(criterion(model(x), y))", True, False),
        ("import torch.nn.functional as F\nprobe(F.mse_loss(out, y, reduction='mean'))", True, True),
        ("out = model(x)\nprobe(out)", True, False),
        ("out = self_model(x)\nprobe(out.sum())", True, True),
        ("import torch.nn.functional as F\nprobe(F.cross_entropy(logits, y))", True, True),
        ("import torch.nn.functional as F\nprobe(F.cross_entropy(logits, y, reduction='none'))", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nprobe(net(x))", True, False),
        ("from torch import nn\nclass Net(nn.Module):\n    pass\nclf = Net().to('cuda')\nprobe(clf(x))", True, False),
        ("outputs = model(**batch)\nprobe(outputs.loss)", True, False),
        ("from ..modeling_utils import PreTrainedModel\nclass M(PreTrainedModel):\n    def f(self, x):\n        probe(self(x))", True, False),
        ("class T:\n    def step(self, x, y):\n        probe(self.loss(self.model(x), y))", True, False),
        ("outputs = model(**batch)\nprobe(outputs[0] * 2)", True, False),
        ("loss = criterion(model(x), y)\nprobe(loss / 4)", True, False),
        ("loss = criterion(model(x), y).mean()\nprobe(loss / 4)", True, True),
        ("loss = criterion(model(x), y)\nprobe(loss.item())", False, True),
        ("loss = criterion(model(x), y)\nprobe(loss.detach())", False, False),
        ("loss = criterion(model(x), y)\nprobe(loss.data)", False, False),
        ("loss = criterion(model(x), y)\nprobe(float(loss))", False, True),
        ("loss = criterion(model(x), y)\nloss = loss.item()\nprobe(loss)", False, True),
        ("with torch.no_grad():\n    out = model(x)\nprobe(out)", False, False),
        ("probe(torch.zeros(3))", False, False),
        ("probe(train_step(batch))", None, False),
        # `build_model(cfg)` builds a model (a verb first), it does not run one; calling its result does.
        ("model = build_model(cfg)\nprobe(model(x))", True, False),
        ("probe(prepare_model(net))", None, False),
        ("def f(x):\n    probe(x)", None, False),
        ("decode = self.wp_decode\nprobe(decode(ids))", None, False),
        # a frozen model's run still hands back history to the valuation (an input may be made to require
        # grad by a statement of its own: adversarial attacks; parameters added or thawed later)
        ("from torch import nn\nnet = nn.Linear(2, 2)\nnet.eval().requires_grad_(False).cuda()\nprobe(net(torch.zeros(2)))", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nnet.requires_grad_(False)\nprobe(net(x))", True, False),
        ("from torch import nn\nnet = nn.Sequential(nn.Linear(2, 2))\nnet[0].requires_grad_(False)\nnet.fc.requires_grad_(False)\nprobe(net(torch.zeros(2)))", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nif flag:\n    net.requires_grad_(False)\nprobe(net(torch.zeros(2)))", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nprobe(net(torch.zeros(2)))\nnet.requires_grad_(False)", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nnet.requires_grad_(False)\nnet = nn.Linear(2, 2)\nprobe(net(torch.zeros(2)))", True, False),
        ("from torch import nn\nnet = nn.Linear(2, 2)\nnet.requires_grad_(False)\nnet.train()\nprobe(net(torch.zeros(2)))", True, False),
    ],
)
def test_holds_graph(source, graph, scalar, monkeypatch):
    (result,) = probe(source, monkeypatch)
    assert result["graph"] is graph
    if graph is not None:
        assert result["scalar"] is scalar
