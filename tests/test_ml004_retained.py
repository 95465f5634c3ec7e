"""ML004 reports a name that holds an activation after its last use only where that costs memory:
without gradient tracking, or under autograd when neither the op that made the tensor nor the op
that read it keeps it.  Its fix is unsafe and deletes the names; it never renames them."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from integration_helpers import memlint

MLP_INIT = """
import torch
import torch.nn.functional as F
from torch import nn
class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 256)
        self.fc2 = nn.Linear(256, 64)
        self.fc3 = nn.Linear(64, 10)
        self.drop = nn.Dropout(0.1)
        self.act = nn.ReLU()
        self.act_inplace = nn.ReLU(inplace=True)
        self.gelu = nn.GELU()
        self.block = Block()
"""


def _forward(body: str) -> str:
    return MLP_INIT + "    def forward(self, x):\n" + textwrap.indent(textwrap.dedent(body), " " * 8)


def _check(tmp_path: Path, source: str, *options: str) -> list[dict]:
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    result = memlint("check", "--select", "ML004", "--output-format", "json", *options, "m.py", cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


# Under autograd: (forward body, names reported)
AUTOGRAD = [
    # Linear -> ReLU module: neither keeps `h`
    ("h = self.fc1(x)\na = self.act(h)\ny = self.fc2(a)\nreturn self.fc3(y)\n", ["h"]),
    # Linear -> dropout keeps only its mask; `d` then goes to a Linear, which keeps it
    ("h = self.fc1(x)\nd = self.drop(h)\ny = self.fc2(d)\nreturn self.fc3(y)\n", ["h"]),
    # Linear -> scaling by a number keeps nothing; `s` goes to a Linear
    ("h = self.fc1(x)\ns = h * 0.5\ny = self.fc2(s)\nreturn self.fc3(y)\n", []),  # `s = h * 0.5` is no call: not a step
    ("h = self.fc1(x)\ns = F.dropout(h, 0.1, self.training)\ny = self.fc2(s)\nreturn self.fc3(y)\n", ["h"]),
    # `h.relu()` as a method
    ("h = self.fc1(x)\na = h.relu()\ny = self.fc2(a)\nreturn self.fc3(y)\n", ["h"]),
    # GELU keeps its input: nothing to report
    ("h = self.fc1(x)\na = self.gelu(h)\ny = self.fc2(a)\nreturn self.fc3(y)\n", []),
    # in-place ReLU: the output is the input
    ("h = self.fc1(x)\na = self.act_inplace(h)\ny = self.fc2(a)\nreturn self.fc3(y)\n", []),
    ("h = self.fc1(x)\na = F.relu(h, inplace=True)\ny = self.fc2(a)\nreturn self.fc3(y)\n", []),
    # a block of the project's own makes `h`: unknown, silent
    ("h = self.block(x)\na = self.act(h)\ny = self.fc2(a)\nreturn self.fc3(y)\n", []),
    # every layer keeps its input: the classic named chain is silent under autograd
    ("h = self.fc1(x)\ny = self.fc2(h)\nz = self.fc3(y)\nreturn z\n", []),
]


@pytest.mark.parametrize("body, names", AUTOGRAD)
def test_forward_under_autograd_reports_only_tensors_autograd_does_not_keep(tmp_path, body, names):
    findings = _check(tmp_path, _forward(body))
    if not names:
        assert findings == []
        return
    (finding,) = findings
    for name in names:
        assert f"`forward` keeps `{name}` alive" in finding["message"]


def test_readable_names_are_never_renamed(tmp_path):
    # The false positive of issue 13: the safe fix renamed `hidden` and `pooled` into `input_ids`.
    source = _forward("hidden = self.fc1(x)\npooled = self.fc2(hidden)\nlogits = self.fc3(pooled)\nreturn logits\n")
    assert _check(tmp_path, source, "--unsafe-fixes") == []
    inference = source.replace("    def forward(self, x):", "    @torch.no_grad()\n    def forward(self, x):")
    (finding,) = _check(tmp_path, inference, "--unsafe-fixes")
    assert finding["fix"]["applicability"] == "unsafe"
    fixed = memlint("check", "--select", "ML004", "--fix", "--unsafe-fixes", "m.py", cwd=tmp_path)
    assert fixed.returncode in (0, 1), fixed.stderr
    text = (tmp_path / "m.py").read_text(encoding="utf-8")
    ast.parse(text)
    assert "input_ids" not in text and "x = self.fc1(x)" not in text
    assert "        pooled = self.fc2(hidden)\n        del hidden\n        logits = self.fc3(pooled)\n" in text
    assert _check(tmp_path, text) == []  # fixed: nothing left to report


def test_safe_fixes_leave_the_file_alone(tmp_path):
    source = _forward("h = self.fc1(x)\na = self.act(h)\ny = self.fc2(a)\nreturn self.fc3(y)\n")
    (tmp_path / "m.py").write_text(source, encoding="utf-8")
    memlint("check", "--select", "ML004", "--fix", "m.py", cwd=tmp_path)
    assert (tmp_path / "m.py").read_text(encoding="utf-8") == source


@pytest.mark.parametrize(
    "decorator, reported",
    [
        ("@torch.no_grad()", True),
        ("@torch.inference_mode()", True),
        ("@torch.enable_grad()", False),
        ("@staticmethod", False),
    ],
)
def test_decorators_that_turn_gradients_off(tmp_path, decorator, reported):
    source = (
        "import torch\n"
        f"{decorator}\n"
        "def predict(model, x):\n"
        "    a = model.l1(x)\n    b = model.l2(a)\n    c = model.l3(b)\n    return model.l4(c)\n"
    )
    findings = _check(tmp_path, source)
    assert bool(findings) == reported
    if reported:
        assert "`a`, `b`" in findings[0]["message"]


def test_lightning_evaluation_hook_and_no_grad_block(tmp_path):
    source = (
        "import torch\nimport lightning as L\n"
        "class Model(L.LightningModule):\n"
        "    def validation_step(self, batch, batch_idx):\n"
        "        feats = self.encoder(batch)\n        z = self.proj(feats)\n        logits = self.head(z)\n"
        "        self.log('val', logits.mean())\n"
        "def teacher_targets(teacher, images):\n"
        "    with torch.no_grad():\n"
        "        f = teacher.stem(images)\n        g = teacher.body(f)\n        h = teacher.head(g)\n"
        "        targets = h.softmax(-1)\n"
        "    return targets\n"
    )
    findings = _check(tmp_path, source)
    messages = {f["location"]["row"]: f["message"] for f in findings}
    assert "a Lightning evaluation hook" in messages[4] and "`feats`, `z`" in messages[4]
    assert "inside a `with` block" in messages[10] and "`f`, `g`" in messages[10]
