"""Progress of long `confirm` and `estimate` runs on a terminal, nothing on a pipe (issue 28); and
`confirm`'s measured children run the memlint the command runs, whatever the working directory
holds."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "ml001_train_loop.py"
REFERENCE = ROOT / "bench" / "estimate_reference.py"


def _run_with_terminal_stderr(args: list, cwd: Path) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (what a person watching sees), stdout on a pipe."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(args, cwd=cwd, stdout=subprocess.PIPE, stderr=follower, env=dict(os.environ, OMP_NUM_THREADS="1"))
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed its end
            break
        if not chunk:
            break
        chunks.append(chunk)
    stdout = process.stdout.read().decode()
    process.wait(timeout=300)
    os.close(leader)
    return process.returncode, stdout, b"".join(chunks).decode(errors="replace")


def _memlint() -> str:
    found = Path(sys.executable).parent / "memlint"
    return str(found) if found.exists() else shutil.which("memlint")


def test_confirm_shows_progress_per_fixture_on_a_terminal_only(tmp_path):
    code, stdout, stderr = _run_with_terminal_stderr([sys.executable, "-m", "memlint", "confirm", str(FIXTURE)], tmp_path)
    assert code == 0, stderr
    assert "[1/1] " in stderr and "measuring as written" in stderr and "measuring after memlint's fixes" in stderr
    assert "measuring" not in stdout
    piped = subprocess.run([sys.executable, "-m", "memlint", "confirm", str(FIXTURE)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == ""


def test_estimate_shows_its_stages_on_a_terminal_only(tmp_path):
    args = ["estimate", f"{REFERENCE}:mlp", "--input-shape", "16,256"]
    code, stdout, stderr = _run_with_terminal_stderr([sys.executable, "-m", "memlint", *args], tmp_path)
    assert code == 0, stderr
    assert "simulating one training step" in stderr and "what if: SGD with momentum" in stderr
    assert "simulating" not in stdout
    piped = subprocess.run([sys.executable, "-m", "memlint", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert piped.returncode == 0 and piped.stderr == ""
    code, stdout, stderr = _run_with_terminal_stderr([sys.executable, "-m", "memlint", *args, "--output-format", "json"], tmp_path)
    assert code == 0 and "simulating" not in stderr


def test_confirm_children_import_the_running_memlint_not_one_in_the_working_directory(tmp_path):
    # As from a checkout after `pip install .`: the working directory holds another `memlint/`.
    # The command's own import finds the installed one (a console script does not put the working
    # directory on sys.path); the measured children imported the stray one and failed.
    (tmp_path / "memlint").mkdir()
    (tmp_path / "memlint" / "__init__.py").write_text("")
    shutil.copy(FIXTURE, tmp_path / FIXTURE.name)
    done = subprocess.run([_memlint(), "confirm", FIXTURE.name], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ML001" in done.stdout and "Error" not in done.stdout + done.stderr
