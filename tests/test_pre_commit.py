"""The pre-commit hooks, run by the real `pre-commit try-repo` against a fresh git repository.

pre-commit installs memlint from a snapshot of this working tree with pip (so the package index must
be reachable); PRE_COMMIT_HOME is a temporary directory, shared by the tests of this module.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from integration_helpers import REPO, SOURCE_WITH_FINDINGS

pre_commit = pytest.importorskip("pre_commit", reason="pre-commit is not installed (pip install --group test)")

# A notebook whose second cell has the finding of SOURCE_WITH_FINDINGS's second loop.
NOTEBOOK = json.dumps(
    {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# notes"]},
            {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
             "source": SOURCE_WITH_FINDINGS.splitlines(keepends=True)},
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    },
    indent=1,
    sort_keys=True,
) + "\n"  # fmt: skip

CONFIG = """\
[tool.memlint]
select = ["ML001"]
extend-exclude = ["generated"]
"""


def git(*args: str, cwd: Path) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment).stdout


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory) -> Path:
    """This working tree (tracked and untracked, not ignored files) committed into a new repository:
    what a user's `rev:` would point at."""
    snapshot = tmp_path_factory.mktemp("memlint-snapshot")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, check=True, capture_output=True).stdout.decode()  # fmt: skip
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if source.is_file():
            (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, snapshot / name)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot", cwd=snapshot)
    return snapshot


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def user_repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    for name in ("src/train.py", "generated/train.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tmp_path / "README.md").write_text("not python\n", encoding="utf-8")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "train.ipynb").write_text(NOTEBOOK, encoding="utf-8")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "initial", cwd=tmp_path)
    return tmp_path


def try_repo(hook_repo: Path, hook: str, cwd: Path, home: Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PRE_COMMIT_HOME": str(home), "NO_COLOR": "1", "PRE_COMMIT_COLOR": "never"}
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hook_repo), hook, "--all-files", "--verbose"],
        cwd=cwd, capture_output=True, text=True, env=environment, timeout=540,
    )  # fmt: skip


def test_check_hook_reports_and_honours_excludes(hook_repo: Path, user_repo: Path, pre_commit_home: Path):
    result = try_repo(hook_repo, "memlint", user_repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "src/train.py:9:5: ML001" in output
    assert "src/train.py:14:47: ML001" in output
    assert "generated/train.py" not in output  # passed by pre-commit, excluded by --force-exclude
    assert "notebooks/train.ipynb:cell 2:14:47: ML001" in output  # jupyter files are passed too
    assert (user_repo / "src/train.py").read_text(encoding="utf-8") == SOURCE_WITH_FINDINGS


def test_fix_hook_rewrites_files_like_memlint_fix(hook_repo: Path, user_repo: Path, pre_commit_home: Path, tmp_path_factory):
    expected_dir = tmp_path_factory.mktemp("expected")
    (expected_dir / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "memlint", "check", "--select", "ML001", "--fix", "train.py"], cwd=expected_dir,
                   capture_output=True)  # fmt: skip
    expected = (expected_dir / "train.py").read_text(encoding="utf-8")
    assert expected != SOURCE_WITH_FINDINGS

    result = try_repo(hook_repo, "memlint-fix", user_repo, pre_commit_home)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output  # pre-commit fails a hook that modified files
    assert "files were modified by this hook" in output
    assert (user_repo / "src/train.py").read_text(encoding="utf-8") == expected
    assert (user_repo / "generated/train.py").read_text(encoding="utf-8") == SOURCE_WITH_FINDINGS
    fixed_notebook = json.loads((user_repo / "notebooks/train.ipynb").read_text(encoding="utf-8"))
    assert "".join(fixed_notebook["cells"][1]["source"]) == expected

