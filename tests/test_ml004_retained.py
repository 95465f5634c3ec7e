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
    ("h = self.fc1(x)\ns = h * 0.5\ny = self.fc2(s)\nreturn self.fc3(y)\n", ["h"]),  # arithmetic is a step too
    # `*` by a tensor keeps both operands; the same arithmetic of a number (`int(...)`) holds no tensor
    ("h = self.fc1(x)\ns = h * x\ny = self.fc2(s)\nreturn self.fc3(y)\n", []),
    ("n = int(x.sum())\nm = n + 1\nk = m * 2\nreturn self.fc3(x)[:k]\n", []),
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
    ],
)
def test_decorators_that_turn_gradients_off(tmp_path, decorator, reported):
    # Linear layers keep their inputs: with gradients on nothing is reported, without all is.
    source = MLP_INIT + (
        f"    {decorator}\n"
        "    def forward(self, x):\n"
        "        a = self.fc1(x)\n        b = self.fc2(a)\n        c = self.fc3(b)\n        return self.fc3(c)\n"
    )
    findings = _check(tmp_path, source)
    assert bool(findings) == reported
    if reported:
        assert "`a`, `b`" in findings[0]["message"]


def test_only_forward_is_looked_at(tmp_path):
    # A no-grad `generate` juggles index tensors; a Lightning evaluation hook calls the model.
    source = (
        "import torch\nimport lightning as L\n"
        "class Model(L.LightningModule):\n"
        "    @torch.no_grad()\n"
        "    def generate(self, ids):\n"
        "        starts = torch.where(ids == 1, 1, 0)\n        previous = torch.cummax(starts, -1).values\n"
        "        roles = ids.gather(1, previous)\n        return self.decode(roles)\n"
        "    def validation_step(self, batch, batch_idx):\n"
        "        feats = self.encoder(batch)\n        z = self.proj(feats)\n        logits = self.head(z)\n"
        "        self.log('val', logits.mean())\n"
    )
    assert _check(tmp_path, source) == []


def test_no_grad_block_in_forward(tmp_path):
    source = MLP_INIT + (
        "    def forward(self, x):\n"
        "        with torch.no_grad():\n"
        "            f = self.fc1(x)\n            g = self.fc2(f)\n            h = self.fc3(g)\n"
        "            targets = h.softmax(-1)\n"
        "        return self.block(x), targets\n"
    )
    (finding,) = _check(tmp_path, source)
    assert finding["location"]["row"] == 17
    assert "inside a `with` block" in finding["message"] and "`f`, `g`" in finding["message"]


def test_a_full_size_square_read_by_a_reduction_is_reported_the_small_statistic_is_not(tmp_path):
    # gemma3n's cumulative group norm: `(x - mean).pow(2)` keeps its input, `torch.sum` keeps nothing,
    # so the full-size square is held by its name alone; the per-step sums that follow are small.
    source = MLP_INIT + (
        "    def forward(self, x):\n"
        "        mean = x.mean(-1, keepdim=True)\n"
        "        squared = (x - mean).pow(2)\n"
        "        sums = torch.sum(squared, dim=-1, keepdim=True)\n"
        "        running = torch.cumsum(sums, dim=1)\n"
        "        variance = running / 64\n"
        "        return (x - mean) * torch.rsqrt(variance + 1e-5)\n"
    )
    (finding,) = _check(tmp_path, source)
    assert "`forward` keeps `squared` alive" in finding["message"]
    assert "`sums`" not in finding["message"].split(" though ")[0]
