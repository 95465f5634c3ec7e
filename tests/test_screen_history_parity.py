"""The screens' history analysis (memlint/prescreen/history.py, on CPython's AST) follows the
analysis it stands in for (memlint/analysis/values.py and evaluation.is_model_call, on libcst's
tree): wherever the analysis says a value carries autograd history, `History.possible` must say it
may; wherever it says a call runs a model, `History.may_run_model` must say it may.  Otherwise
ML001's and ML002's screens could clear a file their rules report in.

The analysis is asked during a real traversal (its answers depend on the bindings in scope) about
every assigned value, every `+=` / `-=` value, every `.append` / `.extend` argument and every call,
in every rule example, every fixture and the snippets below.
"""

from __future__ import annotations

import ast
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from memlint.analysis.context import Context
from memlint.analysis.evaluation import is_model_call
from memlint.pipeline.registry import all_rules
from memlint.pipeline.traversal import Traversal
from memlint.pipeline.tree import parse_module
from memlint.prescreen.history import History
from memlint.prescreen.source import Source
from memlint.rule import Rule
from memlint.testing import source_of

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

SNIPPETS = [
    # sources of history: models, `self(...)`, losses, torch operations on them, fields, indexing
    "import torch\nimport torch.nn.functional as F\nmodel = torch.nn.Linear(2, 2)\nfor x, y in loader:\n"
    "    out = model(x)\n    loss = F.cross_entropy(out, y)\n    total = 0\n    total += loss\n    logits = out[0]\n"
    "    both = torch.cat([out, out])\n    scaled = loss * 2\n    field = out.logits\n    losses.append(loss)\n",
    "import torch\nclass Net(torch.nn.Module):\n    def step(self, x):\n        y = self(x)\n        z = self.head(y)\n"
    "        self.cache = z\n        w = self.cache\n        return w\n",
    "import torch\ncriterion = torch.nn.CrossEntropyLoss()\nfor x, y in loader:\n    loss = criterion(net(x), y)\n"
    "    value = loss.item()\n    kept = loss.detach()\n    data = loss.data\n    number = float(loss)\n    running = 0.0\n    running += loss\n",
    # aliases, imports from torch and from elsewhere, the file's own functions and classes
    "import torch as t\nfrom torch.nn import functional as fn\nfrom mylib import helper\nimport numpy as np\n"
    "def build():\n    return t.nn.Linear(1, 1)\nclass Box: ...\nm = build()\nfor x in batches:\n"
    "    a = helper(x)\n    b = np.mean(x)\n    c = fn.mse_loss(m(x), x)\n    d = Box()\n    e = t.relu(m(x))\n"
    "    f = c if x else e\n    g = -c\n    h = (c, e)\n    i = [c for _ in range(2)]\n",
    # grad modes, unpacking, walrus, with-targets, comprehensions, lambdas, strings
    "import torch\nwith torch.no_grad():\n    quiet = model(x)\nfor (u, v) in pairs:\n    a, b = model(u), v\n"
    "    (c := model(v))\n    with torch.enable_grad():\n        d = model(u) + 1\n    e = lambda: model(u)\n    f = f'{model(u)}'\n"
    "    g = {k: model(k) for k in u}\n    h = model.forward(u)\n    i = trainer.model(u)\n    j = encoder(u)\n",
    # rebinding: a name that only ever receives its own value, a name bound by import and value
    "import torch\nx = 0\nfor batch in loader:\n    x = x + 1\n    y = compute(batch)\n    y = y * 2\n"
    "    z = model(batch)\n    z = z.mean()\n    del y\n    try:\n        w = model(batch)\n    except ValueError as err:\n"
    "        w = err\n    total_loss += w\n",
]


class _Probe(Rule):
    """Records the analysis's answers at the places the screens ask about."""

    code = "XP998"
    name = "history-probe"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.values: list[tuple[cst.CSTNode, bool]] = []  # (expression, does it carry history)
        self.calls: list[tuple[cst.Call, bool]] = []  # (call, does it run a model)

    def _value(self, expr: cst.BaseExpression) -> None:
        self.values.append((expr, self.ctx.holds_graph(expr) is True))

    def visit_Assign(self, node: cst.Assign) -> None:
        self._value(node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._value(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append((node, is_model_call(node, self.ctx)))
        if isinstance(node.func, cst.Attribute) and node.func.attr.value in ("append", "extend") and len(node.args) == 1:
            self._value(node.args[0].value)


def _disagreements(text: str) -> tuple[list[str], int]:
    """Where history.py says "certainly not" and the analysis says "yes", and at how many places
    the analysis said "yes"."""
    module = parse_module(text)
    probe = _Probe(Context(module), [], {})
    Traversal(probe.ctx, [probe]).walk(module)
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    source = Source(text)
    if source.tree is None:
        return [], 0  # CPython refuses it (a bad `\N{...}` escape libcst accepts): no screen has a tree to read
    by_span = {}
    for node in ast.walk(source.tree):
        if isinstance(node, ast.expr):
            by_span.setdefault((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset), node)
    history = History(source)
    lines = text.splitlines()
    found, compared = [], 0
    for records, ask, says in ((probe.values, history.possible, "carries history"), (probe.calls, history.may_run_model, "runs a model")):
        for node, analysis in records:
            span = positions[node]
            start, end = span.start, span.end
            key = (start.line, _bytes(lines, start.line, start.column), end.line, _bytes(lines, end.line, end.column))
            twin = by_span.get(key)
            if twin is None:
                continue  # parenthesised (libcst counts the brackets, CPython does not): not compared
            compared += analysis
            if analysis and not ask(twin):
                found.append(f"line {start.line}: `{ast.unparse(twin)}` {says} for the analysis, not for history.py")
    return found, compared


def _bytes(lines: list[str], line: int, column: int) -> int:
    """CPython counts columns in UTF-8 bytes, libcst in characters."""
    return len(lines[line - 1][:column].encode("utf-8")) if line <= len(lines) else column


def _texts():
    for rule in all_rules():
        for kind, examples in (("valid", rule.VALID), ("invalid", rule.INVALID)):
            for index, example in enumerate(examples):
                yield f"{rule.code}-{kind}-{index}", source_of(example)
    for path in sorted(FIXTURES.glob("*.py")):
        yield path.name, path.read_text(encoding="utf-8")
    for index, snippet in enumerate(SNIPPETS):
        yield f"snippet-{index}", snippet


TEXTS = list(_texts())


@pytest.mark.parametrize(("name", "text"), TEXTS, ids=[name for name, _ in TEXTS])
def test_history_py_allows_history_wherever_the_analysis_finds_it(name, text):
    found, _ = _disagreements(text)
    assert not found, "\n".join(found)


def test_the_comparison_covers_many_places_and_can_fail(monkeypatch):
    compared = sum(_disagreements(text)[1] for _, text in TEXTS)
    assert compared > 200, compared  # values with history and model calls, as the analysis sees them
    monkeypatch.setattr(History, "possible", lambda self, expr: False)
    found, _ = _disagreements(SNIPPETS[0])
    assert "line 5: `model(x)` carries history for the analysis, not for history.py" in found
