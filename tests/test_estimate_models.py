"""`memlint estimate` on the models people train (issue 17): deepcopy-built models, recurrent layers,
models without trainable parameters, factories importing siblings, token models, the checkpointing
what-if, and the budget with its reserve. Each runs as users call it, and real CPU steps (measured
by torch.profiler, bench/estimate_reference.py) are the reference."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

torch = pytest.importorskip("torch")

from memlint.estimate import kernels  # noqa: E402
from memlint.estimate.checkpointing import repeated_blocks  # noqa: E402
from memlint.estimate.simulate import StepConfig, simulate  # noqa: E402

REFERENCE = Path(__file__).resolve().parent.parent / "bench" / "estimate_reference.py"
_namespace: dict = {"__name__": "reference"}
exec(compile(REFERENCE.read_text(), str(REFERENCE), "exec"), _namespace)
real_peak = _namespace["real_peak"]

MODELS = '''
import copy

import torch
from torch import nn


def stock_encoder():
    layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
    return nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)  # deep-copies `layer`


class Recurrent(nn.Module):
    def __init__(self, cell=nn.LSTM):
        super().__init__()
        self.rnn = cell(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


def lstm():
    return Recurrent(nn.LSTM)


def gru():
    return Recurrent(nn.GRU)


def frozen():
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 8))
    return model.requires_grad_(False)


def parameter_free():
    return nn.Sequential(nn.ReLU(), nn.Softmax(dim=-1))


def with_sibling():
    import sibling_blocks  # imported when the factory runs, not when this file is imported

    return sibling_blocks.build()


def tokens():
    return nn.Sequential(nn.Embedding(100, 16), nn.Linear(16, 4))


class Drop(nn.Module):
    """timm's pattern: rates computed with tensors at construction, then compared in Python."""

    def __init__(self):
        super().__init__()
        rates = [x.item() for x in torch.linspace(0, 0.1, 3)]
        self.layers = nn.ModuleList(nn.Dropout(r) if r > 0.0 else nn.Identity() for r in rates)
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        for layer in self.layers:
            x = layer(self.proj(x))
        return x


class Branchy(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        y = self.proj(x)
        return y * 2 if y.sum() > 0 else y  # depends on the values


class Block(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width)
        self.conv2, self.bn2 = nn.Conv2d(width, width, 3, padding=1), nn.BatchNorm2d(width)

    def forward(self, x):
        return torch.relu(x + self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x))))))


class ResNetLike(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 32, 3, padding=1)
        self.stage1 = nn.Sequential(Block(), Block())
        self.stage2 = nn.Sequential(Block(), Block())
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        x = self.stage2(self.stage1(self.stem(x)))
        return self.head(x.mean((2, 3)))


def mlp():
    return nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 64))
