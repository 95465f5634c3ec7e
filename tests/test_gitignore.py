"""`respect-gitignore` (issue 18.2): a directory walk skips what git ignores, in a real git repository,
as `memlint check` is run on it; files and directories named on the command line are still linted."""

from __future__ import annotations

import os
import subprocess
import sys
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


# ---------------------------------------------------------------------------- the global excludes file


def shown_files(project: Path, home: Path, xdg: Path | None, *args: str) -> list[str]:
    """`memlint check --show-files` with a temporary HOME (and XDG_CONFIG_HOME), as Ruff reads git's
    global excludes file from them."""
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1"}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("GIT_CONFIG_GLOBAL", None)  # the suite hides the user's git config from git (conftest.py)
    if xdg is not None:
        env["XDG_CONFIG_HOME"] = str(xdg)
    result = subprocess.run([sys.executable, "-m", "memlint", "check", "--show-files", *args, "."], cwd=project, env=env,
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def git_untracked(project: Path, home: Path, xdg: Path | None) -> list[str]:
    """What git itself leaves out with the same HOME: the reference."""
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    env.pop("XDG_CONFIG_HOME", None)
    env.pop("GIT_CONFIG_GLOBAL", None)
    if xdg is not None:
        env["XDG_CONFIG_HOME"] = str(xdg)
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=project, env=env,
                            capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    return sorted(name for name in listed if name.endswith(".py"))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    return home


@pytest.mark.parametrize(
    ("files", "use_xdg"),
    [
        ({"xdg/git/ignore": "sub/real.py\n"}, True),  # the default place: $XDG_CONFIG_HOME/git/ignore
        ({"home/.config/git/ignore": "sub/real.py\n"}, False),  # ~/.config when XDG_CONFIG_HOME is unset
        ({"home/.gitconfig": "[core]\n\texcludesFile = ~/my-ignore\n", "home/my-ignore": "sub/real.py\n",
          "xdg/git/ignore": "train.py\n"}, True),  # core.excludesFile replaces the default
        ({"xdg/git/config": '[user]\n\tname = x\n[core]\n\texcludesfile = "~/other ignore" # comment\n',
          "home/other ignore": "sub/\n"}, True),  # in the XDG config; quoted, with a comment
        ({"home/.gitconfig": "[core \"sub\"]\n\texcludesFile = ~/nothing\n[alias]\n\texcludesFile = ~/nothing\n",
          "xdg/git/ignore": "sub/real.py\n"}, True),  # only [core] itself sets it
    ],
)  # fmt: skip
def test_the_global_excludes_file_is_honoured_as_git_does(repo, tmp_path, home, files, use_xdg):
    for name, text in files.items():
        write(tmp_path / name, text)
    xdg = tmp_path / "xdg" if use_xdg else None
    expected = git_untracked(repo, home, xdg)
    assert expected != ["keep.generated.py", "sub/real.py", "train.py"], "the case must ignore something more"
    assert shown_files(repo, home, xdg) == expected


def test_a_gitignore_rule_wins_over_the_global_file(repo, tmp_path, home):
    write(tmp_path / "xdg" / "git" / "ignore", "*.py\n")
    write(repo / "sub" / ".gitignore", "scratch.py\n!real.py\n")
    xdg = tmp_path / "xdg"
    assert shown_files(repo, home, xdg) == git_untracked(repo, home, xdg) == ["keep.generated.py", "sub/real.py"]
    assert "train.py" in shown_files(repo, home, xdg, "--no-respect-gitignore")


def test_a_missing_global_excludes_file_is_no_rule(repo, tmp_path, home):
    write(home / ".gitconfig", "[core]\n\texcludesFile = ~/does-not-exist\n")
    assert shown_files(repo, home, tmp_path / "xdg") == ["keep.generated.py", "sub/real.py", "train.py"]


def test_git_config_global_names_the_global_config_as_for_git(repo, tmp_path, home, monkeypatch):
    write(home / ".gitconfig", "[core]\n\texcludesFile = ~/home-ignore\n")
    write(home / "home-ignore", "train.py\n")
    write(tmp_path / "elsewhere.gitconfig", "[core]\n\texcludesFile = ~/other-ignore\n")
    write(home / "other-ignore", "sub/real.py\n")
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg"), "GIT_CONFIG_GLOBAL": str(tmp_path / "elsewhere.gitconfig")}
    shown = subprocess.run([sys.executable, "-m", "memlint", "check", "--show-files", "."], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=120).stdout.splitlines()  # fmt: skip
    listed = subprocess.run(["git", "ls-files", "--others", "--exclude-standard"], cwd=repo, env=env,
                            capture_output=True, text=True, check=True).stdout.splitlines()  # fmt: skip
    assert shown == sorted(name for name in listed if name.endswith(".py")) == ["keep.generated.py", "train.py"]
