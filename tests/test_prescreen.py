"""The prescreen must never clear a file a rule reports in, and must clear ordinary model code."""

from __future__ import annotations

import textwrap

import pytest

from memlint.analysis.summaries import summarize
from memlint.config import Settings
from memlint.pipeline.engine import lint_text
from memlint.pipeline.project import single_file_view
from memlint.pipeline.registry import all_rules, builtin_rules, rule_entries
from memlint.prescreen import Source, _screen, mentioned_codes, needs_analysis, screen_holds, screened_codes
from memlint.testing import settings_for, source_of

INVALID = [(rule, index, example) for rule in all_rules() for index, example in enumerate(rule.INVALID)]
DEFAULT_CODES = frozenset(entry.code for entry in rule_entries() if entry.default_enabled)


def test_every_built_in_rule_has_a_screen():
    """Trigger words in its meta.py, or a screen.py, or both: no built-in rule runs on every file."""
    for builtin in builtin_rules():
        assert builtin.meta.words or _screen(builtin.meta.code) is not None, builtin.folder
        assert all(builtin.meta.words), f"{builtin.folder}: an empty group of words would clear every file"


@pytest.mark.parametrize(("rule", "index", "example"), INVALID, ids=lambda v: getattr(v, "code", str(v)))
def test_the_screen_of_a_rule_lets_through_each_of_its_invalid_examples(rule, index, example):
    source = Source(source_of(example))
    options = settings_for(rule, example.config).options
    assert source.tree is not None and source.structure_is_reliable
    # As engine.lint_text does: a file linted alone is a project of its own, and the screens
    # follow its facts (a same-file helper that returns a loss carries history).
    source.project = single_file_view(summarize(source), "example.py")
    assert screen_holds(source, rule.code, options), f"{rule.code} INVALID[{index}] would be screened out"


def _screened(code: str, snippet: str, options=None) -> bool:
    """True when the prescreen clears `snippet` for the rules `code` (comma-separated)."""
    source = Source(textwrap.dedent(snippet).lstrip("\n"))
    return not needs_analysis(source, frozenset(code.split(",")), options or {})


MODEL_CODE = """
import torch
import torch.nn as nn
import torch.nn.functional as F

class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.q = nn.Linear(config.hidden_size, config.hidden_size)
        self.k = nn.Linear(config.hidden_size, config.hidden_size)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, hidden_states, mask=None):
        query = self.q(hidden_states)
        key = self.k(hidden_states)
        scores = torch.matmul(query, key.transpose(-1, -2))
        if mask is not None:
            scores = scores + mask
        weights = F.softmax(scores, dim=-1)
        weights = F.dropout(weights, p=0.1, training=self.training)
        all_states = ()
        for layer in self.layers:
            all_states += (hidden_states,)
            hidden_states = layer(hidden_states)
        positions = torch.arange(10, device=hidden_states.device)
        return self.drop(weights) + positions
"""


def test_ordinary_model_code_is_cleared_for_every_default_rule():
    assert not needs_analysis(Source(MODEL_CODE), DEFAULT_CODES, {})
    assert lint_text(MODEL_CODE, "model.py", Settings(enabled=DEFAULT_CODES)) == []


