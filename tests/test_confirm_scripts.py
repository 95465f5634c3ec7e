"""`memlint confirm` on scripts as people write them (issue 17, and issue 15's host-memory column):
the device the script chooses, host growth per step, results it cannot compare, errors in memlint's
fixed copy, and a command line without scripts."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

torch = pytest.importorskip("torch")

from memlint.confirm.tracker import StorageTracker  # noqa: E402
from memlint.confirm.variants import line_map  # noqa: E402


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source).lstrip())
    return path


def _confirm(*args: str):
    return CliRunner().invoke(main, ["confirm", "--device", "cpu", *args])


TRAIN_LOOP = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
batches = [(torch.randn(8, 16), torch.randint(0, 4, (8,))) for _ in range(40)]
running_loss = 0.0
for x, y in batches:
    optimizer.zero_grad()
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward()
    optimizer.step()
    running_loss += loss
result = float(running_loss)
"""


def test_host_growth_per_step_shows_the_graphs_an_accumulator_keeps(tmp_path):
    # Device memory hardly changes (backward frees the activations), but each step's autograd graph
    # stays reachable from `running_loss` on the host until the loop ends; `.item()` ends that. Forty
    # steps: the first ones allocate tables that grow (the tracker's, the allocator's) and ten steps
    # left the median to that noise on one CI machine (after-fix growth 1656 B against 5960 B).
    _write(tmp_path, "train.py", TRAIN_LOOP)
    result = _confirm(str(tmp_path / "train.py"), "--output-format", "json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.output)
    assert row["codes"] == ["ML001"] and row["before"]["backward_calls"] == 40
    before, after = row["before"]["host_growth_per_step"], row["after"]["host_growth_per_step"]
    assert before >= 2000, (before, after)  # several KB of graph per step
    assert after <= before / 4, (before, after)
    text = _confirm(str(tmp_path / "train.py")).output
    assert "host/step (B)" in text and "mallinfo2" in text


def test_a_tuple_result_is_compared_and_an_object_gets_a_note(tmp_path):
    _write(tmp_path, "pair.py", "import torch\nkept = [torch.zeros(1000) for _ in range(3)]\nresult = (3, torch.ones(2), {'a': 1.0})\n")
    _write(tmp_path, "pair.after.py", "import torch\nkept = [torch.zeros(1000)]\nresult = (3, torch.ones(2), {'a': 1.0})\n")
    _write(tmp_path, "wrong.py", "import torch\nresult = (1.0, torch.ones(2))\n")
    _write(tmp_path, "wrong.after.py", "import torch\nresult = (1.0, torch.zeros(2))\n")
    _write(tmp_path, "thing.py", "import torch\nkept = torch.zeros(1000)\nresult = object()\n")
    _write(tmp_path, "thing.after.py", "import torch\nresult = object()\n")
    result = _confirm(str(tmp_path), "--output-format", "json")
    rows = {Path(r["fixture"]).name: r for r in json.loads(result.output)}
    assert rows["pair.py"]["equivalent"] is True
    assert rows["wrong.py"]["equivalent"] is False
    assert rows["thing.py"]["equivalent"] is None
    assert rows["thing.py"]["note"] == "result not compared: result of type object cannot be compared"
    assert "thing.py: result not compared" in _confirm(str(tmp_path)).output


EVALUATE = """
import torch
from torch import nn

model = nn.Linear(4, 4)


def evaluate(loader):
    model.eval()
    total = 0.0
    for x in loader:
        total += model(x).sum().item()
    return total


result = evaluate([torch.randn(2, 4) for _ in range(3)])
raise ValueError("after the evaluation")
"""


def test_an_error_in_the_fixed_copy_names_the_users_line(tmp_path):
    path = _write(tmp_path, "evaluate.py", EVALUATE)
    result = _confirm(str(path), "--output-format", "json")
    (row,) = json.loads(result.output)
    assert row["after_source"] == "memlint-fix"  # ML002's fix adds a line: @torch.no_grad()
    line = EVALUATE.lstrip().splitlines().index('raise ValueError("after the evaluation")') + 1
    assert row["before"]["error"].endswith(f"(line {line})")
    assert row["after"]["error"].endswith(f"(line {line}, line {line + 1} of memlint's fixed copy)")


def test_line_map_follows_inserted_and_replaced_lines():
    original = "a\nb\nc\nd\n"
    assert line_map(original, "a\nnew\nb\nc\nd\n") == [1, 2, 2, 3, 4]
    assert line_map(original, "a\nB\nc\nd\n") == [1, 2, 3, 4]
    assert line_map(original, "a\nc\nd\n") == [1, 3, 4]


def test_confirm_without_scripts_says_what_to_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "fixtures").mkdir()  # not looked for
    result = CliRunner().invoke(main, ["confirm"])
    assert result.exit_code == 2
    assert "memlint confirm SCRIPT.py|DIR" in result.output and "Traceback" not in result.output


def test_the_tracker_counts_only_its_device_and_names_the_others():
    tracker = StorageTracker(device_type="cpu")
    with tracker:
        here = torch.zeros(100)
        elsewhere = torch.zeros(1000, device="meta")
    assert tracker.usage.peak == 400
    assert tracker.other_devices == {"meta": 4000}
    assert here.numel() + elsewhere.numel() == 1100


@pytest.mark.parametrize("peak, default_device", [(0, False), (10 * 2**20, False), (10 * 2**20, True)])
def test_cuda_runs_leave_the_device_to_the_script_and_refuse_an_unused_gpu(monkeypatch, peak, default_device):
    # No GPU here: torch.cuda's measuring functions are replaced by test doubles reporting `peak`.
    from memlint.confirm import harness  # the measuring side, normally imported in a child only

    for name, value in {
        "synchronize": None, "empty_cache": None, "reset_peak_memory_stats": None, "memory_allocated": 0,
        "memory_stats": {}, "max_memory_allocated": peak, "get_device_name": "a test double",
    }.items():  # fmt: skip
        monkeypatch.setattr(torch.cuda, name, lambda value=value: value)
    defaults = []
    monkeypatch.setattr(torch, "set_default_device", defaults.append)
    code = compile("x = 1", "script.py", "exec")
    if peak == 0:
        with pytest.raises(harness._NotOnDevice, match="the script allocated only 0 B on the GPU"):
            harness._measure_cuda(code, "script.py", False, default_device)
    else:
        assert harness._measure_cuda(code, "script.py", False, default_device)["peak_bytes"] == peak
    assert defaults == (["cuda"] if default_device else [])  # torch's default device only on request


REENTRANT = """
import torch
from torch.utils.checkpoint import checkpoint

layer = torch.nn.Linear(8, 8)
for _ in range(5):
    x = torch.randn(4, 8, requires_grad=True)
    checkpoint(layer, x, use_reentrant=True).sum().backward()
"""


def test_backward_inside_backward_counts_as_one_step(tmp_path):
    # Reentrant checkpointing runs torch.autograd.backward inside the outer backward pass.
    _write(tmp_path, "reentrant.py", REENTRANT)
    (row,) = json.loads(_confirm(str(tmp_path / "reentrant.py"), "--output-format", "json").output)
    assert row["before"]["ok"] and row["before"]["backward_calls"] == 5
