"""`--fail-level` (check and review), `memlint review --summary-file`, and annotation paths from
GITHUB_WORKSPACE: what the GitHub Action's fail-level, one-analysis review and working-directory
stand on, run through the command line."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, memlint

# ML003 (info) only.
INFO_ONLY = """\
import torch
from torch import nn

model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
output = model(torch.randn(2, 3, 8, 8))
"""


def check(cwd: Path, *args: str, **kwargs) -> subprocess.CompletedProcess:
    return memlint("check", "--no-cache", "--select", "ML001,ML003", "--output-format", "concise", *args, cwd=cwd, **kwargs)


def found(result: subprocess.CompletedProcess) -> list[str]:
    return sorted(line.split()[1] for line in result.stdout.splitlines() if ".py:" in line)


@pytest.mark.parametrize(
    ("file", "level", "status"),
    [
        ("info.py", None, 1), ("info.py", "info", 1), ("info.py", "warning", 0), ("info.py", "none", 0),
        ("warn.py", "warning", 1), ("warn.py", "error", 0),
        ("broken.py", "error", 1),  # ML000, a file that does not parse, is an error
    ],
)  # fmt: skip
def test_check_exits_1_only_for_findings_at_the_fail_level(tmp_path, file, level, status):
    (tmp_path / "info.py").write_text(INFO_ONLY, encoding="utf-8")
    (tmp_path / "warn.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tmp_path / "broken.py").write_text("import torch\nfor x in torch.zeros(3)\n    pass\n", encoding="utf-8")
    result = check(tmp_path, *(["--fail-level", level] if level else []), file)
    assert result.returncode == status, result.stderr
    assert found(result), "findings below the level are still reported"


def test_fail_level_with_exit_zero_and_standard_input(tmp_path):
    (tmp_path / "warn.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    assert check(tmp_path, "--fail-level", "info", "--exit-zero", "warn.py").returncode == 0
    stdin = check(tmp_path, "--fail-level", "error", "--stdin-filename", "warn.py", "-", input=SOURCE_WITH_FINDINGS)
    assert stdin.returncode == 0 and found(stdin) == ["ML001", "ML001"]
    stdin = check(tmp_path, "--fail-level", "warning", "--stdin-filename", "warn.py", "-", input=SOURCE_WITH_FINDINGS)
    assert stdin.returncode == 1
    wrong = check(tmp_path, "--fail-level", "severe", "warn.py")
    assert wrong.returncode == 2 and "severe" in wrong.stderr


def git(*args: str, cwd: Path) -> None:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=environment)


@pytest.fixture
def change(tmp_path) -> Path:
    """A repository whose working tree adds a file with two ML001 findings (warnings) since `base`."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    git("init", "-q", cwd=tmp_path)
    (tmp_path / "README").write_text("x\n", encoding="utf-8")
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "base", cwd=tmp_path)
    git("tag", "base", cwd=tmp_path)
    (tmp_path / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    return tmp_path


def test_review_fails_only_when_asked_and_writes_the_summary_from_the_same_run(change):
    summary = change / "summary.md"
    summary.write_text("earlier steps' summary\n", encoding="utf-8")
    result = memlint("review", "--base", "base", "--summary-file", str(summary), cwd=change)
    assert result.returncode == 0, result.stderr  # review's default fail level is none
    payload = json.loads(result.stdout)
    assert [c["path"] for c in payload["comments"]] == ["train.py", "train.py"]
    written = summary.read_text(encoding="utf-8")
    assert written.startswith("earlier steps' summary\n## memlint review\n")  # appended, as a job summary is
    assert written.count("| `train.py` |") == 2
    assert memlint("review", "--base", "base", "--fail-level", "warning", cwd=change).returncode == 1
    assert memlint("review", "--base", "base", "--fail-level", "error", cwd=change).returncode == 0
    unwritable = memlint("review", "--base", "base", "--summary-file", str(change / "missing" / "s.md"), cwd=change)
    assert unwritable.returncode == 2 and "cannot write the summary" in unwritable.stderr


def test_github_annotations_name_files_from_the_workspace(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "warn.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    outside = tmp_path / "elsewhere"
    outside.mkdir()

    def files(env: dict) -> set[str]:
        result = memlint("check", "--no-cache", "--output-format", "github", "warn.py", cwd=tmp_path / "sub", env=env)
        assert result.returncode == 1, result.stderr
        return {line.split("file=", 1)[1].split(",", 1)[0] for line in result.stdout.splitlines()}

    assert files({"GITHUB_WORKSPACE": str(tmp_path)}) == {"sub/warn.py"}
    assert files({"GITHUB_WORKSPACE": str(outside)}) == {"warn.py"}  # not inside it: the name as given
    assert files({"GITHUB_WORKSPACE": ""}) == {"warn.py"}