@pytest.mark.parametrize(
    ("code", "snippet"),
    [
        # accumulation in a loop outside forward
        ("ML001", "def run(xs):\n    total = 0\n    for x in xs:\n        total += model(x)\n"),
        ("ML001", "def run(xs):\n    out = []\n    while xs:\n        out.append(model(xs.pop()))\n"),
        ("ML001", "import torch.nn.functional as F\ndef run(self, xs):\n    self.seen = []\n    for x in xs:\n        y = F.cross_entropy(x, t)\n        self.seen.append(y)\n"),
        # an evaluation region of each kind
        ("ML002", "def validate(model, x):\n    return model(x)\n"),
        ("ML002", "model.eval()\ny = model(x)\n"),
        ("ML002", "for batch in val_loader:\n    y = model(batch)\n"),
        # an F.<activation> on a fresh layer output, also through an alias
        # (in the default set a functional activation is reported only where gradients are off)
        ("ML003", "from torch.nn.functional import relu as r\nclass N:\n    def __init__(self):\n        self.bn = nn.BatchNorm2d(3)\n    @torch.no_grad()\n    def forward(self, x):\n        return r(self.bn(x))\n"),
        ("ML003", "class N:\n    def __init__(self):\n        self.fc = nn.Linear(3, 3)\n    def forward(self, x):\n        with torch.no_grad():\n            h = self.fc(x)\n            x = F.relu(h)\n        return x\n"),
        ("ML003", "net = nn.Sequential(OrderedDict([('fc', nn.Linear(3, 3)), ('act', nn.ReLU())]))\n"),
        ("ML004", "class N:\n    def forward(self, x):\n        a = self.l1(x)\n        b = self.l2(a)\n        c = self.l3(b)\n        return c\n"),
        # a step of the chain may be arithmetic (`b = 1 - a`)
        ("ML004", "class N:\n    def forward(self, x):\n        a = torch.pow(x, 2)\n        b = 1 - a\n        c = torch.sqrt(b)\n        return c\n"),
        ("ML005", "import torch.nn as nn\nfc = nn.Linear(512 * 7 * 7, 4096)\n"),
        ("ML005", "from torch.nn import Linear as L\nC = 512\nfc = L(in_features=C * 49, out_features=C)\n"),
        ("ML005", "def head(c=512, n=1000):\n    k = c * 7\n    return nn.Linear(k * 7, int(n))\n"),
        ("ML007", "from torch.utils.checkpoint import checkpoint as ckpt\ny = ckpt(layer, x)\n"),
        ("ML007", "import torch.utils.checkpoint\ny = torch.utils.checkpoint(layer, x)\n"),
        ("ML013", "x = torch.zeros(3).to(device)\n"),
        ("ML013", "from torch import ones as o\nx = o(3).cuda()\n"),
        ("ML014", "for batch in test_loader:\n    outs.append(model(batch))\ny = x.to('cuda')\n"),
    ],
)
def test_a_screen_lets_through_what_its_rule_looks_at(code, snippet):
    assert not _screened(code, snippet)


@pytest.mark.parametrize(
    ("code", "snippet"),
    [
        ("ML001", "class N:\n    def forward(self, x):\n        outs = []\n        for b in self.blocks:\n            outs.append(b(x))\n"),
        ("ML001", "def f(xs):\n    total = 0\n    total += 1\n"),
        ("ML001", "def run(xs):\n    out = []\n    while xs:\n        out.append(xs.pop().item())\n"),
        ("ML001", "class Block: ...\nclass Net:\n    def __init__(self, n):\n        self.blocks = []\n        for i in range(n):\n            self.blocks.append(Block(i))\n"),
        ("ML001", "from PIL import Image\ndef load(paths):\n    images = []\n    for p in paths:\n        images.append(Image.open(p))\n"),
        ("ML002", "def train(model, loader):\n    for x in train_loader:\n        model(x).backward()\n"),
        ("ML003", "class N:\n    def forward(self, x):\n        h = self.bn(x)\n        y = self.other(x)\n        return F.relu(h)\n"),
        # default set: a functional activation where gradients stay on (with torch.no_grad() elsewhere in the file)
        ("ML003", "import torch\nclass N:\n    def __init__(self):\n        self.fc = nn.Linear(3, 3)\n    def forward(self, x):\n        return F.relu(self.fc(x))\nwith torch.no_grad():\n    y = N()(x)\n"),
        ("ML003", "class N:\n    def forward(self, x):\n        x = self.act(self.fc(x))\n        return self.dropout(x)\n"),
        ("ML003", "net = nn.Sequential(nn.Linear(3, 3), nn.GELU(), nn.Dropout(0.1))\n"),
        ("ML004", "class N:\n    def forward(self, x):\n        x = self.l1(x)\n        x = self.l2(x)\n        return x\n"),
        ("ML004", "class N:\n    def forward(self, x):\n        a = self.l1(x)\n        b = a.view(-1)\n        c = self.l3(b)\n        return c\n"),
        ("ML005", "fc = nn.Linear(config.hidden_size, config.vocab_size)\n"),
        # sizes that are parameters without a number: `None` defaults, names defined through themselves
        ("ML005", "def build(c_in, hidden=None):\n    hidden = hidden or c_in\n    hidden = hidden // 2\n    return nn.Linear(c_in, hidden)\n"),
        ("ML004", "class N:\n    def forward(self, x):\n        a = self.l1(x)\n        b = self.l2(a)\n        c = self.l3(b)\n        return c + b\n"),
        ("ML007", "state = torch.load(args.checkpoint)\n"),
        ("ML013", "x = torch.zeros(3, device=device).to(dtype)\n"),
        ("ML014", "for x in range(3):\n    outs.append(x)\ny = x.to('cuda')\n"),
        ("ML006", "opt = torch.optim.Adam(model.parameters())\n"),  # no gpu-memory budget configured
        ("ML016", "with torch.autocast('cuda'):\n    y = model(x)\n"),
    ],
)
def test_a_screen_clears_what_its_rule_cannot_report(code, snippet):
    assert _screened(code, snippet)


