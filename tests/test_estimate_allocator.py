"""`memlint estimate` against the CPU allocator (issue 28): torch.profiler's memory events over real
steps with no dispatch mode active (bench/estimate_reference.py), the reference that can see what a
dispatch mode changes in the kernels themselves. Each estimate runs as users call it, in a
subprocess, at one thread (oneDNN's scratch depends on the thread count)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

REFERENCE = Path(__file__).resolve().parent.parent / "bench" / "estimate_reference.py"
_namespace: dict = {"__name__": "reference"}
exec(compile(REFERENCE.read_text(), str(REFERENCE), "exec"), _namespace)
real_peak = _namespace["real_peak"]


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def estimate(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "memlint", "estimate", *args], capture_output=True, text=True, env=env, timeout=300)
    if check:
        assert done.returncode in (0, 1), done.stderr
    return done


def estimate_json(*args: str) -> dict:
    return json.loads(estimate(*args, "--no-what-if", "--output-format", "json").stdout)


def test_linear_on_a_transposed_input_allocates_what_eager_allocates():
    # Under any dispatch mode aten::linear adds the bias out of place (a second 16 MiB output);
    # eager adds it in place. Before: 42,995,712 B estimated against 27,271,176 B real.
    data = estimate_json(f"{REFERENCE}:TransposedLinear", "--input-shape", "64,64,256", "--optimizer", "sgd")
    real = real_peak(_namespace["TransposedLinear"], [(64, 64, 256)], "sgd")
    assert data["peak_bytes"] == real == 27_271_176


def test_gru_language_model_with_a_head_on_the_batch_first_output():
    data = estimate_json(
        f"{REFERENCE}:GRULanguageModel", "--input-shape", "8,64", "--input-dtype", "int64", "--vocab-size", "1000"
    )  # fmt: skip
    real = real_peak(_namespace["GRULanguageModel"], [(8, 64)], "adam", dtypes=["int64"], vocabulary=1000)
    assert data["peak_bytes"] == real
