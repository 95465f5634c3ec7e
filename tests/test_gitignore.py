"""`respect-gitignore` (issue 18.2): a directory walk skips what git ignores, in a real git repository,
as `memlint check` is run on it; files and directories named on the command line are still linted."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, memlint_subprocess, write


def linted(project: Path, *args: str) -> list[str]:
    result = memlint_subprocess("check", "--no-cache", "--select", "ML001", "--output-format", "concise", *args, cwd=project)
    assert result.returncode in (0, 1), result.stderr
    return sorted({line.split(":")[0] for line in result.stdout.splitlines() if ": ML001 " in line})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "--quiet", str(tmp_path)], check=True)
    write(tmp_path / ".gitignore", "wandb/\n*.generated.py\n!keep.generated.py\n")
    write(tmp_path / "train.py", EVAL_LOOP)
    write(tmp_path / "wandb" / "run-1" / "files" / "code" / "train.py", EVAL_LOOP)  # W&B's copy of the script
    write(tmp_path / "model.generated.py", EVAL_LOOP)
    write(tmp_path / "keep.generated.py", EVAL_LOOP)
    write(tmp_path / "sub" / ".gitignore", "scratch.py\n")
    write(tmp_path / "sub" / "scratch.py", EVAL_LOOP)
    write(tmp_path / "sub" / "real.py", EVAL_LOOP)
    return tmp_path


def test_a_walk_skips_what_git_ignores(repo):
    assert linted(repo, ".") == ["keep.generated.py", "sub/real.py", "train.py"]


def test_info_exclude_counts_too(repo):
    write(repo / ".git" / "info" / "exclude", "sub/real.py\n")
    assert linted(repo, ".") == ["keep.generated.py", "train.py"]


def test_fix_never_rewrites_an_ignored_copy(repo):
    copy = repo / "wandb" / "run-1" / "files" / "code" / "train.py"
    before = copy.read_bytes()
    assert memlint_subprocess("check", "--fix", "--no-cache", "--select", "ML001", ".", cwd=repo).returncode == 0
    assert copy.read_bytes() == before
    assert "loss.detach()" in (repo / "train.py").read_text(encoding="utf-8")


def test_named_files_and_directories_are_still_linted(repo):
    assert linted(repo, "model.generated.py") == ["model.generated.py"]
    assert linted(repo, "wandb") == ["wandb/run-1/files/code/train.py"]


def test_it_can_be_turned_off(repo):
    everything = ["keep.generated.py", "model.generated.py", "sub/real.py", "sub/scratch.py", "train.py",
                  "wandb/run-1/files/code/train.py"]  # fmt: skip
    assert linted(repo, "--no-respect-gitignore", ".") == everything
    write(repo / "pyproject.toml", "[tool.memlint]\nrespect-gitignore = false\n")
    assert linted(repo, ".") == everything
    assert linted(repo, "--respect-gitignore", ".") == ["keep.generated.py", "sub/real.py", "train.py"]


def test_outside_a_git_work_tree_a_gitignore_is_just_a_file(tmp_path):
    write(tmp_path / ".gitignore", "*.py\n")
    write(tmp_path / "train.py", EVAL_LOOP)
    assert linted(tmp_path, ".") == ["train.py"]


def test_show_files_lists_what_a_check_would_read(repo):
    result = memlint_subprocess("check", "--show-files", ".", cwd=repo)
    assert result.returncode == 0
    assert result.stdout.splitlines() == ["keep.generated.py", "sub/real.py", "train.py"]


def test_show_settings_prints_the_effective_settings(repo):
    import json

    write(repo / "pyproject.toml", '[tool.memlint]\nextend-select = ["ML017"]\nper-file-ignores = { "sub/*" = ["ML001"] }\n')
    result = memlint_subprocess("check", "--show-settings", "--ignore", "ML003", "sub/real.py", cwd=repo)
    assert result.returncode == 0, result.stderr
    shown = json.loads(result.stdout)
    assert shown["configuration"].endswith("pyproject.toml") and shown["respect-gitignore"] is True
    assert "ML017" in shown["enabled"] and "ML003" not in shown["enabled"]
    assert "ML001" not in shown["rules for the file"] and "ML002" in shown["rules for the file"]