def test_the_budget_option_reopens_the_optimizer_screen():
    snippet = "opt = torch.optim.Adam(model.parameters())\n"
    assert not _screened("ML006", snippet, {"gpu-memory": 1 << 30})


def test_the_chain_length_option_is_respected():
    snippet = "class N:\n    def forward(self, x):\n        a = self.l1(x)\n        b = self.l2(a)\n        return b\n"
    assert _screened("ML004", snippet, {"min-retained-chain": 3})
    assert not _screened("ML004", snippet, {"min-retained-chain": 2})


def test_a_rule_without_a_screen_always_runs():
    assert not _screened("ML899", "import torch\n")


def test_code_cpython_cannot_compile_goes_to_the_full_analysis_and_reports_ml000():
    text = "import torch\ndef f(:\n"
    assert Source(text).tree is None
    (finding,) = lint_text(text, "broken.py", Settings(enabled=DEFAULT_CODES))
    assert finding.code == "ML000"


def test_identifiers_that_python_normalises_skip_the_structural_screens():
    # CPython reads `ｘ` as `x`; libcst keeps it as written.  Such a file is not judged by its AST.
    text = "import torch\nclass N:\n    def forward(self, ｘ):\n        return x\n"
    source = Source(text)
    assert source.tree is not None and not source.structure_is_reliable
    assert needs_analysis(source, frozenset({"ML004"}), {})
    # The trigger words are matched as written, as libcst's names are: `ｆorward` is not ML004's `forward`.
    text = "import torch\nclass N:\n    def ｆorward(self, x):\n        return x\n"
    assert not needs_analysis(Source(text), frozenset({"ML004"}), {})


def test_a_parameter_named_like_a_function_of_the_file_may_hold_a_model():
    """`def net(X)` at module level does not make `net` in `def evaluate_accuracy(data_iter, net)`
    that function: ML002 reports the parameter's call (the d2l notebooks), so its screen must hold."""
    snippet = """
        import torch

        def net(X):
            return torch.softmax(X, dim=1)

        def evaluate_accuracy(data_iter, net):
            acc_sum = 0.0
            for X, y in data_iter:
                acc_sum += (net(X).argmax(dim=1) == y).float().sum().item()
            return acc_sum
    """
    assert not _screened("ML002", snippet)
    found = lint_text(textwrap.dedent(snippet), "evaluate.py", Settings(enabled=frozenset({"ML002"})))
    assert [d.code for d in found] == ["ML002"]


def test_the_analysis_runs_only_the_rules_whose_screens_hold():
    """A file one rule's screen lets through is analysed with that rule alone: the others cannot report."""
    source = Source(textwrap.dedent(MODEL_CODE))
    assert screened_codes(source, DEFAULT_CODES, {}) == frozenset()
    text = "import torch\nfor x in loader:\n    buffer = torch.zeros(1024).cuda()\n"
    assert screened_codes(Source(text), DEFAULT_CODES, {}) == {"ML013"}
    assert mentioned_codes(Source(text), DEFAULT_CODES) >= {"ML013", "ML001"}
