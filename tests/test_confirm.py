"""`memlint confirm`: the storage tracker against torch.profiler, and the command as users call it."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

torch = pytest.importorskip("torch")

from memlint.confirm.tracker import StorageTracker, rounded  # noqa: E402

MiB = 2**20


# ---------------------------------------------------------------------------- the tracker


def _mlp():
    return torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)), torch.randn(32, 64)


def _cnn():
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10),
    )  # fmt: skip
    return model, torch.randn(4, 3, 32, 32)


def _cnn_with_pointwise_conv():
    # aten runs a 1x1 convolution with oneDNN when it has more than one thread and with its own
    # kernel otherwise (ConvParams::use_mkldnn): the thread count changes which kernel runs.
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(16, 10),
    )  # fmt: skip
    return model, torch.randn(4, 3, 32, 32)


def _transformer():
    return torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True), torch.randn(4, 16, 64)


def _training_step(model, inputs):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, foreach=False)
    loss = model(inputs).square().mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()


@contextlib.contextmanager
def _threads(count: int):
    """torch's intra-op thread count at `count` inside the block, as it was after it."""
    before = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _tracker_peak(build) -> int:
    """The tracker's peak over one training step of a freshly built model, above what existed before."""
    torch.manual_seed(0)
    model, inputs = build()
    tracker = StorageTracker()
    tracker.track([model, inputs])  # created before the mode: counted explicitly, then excluded
    baseline = tracker.usage.live
    with tracker:
        _training_step(model, inputs)
    return tracker.usage.peak - baseline


def _profiler_peak(run) -> int:
    """Peak of the running sum of the profiler's allocation/free events."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        run()
    events = sorted((e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]"), key=lambda e: e.start_ns())
    live = peak = 0
    for event in events:
        live += event.nbytes()
        peak = max(peak, live)
    return peak


@pytest.mark.parametrize("build", [_mlp, _cnn, _transformer], ids=["mlp", "cnn-batchnorm", "transformer-block"])
def test_tracker_agrees_with_profiler_memory_events(build):
    # The reference runs on one thread. The profiler counts every block of the CPU allocator,
    # including scratch memory that no tensor owns: oneDNN's convolution kernels take per-thread
    # buffers (convolution_backward's partial weight gradients: 16 KB more at the peak with 4
    # threads than with 1 on the 2-core AVX2 machine, 30 KB with 2 threads on the one issue 13 was
    # found on; the size depends on the thread count and the CPU's vector instructions). The tracker,
    # a TorchDispatchMode, only ever sees tensors, so at the default thread count the two drifted
    # apart past the tolerance. That scratch is the reference's, not the measurement's: what the
    # tracker measures is the same at any thread count (the two tests below), so `memlint confirm`
    # does not pin its fixtures to one thread, and this comparison does.
    with _threads(1):
        torch.manual_seed(0)
        model, inputs = build()
        expected = _profiler_peak(lambda: _training_step(model, inputs))
        measured = _tracker_peak(build)
    assert expected > 0
    # The profiler also sees the allocator's scalar temporaries and the weights oneDNN reorders for
    # itself; storage bytes are the rest.
    assert abs(measured - expected) <= max(1024, 0.01 * expected), (measured, expected)


def test_tracker_is_independent_of_the_thread_count():
    peaks = {}
    for count in (1, 2, 4):
        with _threads(count):
            peaks[count] = _tracker_peak(_cnn_with_pointwise_conv)
    assert peaks[1] > 0 and peaks[1] == peaks[2] == peaks[4], peaks


def test_views_are_counted_once_and_freed_storage_is_uncounted():
    tracker = StorageTracker()
    with tracker:
        base = torch.zeros(1000)
        views = [base.view(10, 100), base[:500], base.t() if base.dim() == 2 else base.unsqueeze(0)]
        assert tracker.usage.live == 4000
        del base, views
        assert tracker.usage.live == 0
        small = torch.ones(3)  # 12 bytes: one 512-byte block on CUDA
    assert tracker.usage.peak == 4000
    assert tracker.usage.peak_rounded == rounded(4000) == 4096
    assert tracker.usage.live_rounded == 512 and small.numel() == 3


def test_pre_existing_tensors_are_added_explicitly():
    weight = torch.zeros(256, 256)
    tracker = StorageTracker()
    tracker.track([weight])
    with tracker:
        out = weight @ weight
    assert tracker.usage.live == 2 * 256 * 256 * 4
    assert out.shape == (256, 256)


# ---------------------------------------------------------------------------- the command

KEEP_FOUR = """
import torch
kept = []
for _ in range(4):
    kept.append(torch.zeros(262144))  # 1 MiB each
