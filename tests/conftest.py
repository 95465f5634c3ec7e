from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory (with its own pyproject.toml) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, source: str, **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), **kwargs)
    return path


def invoke(*args: str, input: str | None = None):
    """Run the CLI in-process as a user would type it."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def memlint_subprocess(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "memlint", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120, **kwargs
    )


EVAL_LOOP = """
import torch

total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss
print(total)
"""
