"""`memlint estimate --plot FILE` (issue 28): live memory through the simulated step by kind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("matplotlib")

from memlint.estimate.simulate import StepConfig, simulate  # noqa: E402

REFERENCE = Path(__file__).resolve().parent.parent / "bench" / "estimate_reference.py"


def _factory(name: str):
    namespace: dict = {"__name__": "reference"}
    exec(compile(REFERENCE.read_text(), str(REFERENCE), "exec"), namespace)
    return namespace[name]


def test_the_timeline_adds_up_to_the_peak_and_splits_it_by_kind():
    estimate = simulate(_factory("mlp"), StepConfig(((64, 256),), optimizer="adam"), timeline=True)
    kinds, peak_at = estimate.timeline["kinds"], estimate.timeline["peak_index"]
    assert sum(values[peak_at] for values in kinds.values()) == estimate.peak_bytes
    assert max(kinds["gradients"]) > 0 and max(kinds["optimizer_state"]) > 0 and max(kinds["activations"]) > 0
    assert kinds["parameters"][0] == estimate.breakdown["parameters"]  # resident from the start
    phases = [phase for _, phase in estimate.timeline["phases"]]
    assert phases[:5] == ["model and optimizer state", "forward pass", "backward pass", "optimizer step", "zero_grad"]


def test_estimate_plot_writes_a_png_and_says_where(tmp_path):
    target = tmp_path / "plots" / "step.png"
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "estimate", f"{REFERENCE}:mlp", "--input-shape", "64,256", "--no-what-if",
         "--gpu-memory", "64MiB", "--reserve", "8MiB", "--plot", str(target)],
        capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"memlint: wrote {target}" in done.stderr
    assert "wrote" not in done.stdout  # the report itself is unchanged


def test_estimate_plot_is_not_written_through_a_symlink(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    target = tmp_path / "step.png"
    target.symlink_to(victim)  # as a repository could plant it where the CI job writes its plot
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "estimate", f"{REFERENCE}:mlp", "--input-shape", "64,256", "--no-what-if",
         "--plot", str(target)],
        capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"), timeout=300,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert f"memlint: error: {target}: plot not written: it is a symbolic link" in done.stderr
    assert victim.read_text() == "precious\n"
