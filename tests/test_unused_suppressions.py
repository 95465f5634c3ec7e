"""ML100 unused-suppression through the command line (issue 18.3): it judges memlint's codes in
suppression comments after the analysis, also in files the screens clear or that never mention
torch, and its fix leaves a file that re-lints clean."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import memlint_subprocess, write

USED = """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss  # noqa: ML001
"""
STALE = """
import torch
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss.item()  # noqa: ML001
"""
NO_TORCH = """
import numpy as np  # noqa: F401, ML003
values = np.zeros(3)  # memlint: ignore[ML0001]
"""


def found(cwd: Path, *args: str) -> list[tuple[str, int, str]]:
    result = memlint_subprocess("check", "--output-format", "json", "--extend-select", "ML100", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    return sorted((d["filename"], d["location"]["row"], d["code"]) for d in json.loads(result.stdout))


def test_stale_and_unknown_codes_are_reported_used_ones_are_not(tmp_path):
    write(tmp_path / "used.py", USED)
    write(tmp_path / "stale.py", STALE)
    write(tmp_path / "no_torch.py", NO_TORCH)
    assert found(tmp_path, "--no-cache", ".") == [
        ("no_torch.py", 1, "ML100"),  # ML003 ran and reports nothing there (F401 is another tool's)
        ("no_torch.py", 2, "ML100"),  # ML0001 is no rule of memlint
        ("stale.py", 5, "ML100"),
    ]


def test_the_same_with_many_files_in_worker_processes_and_from_the_cache(tmp_path):
    for index in range(12):  # above the runner's threshold for worker processes
        write(tmp_path / f"stale_{index:02}.py", STALE)
        write(tmp_path / f"used_{index:02}.py", USED)
    expected = [(f"stale_{index:02}.py", 5, "ML100") for index in range(12)]
    assert found(tmp_path, "--jobs", "2", ".") == expected
    assert found(tmp_path, "--jobs", "2", ".") == expected  # the cached run


def test_codes_of_rules_that_did_not_run_are_left_alone(tmp_path):
    write(tmp_path / "stale.py", STALE)
    assert found(tmp_path, "--no-cache", "--ignore", "ML001", ".") == []
    write(tmp_path / "memlint.toml", "per-file-ignores = { 'stale.py' = ['ML001'] }\n")
    assert found(tmp_path, "--no-cache", ".") == []


def test_its_own_finding_can_be_suppressed(tmp_path):
    write(tmp_path / "stale.py", STALE.replace("# noqa: ML001", "# noqa: ML001, ML100"))
    assert found(tmp_path, "--no-cache", ".") == []


def test_off_by_default(tmp_path):
    write(tmp_path / "stale.py", STALE)
    result = memlint_subprocess("check", "--no-cache", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout


def test_the_fix_removes_what_is_unused_and_the_result_lints_clean(tmp_path):
    stale = write(tmp_path / "stale.py", STALE)
    no_torch = write(tmp_path / "no_torch.py", NO_TORCH)
    result = memlint_subprocess("check", "--no-cache", "--extend-select", "ML100", "--fix", ".", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Fixed 3 findings" in result.stdout + result.stderr
    assert stale.read_text().endswith("    total += loss.item()\n")
    assert no_torch.read_text() == "import numpy as np  # noqa: F401\nvalues = np.zeros(3)\n"
    compile(stale.read_text(), "stale.py", "exec")
    assert found(tmp_path, "--no-cache", ".") == []


def test_in_a_notebook_the_finding_is_on_its_cell(tmp_path):
    cells = [
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": ["import torch\n", "total = 0.0"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["for x, y in loader:\n", "    total += criterion(model(x), y).item()  # noqa: ML001"]},
    ]  # fmt: skip
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "train.ipynb").write_text(json.dumps(notebook))
    result = memlint_subprocess("check", "--no-cache", "--output-format", "json", "--extend-select", "ML100", ".", cwd=tmp_path)
    [finding] = json.loads(result.stdout)
    assert (finding["code"], finding["cell"], finding["location"]["row"]) == ("ML100", 2, 2)
