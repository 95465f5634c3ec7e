"""`memlint review` on a hostile checkout: a pull request controls `.gitattributes` and the files in
the tree, so neither may make the review run a configured command or read something that is not a
regular file of the repository. Also: the notes beside fixes name the command that applies them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, memlint

from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from memlint.integrations.gitdiff import ChangedLines, regular_file_in
from memlint.integrations.review import build_comments

BASE = "import torch\n"


def git(*args: str, cwd: Path) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "train.py").write_text(BASE, encoding="utf-8")
    git("init", "-q", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "base", cwd=root)
    return root


def _old_mtime(path: Path) -> None:
    # An mtime unlike the index's forces git to read (and filter) the file's content.
    os.utime(path, (946684800, 946684800))


@pytest.mark.parametrize("driver", ["evil", "ev.il"])
@pytest.mark.parametrize("key", ["clean", "process"])
def test_review_runs_no_filter_driver_selected_by_gitattributes(repo: Path, tmp_path: Path, driver: str, key: str):
    marker = tmp_path / "FILTER_RAN"
    command = f"sh -c 'touch {marker}; cat'"
    git("config", f"filter.{driver}.{key}", command, cwd=repo)
    git("config", f"filter.{driver}.required", "true", cwd=repo)
    # The pull request's .gitattributes picks the driver for every Python file.
    (repo / ".gitattributes").write_text(f"*.py filter={driver}\n", encoding="utf-8")
    (repo / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    _old_mtime(repo / "train.py")
    (repo / "new.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")

    result = memlint("review", "--base", "HEAD", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert not marker.exists(), "git ran the filter driver"
    paths = sorted(c["path"] for c in json.loads(result.stdout)["comments"])
    assert paths == ["new.py", "new.py", "train.py", "train.py"]


def test_the_filter_would_run_without_the_safeguards(repo: Path, tmp_path: Path):
    # The control for the test above: the same setup does run the filter in a plain `git diff`.
    marker = tmp_path / "FILTER_RAN"
    git("config", "filter.evil.clean", f"sh -c 'touch {marker}; cat'", cwd=repo)
    (repo / ".gitattributes").write_text("*.py filter=evil\n", encoding="utf-8")
    (repo / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    _old_mtime(repo / "train.py")
    git("diff", "--no-ext-diff", "--no-textconv", "HEAD", cwd=repo)
    assert marker.exists()


@pytest.mark.skipif(not os.path.exists("/dev/zero") or sys.platform == "win32", reason="needs /dev/zero and symlinks")
def test_review_skips_untracked_symlinks_and_special_files(repo: Path, tmp_path: Path):
    outside = tmp_path / "outside.py"
    outside.write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (repo / "zero.py").symlink_to("/dev/zero")  # would be read until memory runs out
    (repo / "away.py").symlink_to(outside)  # a file outside the repository
    (repo / "inside.py").symlink_to(repo / "train.py")
    os.mkfifo(repo / "pipe.py")  # opening it would block forever
    (repo / "real.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")

    result = memlint("review", "--base", "HEAD", "--output-format", "markdown", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "`real.py`" in result.stdout
    for name in ("zero.py", "away.py", "inside.py", "pipe.py"):
        assert f"`{name}`" not in result.stdout


@pytest.mark.skipif(sys.platform == "win32", reason="needs symlinks and FIFOs")
def test_only_regular_files_reached_without_a_symlink_are_reviewed(tmp_path: Path):
    root, outside = tmp_path / "repo", tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    outside.mkdir()
    (root / "pkg" / "a.py").write_text(BASE, encoding="utf-8")
    (outside / "b.py").write_text(BASE, encoding="utf-8")
    (root / "to_a.py").symlink_to(root / "pkg" / "a.py")
    (root / "to_b.py").symlink_to(outside / "b.py")
    (root / "linked").symlink_to(outside)  # a directory reached through a symlink
    os.mkfifo(root / "pipe.py")
    assert regular_file_in(root, "pkg/a.py")
    for name in ("to_a.py", "to_b.py", "linked/b.py", "pipe.py", "missing.py", "pkg"):
        assert not regular_file_in(root, name), name


def _finding(applicability: Applicability) -> Diagnostic:
    """A finding on line 10 whose fix also edits line 1, far outside a change to line 10 alone."""
    edits = (
        Edit(0, 1, "y", Location(1, 1), Location(1, 2)),
        Edit(90, 91, "z", Location(10, 1), Location(10, 2)),
    )
    fix = Fix("do it", applicability, edits)
    return Diagnostic("ML999", "test", "a finding", Severity.WARNING, "x.py", Location(10, 1), Location(10, 2), fix)


@pytest.mark.parametrize("applicability", [Applicability.SAFE, Applicability.UNSAFE])
def test_notes_name_the_command_that_applies_the_fix(applicability: Applicability):
    text = "".join(f"line {n:03}\n" for n in range(1, 21))  # 9 characters a line: line 10 starts at 81
    changes = ChangedLines(Path("."), {"x.py": {10}})
    (comment,) = build_comments([_finding(applicability)], "x.py", text, changes, unsafe=True)
    assert comment.suggestion is None
    if applicability is Applicability.UNSAFE:
        assert "`memlint check --fix --unsafe-fixes`" in comment.note
    else:
        assert "`memlint check --fix`" in comment.note
    (hidden,) = build_comments([_finding(applicability)], "x.py", text, changes, unsafe=False)
    assert ("--unsafe-fixes" in hidden.note) == (applicability is Applicability.UNSAFE)