result = len(kept)
"""

KEEP_ONE = """
import torch
count = 0
for _ in range(4):
    block = torch.zeros(262144)
    count += 1
    del block
result = count
"""


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def _confirm(*args: str):
    result = CliRunner().invoke(main, ["confirm", "--device", "cpu", *args])
    return result


def test_known_saving_from_an_after_file_is_measured_exactly(tmp_path):
    _write(tmp_path, "keep.py", KEEP_FOUR)
    _write(tmp_path, "keep.after.py", KEEP_ONE)
    result = _confirm(str(tmp_path), "--output-format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["fixture"].endswith("keep.py")
    assert row["device"] == "cpu" and row["torch"] == torch.__version__
    assert row["before"]["peak_bytes"] == 4 * MiB
    assert row["after"]["peak_bytes"] == MiB
    assert row["saved_bytes"] == row["before"]["peak_bytes"] - row["after"]["peak_bytes"]
    assert row["saved_fraction"] == pytest.approx(row["saved_bytes"] / row["before"]["peak_bytes"], abs=1e-6)
    assert row["before"]["peak_bytes_rounded"] % 512 == 0
    assert row["equivalent"] is True


CONV_STEP = """
import torch
torch.set_num_threads({threads})
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
    torch.nn.Conv2d(16, 16, 1), torch.nn.Flatten(), torch.nn.Linear(16 * 16 * 16, 10),
)
model(torch.randn(4, 3, 16, 16)).square().mean().backward()
assert torch.get_num_threads() == {threads}  # an error in the report otherwise
"""


def test_measured_peak_does_not_depend_on_the_thread_count(tmp_path):
    # What users of `memlint confirm` see: the same fixture at 1 and at 4 threads (the scratch
    # memory oneDNN's kernels take per thread is not tensor storage and is not counted).
    _write(tmp_path, "one_thread.py", CONV_STEP.format(threads=1))
    _write(tmp_path, "four_threads.py", CONV_STEP.format(threads=4))
    result = _confirm(str(tmp_path), "--output-format", "json")
    assert result.exit_code == 0, result.output  # each ran at its thread count
    rows = {Path(row["fixture"]).name: row["before"] for row in json.loads(result.output)}
    assert rows["one_thread.py"]["peak_bytes"] == rows["four_threads.py"]["peak_bytes"] > 0


ML001_EVAL = """
import torch
from torch import nn
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 10))
criterion = nn.CrossEntropyLoss()
batches = [(torch.randn(64, 64), torch.randint(0, 10, (64,))) for _ in range(6)]
total = 0.0
for x, y in batches:
    loss = criterion(model(x), y)
    total += loss
