"""Terminal conventions of `memlint check` (issue 18.4), as a user's shell runs it: `--color`,
NO_COLOR / FORCE_COLOR, `-q`, `-s`, `-o`, and "findings" in the summary."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, write

ESC = "\x1b["


def run(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-m", "memlint", "check", "--no-cache", "--select", "ML001", *args],
        cwd=project, capture_output=True, text=True, env=environment, timeout=120,
    )  # fmt: skip


@pytest.fixture
def project(tmp_path: Path) -> Path:
    write(tmp_path / "train.py", EVAL_LOOP)
    return tmp_path


@pytest.mark.parametrize(
    "args, env, coloured",
    [
        ((), {}, False),  # a pipe is not a terminal
        ((), {"FORCE_COLOR": "1"}, True),
        ((), {"FORCE_COLOR": "1", "NO_COLOR": ""}, True),  # an empty NO_COLOR does not disable colour
        ((), {"FORCE_COLOR": "", "NO_COLOR": ""}, False),  # nor does an empty FORCE_COLOR force it
        ((), {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False),  # both set: no colour
        (("--color", "always"), {"NO_COLOR": "1"}, True),  # the option beats the environment
        (("--color", "never"), {"FORCE_COLOR": "1"}, False),
    ],
)
def test_colour_follows_the_option_then_the_environment(project, args, env, coloured):
    result = run(project, *args, ".", **env)
    assert result.returncode == 1, result.stderr
    assert "train.py" in result.stdout
    assert (ESC in result.stdout) is coloured


def test_findings_are_called_findings(project):
    assert "Found 1 finding." in run(project, ".").stdout


def test_quiet_prints_the_findings_without_the_summary(project):
    result = run(project, "-q", ".")
    assert result.returncode == 1
    assert "train.py:6:5: ML001" in result.stdout and "Found" not in result.stdout


def test_silent_prints_nothing_and_keeps_the_exit_code(project):
    result = run(project, "--silent", ".")
    assert (result.returncode, result.stdout) == (1, "")


def test_output_file_gets_the_report(project):
    result = run(project, "-o", "report.json", "--output-format", "json", "--color", "always", ".")
    assert (result.returncode, result.stdout) == (1, "")
    report = (project / "report.json").read_text(encoding="utf-8")
    assert '"code": "ML001"' in report and ESC not in report  # JSON is never coloured


def test_an_unwritable_output_file_is_a_clear_error(project):
    result = run(project, "-o", "missing/dir/report.txt", ".")
    assert result.returncode == 2
    assert "memlint: error: cannot write the report to missing/dir/report.txt" in result.stderr
    assert "Traceback" not in result.stderr
