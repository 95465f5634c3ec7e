"""`memlint estimate`: fake-tensor simulation against real CPU runs, and the command as users call it."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

torch = pytest.importorskip("torch")

from memlint.estimate.simulate import StepConfig, simulate  # noqa: E402

# Reference models and the independent real-run measurement, shared with bench/estimate_accuracy.py.
REFERENCE = Path(__file__).resolve().parent.parent / "bench" / "estimate_reference.py"
CASES = {"mlp": ((128, 256),), "cnn": ((16, 3, 32, 32),), "Encoder": ((8, 64, 128),)}


@pytest.fixture(scope="module")
def models() -> Path:
    return REFERENCE


def _load(path: Path, name: str):
    namespace: dict = {"__name__": "reference"}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace[name]


_real_peak = _load(REFERENCE, "real_peak")


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("optimizer", ["adam", "sgd-momentum"])
def test_estimate_is_within_ten_percent_of_a_real_cpu_run(models, name, optimizer):
    factory = _load(models, name)
    estimate = simulate(factory, StepConfig(CASES[name], optimizer=optimizer))
    real = _real_peak(factory, CASES[name], optimizer, loop=True)
    assert abs(estimate.peak_bytes - real) <= 0.10 * real, (estimate.peak_bytes, real)
    assert sum(estimate.breakdown.values()) == estimate.peak_bytes
    params = sum(p.numel() for p in factory().parameters())
    assert estimate.params == params
    assert estimate.breakdown["parameters"] >= 4 * params


def test_breakdown_names_optimizer_state_and_gradients(models):
    factory = _load(models, "mlp")
    params = sum(p.numel() for p in factory().parameters())
    adam = simulate(factory, StepConfig(CASES["mlp"], optimizer="adam"))
    sgd = simulate(factory, StepConfig(CASES["mlp"], optimizer="sgd"))
    tensors = len(list(factory().parameters()))
    # exp_avg + exp_avg_sq in fp32, and a 4-byte step counter per parameter tensor
    assert adam.breakdown["optimizer_state"] == 8 * params + 4 * tensors
    assert sgd.breakdown["optimizer_state"] == 0
    assert adam.breakdown["gradients"] == 4 * params


def test_state_of_the_simulated_8bit_adamw_and_adafactor(models):
    factory = _load(models, "mlp")
    shapes = [p.shape for p in factory().parameters()]

    def eight_bit(shape):
        n = shape.numel()
        return 2 * n + 2 * 4 * -(-n // 2048) if n >= 4096 else 8 * n

    def adafactor(shape):
        return 4 * (shape[:-1].numel() + (shape[:-2] + shape[-1:]).numel()) if len(shape) >= 2 else 4 * shape.numel()

    for name, per_tensor in (("adamw-8bit", eight_bit), ("adafactor", adafactor)):
        estimate = simulate(factory, StepConfig(CASES["mlp"], optimizer=name))
        assert estimate.breakdown["optimizer_state"] == sum(per_tensor(shape) for shape in shapes), name


def _estimate(*args: str):
    return CliRunner().invoke(main, ["estimate", *args])


def test_cli_json_has_the_documented_keys_and_ranks_what_ifs(models):
    result = _estimate(f"{models}:Encoder", "--input-shape", "8,64,128", "--gpu-memory", "1GiB", "--output-format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert {"params", "peak_bytes", "fits", "breakdown", "what_if"} <= set(data)
    assert data["fits"] is True
    assert set(data["breakdown"]) == {"parameters", "gradients", "optimizer_state", "activations", "temporaries"}
    changes = {row["change"]: row for row in data["what_if"]}
    assert {"SGD with momentum", "Adafactor", "8-bit AdamW", "bf16 autocast"} <= set(changes)
    peaks = [row["peak_bytes"] for row in data["what_if"] if row["peak_bytes"] is not None]
    assert peaks == sorted(peaks)
    assert changes["SGD with momentum"]["peak_bytes"] < data["peak_bytes"]
    checkpointed = changes["gradient checkpointing of every repeated block"]
    assert checkpointed["peak_bytes"] < data["peak_bytes"]
    assert checkpointed["note"] == "checkpoints 2 TransformerEncoderLayer"


def test_cli_text_reports_a_budget_that_does_not_fit(models):
    result = _estimate(f"{models}:mlp", "--input-shape", "128,256", "--gpu-memory", "10MiB", "--no-what-if")
    assert result.exit_code == 1
    assert "does NOT fit in 10.0 MiB" in result.output
    assert "optimizer state" in result.output


def test_cli_custom_loss_and_int_inputs(models, tmp_path):
    source = """
    from torch import nn


    def embedder():
        return nn.Sequential(nn.Embedding(1000, 64), nn.Linear(64, 64))
    """
    path = tmp_path / "emb.py"
    path.write_text(textwrap.dedent(source))
    result = _estimate(
        f"{path}:embedder", "--input-shape", "4,32", "--input-dtype", "int64", "--vocab-size", "1000",
        "--loss", f"{models}:first_logit", "--optimizer", "sgd", "--no-what-if", "--output-format", "json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["params"] == 1000 * 64 + 64 * 64 + 64


@pytest.mark.parametrize(
    "args, message",
    [
        (["nope.py:f", "--input-shape", "1,2"], "no such file"),
        (["{models}", "--input-shape", "1,2"], "expected PATH.py:FACTORY"),
        (["{models}:missing", "--input-shape", "1,2"], "defines no 'missing'"),
        (["{models}:mlp", "--input-shape", "1,x"], "comma-separated integers"),
        (["{models}:mlp", "--input-shape", "2,3"], "the forward pass failed"),
        (["{models}:mlp", "--input-shape", "2,256", "--gpu-memory", "lots"], "--gpu-memory"),
    ],
)
def test_bad_input_gives_a_clear_message(models, args, message):
    result = _estimate(*[a.format(models=models) for a in args])
    assert result.exit_code == 2
    assert message in result.output
    assert "Traceback" not in result.output


SEVEN_B = '''
from torch import nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim=4096, hidden=11008, heads=32):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.RMSNorm(dim), nn.RMSNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False)
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(b, t, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
        x = x + self.out(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, vocab=32000, dim=4096, layers=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.norm = nn.RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
'''


def _run_measured(command: list, timeout: float) -> tuple:
    """(exit code, stdout, stderr, CPU seconds, peak RSS in bytes) of `command`'s own process.

    os.wait4 gives the usage of that one child. RUSAGE_CHILDREN's peak RSS is the largest of every
    child this test process ever waited for, so it depended on the tests that ran before; and CPU
    time, unlike wall time, does not grow when other processes share the machine."""
    import os
    import subprocess
    import tempfile
    import time

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, stdout=out, stderr=err)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                child.kill()
                pid, status, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.1)
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        cpu_seconds, peak_rss = usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024  # Linux: KiB
        return child.returncode, out.read().decode(), err.read().decode(), cpu_seconds, peak_rss


def test_a_seven_billion_parameter_model_is_estimated_quickly_in_little_memory(tmp_path):
    import sys

    path = tmp_path / "llama.py"
    path.write_text(SEVEN_B)
    command = [
        sys.executable, "-m", "memlint", "estimate", f"{path}:Llama", "--input-shape", "1,512",
        "--input-dtype", "int64", "--vocab-size", "32000", "--gpu-memory", "80GiB", "--no-what-if",
        "--output-format", "json",
    ]  # fmt: skip
    code, stdout, stderr, seconds, rss = _run_measured(command, timeout=300)
    assert code == 1, stderr  # does not fit in 80 GiB with Adam in fp32
    data = json.loads(stdout)
    assert data["params"] == 6_738_415_616
    assert data["fits"] is False
    # fp32 weights + gradients + Adam's two moments = 16 bytes/parameter, all live in the step
    assert data["breakdown"]["parameters"] == 4 * data["params"]
    assert data["breakdown"]["optimizer_state"] >= 8 * data["params"]
    assert data["peak_bytes"] >= 16 * data["params"]
    assert seconds < 60, seconds  # CPU seconds (7 on the 2-core development machine)
    assert rss < 3 * 2**30, rss


def test_budget_defaults_to_the_configured_gpu_memory(models, tmp_path, monkeypatch):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.memlint]\ngpu-memory = "10MiB"\n')
    (project / "models.py").write_text(models.read_text())
    monkeypatch.chdir(project)
    result = _estimate("models.py:mlp", "--input-shape", "128,256", "--no-what-if", "--output-format", "json")
    assert result.exit_code == 1
    data = json.loads(result.output)
    assert data["budget_bytes"] == 10 * 2**20 and data["fits"] is False


@pytest.mark.parametrize("name", ["mlp", "Encoder"])
def test_optimizer_what_ifs_reuse_forward_and_backward_exactly(models, name):
    from dataclasses import replace

    from memlint.estimate.simulate import with_optimizer

    factory = _load(models, name)
    config = StepConfig(CASES[name], optimizer="adam")
    base = simulate(factory, config)
    for other in ("sgd-momentum", "adafactor", "adamw-8bit"):
        full = simulate(factory, replace(config, optimizer=other))
        assert with_optimizer(factory, config, base, other).peak_bytes == full.peak_bytes, other


def test_budget_is_read_as_the_linter_reads_it(models, tmp_path, monkeypatch):
    """The budget comes from the model file's closest configuration, through `extend`, in the units
    the configuration accepts: the value ML006 reads (memlint/run.py)."""
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "shared.toml").write_text('gpu-memory = "0.5 MiB"\n')
    (project / "pyproject.toml").write_text('[tool.memlint]\ngpu-memory = "80GiB"\n')
    (project / "sub" / "memlint.toml").write_text('extend = "../shared.toml"\n')
    (project / "sub" / "models.py").write_text(models.read_text())
    monkeypatch.chdir(project)
    from memlint.run import Run

    assert Run.configure(["sub/models.py"]).settings_for("sub/models.py").options["gpu-memory"] == 2**19
    result = _estimate("sub/models.py:mlp", "--input-shape", "128,256", "--no-what-if", "--output-format", "json")
    assert json.loads(result.output)["budget_bytes"] == 2**19
    (project / "shared.toml").write_text('gpu-memory = "lots"\n')
    bad = _estimate("sub/models.py:mlp", "--input-shape", "128,256", "--no-what-if")
    assert bad.exit_code == 2 and "gpu-memory" in bad.output and "Traceback" not in bad.output
