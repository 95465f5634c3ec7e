"""ML003's screen lets through the files its newer facts report (a final review found two it skipped):
a stage a method of the class builds (`self.layer3 = self._make_layer(...)`) and a layer kept under
a key (`self.convs["a"] = nn.Conv2d(...)`).  Run as users run it: the CLI, screens on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

STAGE = '''
import torch.nn.functional as F
from torch import nn
class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv = nn.Conv2d(c, c, 3, padding=1)
    def forward(self, x):
        return self.conv(x) + x
class Net(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.c_in = nn.Conv2d(3, c, 3)
        self.layer3 = self._make_layer(c, n)
    def forward(self, x):
        h = self.c_in(x)
        h = self.layer3(h)
        y = F.relu(h)
        return y
    def _make_layer(self, c, n):
        layers = []
        for _ in range(n):
            layers.append(Block(c))
        return nn.Sequential(*layers)
'''

KEYED = '''
from collections import OrderedDict
import torch.nn.functional as F
from torch import nn
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.convs = OrderedDict()
        self.convs["a"] = nn.Conv2d(3, 3, 3)
    def forward(self, x, y):
        return F.relu(self.convs["a"](x)) + y
'''


def _check(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--select", "ML003", "--no-cache", "--output-format", "concise", str(path)],
        capture_output=True, text=True, check=False,
    )
    return done.stdout + done.stderr


def test_a_stage_built_by_a_method_is_screened_in(tmp_path: Path) -> None:
    out = _check(tmp_path, "stage.py", STAGE)
    assert "stage.py:18:" in out and "ML003" in out, out


def test_a_layer_kept_under_a_key_is_screened_in(tmp_path: Path) -> None:
    out = _check(tmp_path, "keyed.py", KEYED)
    assert "keyed.py:11:" in out and "ML003" in out, out
