"""Shared bits for the integration tests: run the CLI as users do, and a source with findings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# Two ML001 findings with safe fixes: one spanning three lines, one after non-ASCII text on its line.
SOURCE_WITH_FINDINGS = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.MSELoss()
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += (
        loss
    )
print(total)
for x, y in loader:
    loss = criterion(model(x), y); tötal = 0; total += loss
print(total)
"""


def memlint(*args: str, cwd: Path, input: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run the CLI as a user would. `check` and `review` are pinned to ML001 (unless the test selects
    rules itself): these tests are about the integrations, and new rules must not move their findings."""
    if args and args[0] in ("check", "review") and not any(a.startswith("--select") for a in args):
        args = (args[0], "--select", "ML001", *args[1:])
    environment = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "memlint", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=environment,
        timeout=120,
    )


def apply_line_edits(text: str, edits: list[tuple[int, int, int, int, str]]) -> str:
    """Apply (start_row, start_col, end_row, end_col, content) edits, 1-based end-exclusive character
    columns, as an editor would."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans = sorted(((starts[sr - 1] + sc - 1, starts[er - 1] + ec - 1, content) for sr, sc, er, ec, content in edits), reverse=True)
    for start, end, content in spans:
        text = text[:start] + content + text[end:]
    return text
