"""`memlint confirm` and `memlint estimate` on fixtures that misbehave: each failure is reported with
its cause and the other fixtures are still measured (tests/test_confirm.py covers raise/hang/OOM)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

pytest.importorskip("torch")

MISBEHAVING = {
    "a_exit_zero.py": "import os, torch\nos._exit(0)\n",
    "b_sys_exit.py": "import sys, torch\nsys.exit(3)\n",
    "c_segfault.py": "import ctypes, torch\nctypes.string_at(0)\n",
    "d_syntax_error.py": "import torch\nx = (\n",
    "e_python_oom.py": "import torch\nblob = bytearray(8 * 2**30)\n",
    "f_keyboard_interrupt.py": "import torch\nraise KeyboardInterrupt\n",
    "g_grandchild_hangs.py": (
        "import subprocess, sys, torch\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(1000)  # MEMLINT_ORPHAN_PROBE'])\n"
        "while True:\n    pass\n"
    ),
    "h_ignores_sigterm.py": "import signal, torch\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass\n",
}
EXPECTED = {
    "a_exit_zero.py": "exited with status 0 before reporting",
    "b_sys_exit.py": "SystemExit: 3 (line 2)",
    "c_segfault.py": "killed by SIGSEGV",
    "d_syntax_error.py": "SyntaxError: '(' was never closed",
    "e_python_oom.py": "out of memory",
    "f_keyboard_interrupt.py": "KeyboardInterrupt",
    "g_grandchild_hangs.py": "timed out after 8 s",
    "h_ignores_sigterm.py": "timed out after 8 s",
}
FINE = "import torch\nkept = [torch.zeros(262144) for _ in range({n})]\nresult = len(kept)\n"


def test_confirm_reports_each_misbehaving_fixture_and_measures_the_rest(tmp_path):
    for name, source in MISBEHAVING.items():
        (tmp_path / name).write_text(source)
    (tmp_path / "z_fine.py").write_text(FINE.format(n=4))
    (tmp_path / "z_fine.after.py").write_text(FINE.format(n=1))
    args = ["confirm", "--device", "cpu", "--timeout", "8", "--memory-limit", "1GiB", "--output-format", "json"]
    result = CliRunner().invoke(main, [*args, str(tmp_path)])
    assert result.exit_code == 1, result.output
    rows = {Path(row["fixture"]).name: row for row in json.loads(result.output)}
    for name, expected in EXPECTED.items():
        assert rows[name]["before"]["ok"] is False
        assert expected in rows[name]["before"]["error"], (name, rows[name]["before"]["error"])
        assert rows[name]["saved_bytes"] is None
    assert rows["z_fine.py"]["saved_bytes"] == 3 * 262144 * 4
    # The hung fixture's own child was killed with it: nothing is left running.
    left = subprocess.run(["pgrep", "-f", "MEMLINT_ORPHAN_PROBE"], capture_output=True, text=True)
    assert left.stdout.strip() == "", "a fixture's child process outlived the timeout"


MODELS = textwrap.dedent(
    """
    import torch

    def raises():
        raise ValueError("bad factory")

    def not_a_module():
        return 3

    class ForwardFails(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 4)

        def forward(self, x):
            raise RuntimeError("forward fails")
    """
)


@pytest.mark.parametrize(
    "target, expected",
    [
        ("models.py:raises", "building the model failed: ValueError: bad factory"),
        ("models.py:not_a_module", "the factory returned int, not a torch.nn.Module"),
        ("models.py:ForwardFails", "the forward pass failed: RuntimeError: forward fails"),
        ("models.py:missing", "models.py defines no 'missing'"),
        ("broken.py:f", "broken.py: importing it failed: SyntaxError"),
        ("absent.py:f", "absent.py: no such file"),
    ],
)
def test_estimate_failures_are_named_and_exit_two(tmp_path, monkeypatch, target, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models.py").write_text(MODELS)
    (tmp_path / "broken.py").write_text("x = (\n")
    result = CliRunner().invoke(main, ["estimate", "--input-shape", "2,4", "--no-what-if", target])
    assert result.exit_code == 2
    assert expected in result.output
    assert "Traceback" not in result.output