'''


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("models")
    (folder / "sibling_blocks.py").write_text("from torch import nn\n\n\ndef build():\n    return nn.Linear(8, 8)\n")
    path = folder / "zoo.py"
    path.write_text(MODELS)
    return path


@pytest.fixture(scope="module")
def zoo(models):
    namespace: dict = {"__name__": "zoo"}
    exec(compile(models.read_text(), str(models), "exec"), namespace)
    return namespace


@pytest.fixture(autouse=True)
def one_thread():
    """oneDNN's scratch depends on the thread count: compare with the real step at the same one."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _estimate(*args: str):
    return CliRunner().invoke(main, ["estimate", *args])


@pytest.mark.parametrize("name, shape", [("stock_encoder", (4, 16, 32)), ("lstm", (4, 24, 16)), ("gru", (4, 8, 16)), ("Drop", (4, 8))])
def test_estimate_is_within_two_percent_of_a_real_cpu_step(zoo, name, shape):
    estimate = simulate(zoo[name], StepConfig((shape,), optimizer="adamw"))
    real = real_peak(zoo[name], (shape,), "adamw", loop=True)
    assert abs(estimate.peak_bytes - real) <= 0.02 * real, (estimate.peak_bytes, real)


def test_fake_tensors_give_the_storage_of_a_real_run_exactly(zoo, monkeypatch):
    # The same tracker over a real step: every tensor's storage agrees to the byte (convolution
    # scratch, which no tensor owns, left out of the simulation for this comparison).
    config = StepConfig(((4, 3, 32, 32),), optimizer="adamw")
    monkeypatch.setattr(kernels, "_PROBED", {})
    fake, real = simulate(zoo["ResNetLike"], config), simulate(zoo["ResNetLike"], config, fake=False)
    assert fake.peak_bytes == real.peak_bytes > 0
    assert fake.breakdown == real.breakdown


def test_convolution_backward_scratch_makes_a_resnet_exact_against_the_allocator(zoo):
    # The peak falls inside a convolution backward, where oneDNN reorders into its own layout:
    # counting tensors alone was 10,924,920 B against 11,486,200 B real (-4.9%).
    estimate = simulate(zoo["ResNetLike"], StepConfig(((4, 3, 32, 32),), optimizer="adamw"))
    assert estimate.peak_bytes == real_peak(zoo["ResNetLike"], ((4, 3, 32, 32),), "adamw", loop=True)
    assert any("convolutions" in text for text in estimate.measured), estimate.measured


def test_lstm_workspace_is_measured_and_stated(models):
    result = _estimate(f"{models}:lstm", "--input-shape", "4,24,16", "--no-what-if", "--output-format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert any("oneDNN" in text and "workspace" in text for text in data["measured"]), data["measured"]
    assert any("cuDNN" in text for text in data["unsimulated"]), data["unsimulated"]
    text = _estimate(f"{models}:lstm", "--input-shape", "4,24,16", "--no-what-if").output
    assert "measured on the real kernel:" in text and "NOT simulated for this model:" in text


def test_a_long_sequence_is_extrapolated_from_short_probes_to_the_same_sizes(monkeypatch):
    def sizes(layer):
        kernels.KernelScratch._sizes.clear()
        return kernels._extrapolate(layer, (True, False, False))

    # 64 steps of a batch of 32 through 256 units: each step adds far more than a page to each part
    # of oneDNN's workspace, so rounding to pages does not bend the line
    weights = ((1024, 64), (1024, 256), (1024,), (1024,))
    flags = (False, 2, 256, 1, True, False, False, True)
    layer = kernels._Layer((64, 32, 64), 0, weights, (32, 256), torch.float32, (torch.float32,) * 4, flags)
    exact, how = sizes(layer)
    assert how == ""
    monkeypatch.setattr(kernels, "PROBE_BYTES", layer.cost(16))
    extrapolated, how = sizes(layer)
    assert "extrapolated" in how
    assert exact.workspace > 0
    for field in ("workspace", "forward_scratch", "backward_scratch"):
        a, b = getattr(exact, field), getattr(extrapolated, field)
        assert abs(a - b) <= max(16 * 1024, 0.02 * a), (field, a, b)


@pytest.mark.parametrize("name", ["frozen", "parameter_free"])
def test_a_model_without_trainable_parameters_gets_its_forward_pass(models, name):
    result = _estimate(f"{models}:{name}", "--input-shape", "4,8", "--output-format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["forward_only"] is True and data["what_if"] == []
    assert data["peak_bytes"] >= 4 * 8 * 4  # at least the input
    assert "no trainable parameters" in data["note"]
    text = _estimate(f"{models}:{name}", "--input-shape", "4,8")
    assert text.exit_code == 0 and "peak of the forward pass" in text.output and "Traceback" not in text.output


def test_a_factory_importing_a_sibling_module_when_called(models, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)  # the model's folder is not the working directory
    result = _estimate(f"{models}:with_sibling", "--input-shape", "4,8", "--no-what-if", "--output-format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["params"] == 8 * 8 + 8
    assert str(models.parent) not in sys.path  # and it is taken off again


def test_token_model_with_float_inputs_says_what_to_pass(models):
    result = _estimate(f"{models}:tokens", "--input-shape", "4,8", "--no-what-if")
    assert result.exit_code == 2
    assert "the forward pass failed" in result.output and "--input-dtype int64" in result.output
    fixed = _estimate(f"{models}:tokens", "--input-shape", "4,8", "--input-dtype", "int64", "--vocab-size", "100", "--no-what-if")
    assert fixed.exit_code == 0, fixed.output


def test_a_forward_that_branches_on_values_is_named_as_such(models):
    result = _estimate(f"{models}:Branchy", "--input-shape", "4,8", "--no-what-if")
    assert result.exit_code == 2
    assert "the forward pass failed: it depends on the values in tensors" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "name, shape, blocks",
    [
        ("ResNetLike", (4, 3, 32, 32), ["stage1.0", "stage1.1", "stage2.0", "stage2.1"]),
        # nn.TransformerEncoder reads `layers[0].self_attn`: wrapping the layers broke it
        ("stock_encoder", (4, 16, 32), ["layers.0", "layers.1"]),
    ],
)
def test_checkpointing_takes_every_repeated_block(zoo, name, shape, blocks):
    assert [found for found, _ in repeated_blocks(zoo[name]())] == blocks
    base = simulate(zoo[name], StepConfig((shape,), optimizer="sgd"))
    checkpointed = simulate(zoo[name], StepConfig((shape,), optimizer="sgd", checkpoint_blocks=True))
    assert checkpointed.note.startswith(f"checkpoints {len(blocks)} ")
    assert checkpointed.peak_bytes < base.peak_bytes


def test_checkpointing_that_saves_nothing_says_so(models):
    result = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--output-format", "json")
    row = next(r for r in json.loads(result.output)["what_if"] if "checkpointing" in r["change"])
    assert "no repeated blocks to checkpoint" in row["note"] and "saves nothing here" in row["note"]


def _peak(models) -> int:
    result = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--output-format", "json")
    return json.loads(result.output)["peak_bytes"]


def test_sizes_that_differ_never_read_the_same(models):
    peak = _peak(models)
    under = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--gpu-memory", str(peak - 1), "--reserve", "0")
    assert under.exit_code == 1
    line = next(line for line in under.output.splitlines() if "does NOT fit" in line)
    needed, budget = re.match(r"does NOT fit in (.+): needs (.+), the peak", line).groups()[::-1]
    assert needed != budget, line
    exact = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--gpu-memory", str(peak), "--reserve", "0")
    assert exact.exit_code == 0 and "fits in" in exact.output


def test_fits_counts_the_reserve_and_says_what_it_assumed(models):
    peak = _peak(models)
    budget = str(peak + 100 * 2**20)  # room for the peak, not for a CUDA context
    default = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--gpu-memory", budget, "--output-format", "json")
    assert default.exit_code == 1
    data = json.loads(default.output)
    assert data["fits"] is False and data["reserve_bytes"] >= 512 * 2**20
    assert data["needed_bytes"] == data["peak_bytes"] + data["reserve_bytes"]
    text = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--gpu-memory", budget).output
    assert "CUDA context" in text and "--reserve" in text
    small = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--gpu-memory", budget, "--reserve", "64MiB")
    assert small.exit_code == 0, small.output
    bad = _estimate(f"{models}:mlp", "--input-shape", "4,64", "--no-what-if", "--reserve", "lots")
    assert bad.exit_code == 2 and "--reserve" in bad.output


def test_no_numpy_warning_without_numpy():
    # `pip install 'torch-memlint[torch]'` brings no numpy, and torch then warns on import; `estimate`
    # imports torch first thing (a whole estimate in a fresh process would take seconds more).
    code = "import sys; sys.modules['numpy'] = None\nfrom memlint.estimate.command import _quiet_torch_import\n_quiet_torch_import()\n"
    done = subprocess.run([sys.executable, "-W", "default", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "NumPy" not in done.stderr
