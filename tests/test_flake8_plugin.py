"""The flake8 plugin, run by the real flake8: same findings, rows and columns as `memlint check`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, memlint

pytest.importorskip("flake8", reason="flake8 is in the test dependency group")


def flake8(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "flake8", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_the_entry_point_is_registered(tmp_path: Path):
    # From another directory: a stale memlint.egg-info in the checkout must not hide the installed metadata.
    code = "from importlib.metadata import entry_points; print({e.name: e.value for e in entry_points(group='flake8.extension')})"
    names = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert "'ML': 'memlint.integrations.flake8_plugin:MemlintChecker'" in names, "reinstall memlint: pip install -e . --group test"


def test_flake8_reports_memlint_findings_at_memlint_positions(tmp_path: Path):
    source = SOURCE_WITH_FINDINGS + "for x, y in loader:\n    total += criterion(model(x), y)  # noqa: ML001\n"
    (tmp_path / "train.py").write_text(source, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nselect = ["ML001"]\n', encoding="utf-8")
    result = flake8("--select", "ML", "--format", "%(path)s|%(row)d|%(col)d|%(code)s|%(text)s", "train.py", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    reported = [line.split("|", 4) for line in result.stdout.splitlines()]
    expected = json.loads(memlint("check", "--output-format", "json", "train.py", cwd=tmp_path).stdout)
    assert len(expected) == 2
    assert reported == [
        ["train.py", str(f["location"]["row"]), str(f["location"]["column"]), f["code"], f["message"]] for f in expected
    ]
    # Columns after non-ASCII text count characters in both tools.
    assert reported[1][1:3] == ["14", "47"]


def test_flake8_follows_the_memlint_configuration(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.memlint]\nselect = ["ML001"]\nignore = ["ML001"]\n', encoding="utf-8")
    (tmp_path / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    result = flake8("--select", "ML", "train.py", cwd=tmp_path)
    assert result.returncode == 0 and result.stdout == ""


def test_flake8_without_select_ml_is_unaffected_on_clean_code(tmp_path: Path):
    (tmp_path / "ok.py").write_text("import torch\n\nprint(torch.zeros(1))\n", encoding="utf-8")
    result = flake8("ok.py", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