result = float(total) / len(batches)
"""


def test_memlint_fix_variant_is_built_in_a_temporary_copy(tmp_path):
    fixture = _write(tmp_path, "eval_loop.py", ML001_EVAL)
    original = fixture.read_text()
    result = _confirm(str(fixture), "--output-format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["codes"] == ["ML001"] and row["after_source"] == "memlint-fix"
    # Each of the five earlier batches' graphs held at least its 64x256 hidden activation (saved by
    # GELU for backward); with `.item()` they die with their batch.
    assert row["saved_bytes"] >= 5 * 64 * 256 * 4
    assert row["equivalent"] is True
    assert fixture.read_text() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eval_loop.py"]


def test_failures_are_reported_and_the_other_fixtures_go_on(tmp_path):
    _write(tmp_path, "a_raises.py", "import torch\nx = torch.zeros(4)\nraise ValueError('broken fixture')\n")
    _write(tmp_path, "b_hangs.py", "import time\nwhile True:\n    time.sleep(0.1)\n")
    _write(tmp_path, "c_oom.py", "import torch\nx = torch.empty(2**31)  # 8 GiB\n")
    _write(tmp_path, "d_fine.py", KEEP_FOUR)
    _write(tmp_path, "d_fine.after.py", KEEP_ONE)
    result = _confirm(str(tmp_path), "--timeout", "5", "--memory-limit", "1GiB", "--output-format", "json")
    assert result.exit_code == 1
    rows = {Path(r["fixture"]).name: r for r in json.loads(result.output)}
    assert "ValueError: broken fixture (line 3)" in rows["a_raises.py"]["before"]["error"]
    assert "timed out after 5 s" in rows["b_hangs.py"]["before"]["error"]
    assert not rows["c_oom.py"]["before"]["ok"]
    assert "allocate" in rows["c_oom.py"]["before"]["error"] or "memory" in rows["c_oom.py"]["before"]["error"]
    assert rows["d_fine.py"]["saved_bytes"] > 0 and rows["a_raises.py"]["saved_bytes"] is None


def test_a_change_of_result_is_surfaced(tmp_path):
    _write(tmp_path, "f.py", "import torch\nresult = torch.arange(4.0)\n")
    _write(tmp_path, "f.after.py", "import torch\nresult = torch.arange(4.0) * 1.001\n")
    result = _confirm(str(tmp_path / "f.py"))
    assert result.exit_code == 1
    assert "NO" in result.output.splitlines()[2]


def test_text_and_markdown_reports_name_device_and_torch(tmp_path):
    _write(tmp_path, "keep.py", KEEP_FOUR)
    _write(tmp_path, "keep.after.py", KEEP_ONE)
    text = _confirm(str(tmp_path))
    assert text.exit_code == 0
    assert text.output.splitlines()[0].split()[:3] == ["fixture", "codes", "device"]
    assert "4,194,304" in text.output and "yes" in text.output
    markdown = _confirm(str(tmp_path), "--output-format", "markdown")
    assert f"PyTorch {torch.__version__}" in markdown.output and "Device: cpu" in markdown.output
    assert "| fixture |" in markdown.output


def test_missing_torch_and_missing_cuda_give_clear_errors(tmp_path, monkeypatch):
    _write(tmp_path, "keep.py", KEEP_FOUR)
    if not torch.cuda.is_available():
        result = CliRunner().invoke(main, ["confirm", "--device", "cuda", str(tmp_path)])
        assert result.exit_code == 2
        assert "no CUDA device" in result.output
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    result = CliRunner().invoke(main, ["confirm", str(tmp_path)])
    assert result.exit_code == 2
    assert "needs PyTorch" in result.output and "Traceback" not in result.output
    assert "pip install 'torch-memlint[torch]'" in result.output  # the distribution's real name


def test_missing_path_is_an_error(tmp_path):
    result = _confirm(str(tmp_path / "nope.py"))
    assert result.exit_code == 2
    assert "no such file" in result.output


def test_check_never_imports_torch():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from memlint.cli import main\n"
        "CliRunner().invoke(main, ['check', '--no-cache', 'fixtures'])\n"
        "assert 'torch' not in sys.modules, 'memlint check imported torch'\n"
    )
    root = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-c", code], cwd=root, check=True, timeout=120)


def test_plot_writes_one_png_per_fixture(tmp_path):
    pytest.importorskip("matplotlib")
    _write(tmp_path, "keep.py", KEEP_FOUR)
    _write(tmp_path, "keep.after.py", KEEP_ONE)
    plots = tmp_path / "plots"
    result = _confirm(str(tmp_path / "keep.py"), "--plot", str(plots))
    assert result.exit_code == 0, result.output
    (png,) = plots.iterdir()
    assert png.name == "keep.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_is_not_written_through_a_symlink(tmp_path):
    pytest.importorskip("matplotlib")
    _write(tmp_path, "keep.py", KEEP_FOUR)
    _write(tmp_path, "keep.after.py", KEEP_ONE)
    plots = tmp_path / "plots"
    plots.mkdir()
    victim = _write(tmp_path, "victim.txt", "precious\n")
    (plots / "keep.png").symlink_to(victim)  # as a repository holding plots/ could plant it
    result = _confirm(str(tmp_path / "keep.py"), "--plot", str(plots))
    assert result.exit_code == 2, result.output
    assert "keep.png: plot not written: it is a symbolic link" in result.output
    assert victim.read_text() == "precious\n"


def test_select_keeps_only_fixtures_with_the_selected_rules(tmp_path):
    _write(tmp_path, "eval_loop.py", ML001_EVAL)
    _write(tmp_path, "keep.py", KEEP_FOUR)
    _write(tmp_path, "keep.after.py", KEEP_ONE)
    result = _confirm(str(tmp_path), "--select", "ML001", "--output-format", "json")
    assert result.exit_code == 0, result.output
    assert [Path(row["fixture"]).name for row in json.loads(result.output)] == ["eval_loop.py"]
