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


def _partial_clone(tmp_path: Path, marker: Path, how: str) -> Path:
    """A clone made with --filter=blob:none whose checkout holds only the head's blobs: the base's
    version of train.py is missing, so reading it would make git fetch it from the promisor remote,
    running a command the repository's own config chooses: the remote's `uploadpack` command, or the
    `ext::` transport's command line as the remote's URL."""
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "train.py").write_text(BASE, encoding="utf-8")
    git("init", "-q", cwd=origin)
    git("config", "uploadpack.allowFilter", "true", cwd=origin)
    git("add", "-A", cwd=origin)
    git("commit", "-q", "-m", "base", cwd=origin)
    (origin / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    git("commit", "-q", "-am", "head", cwd=origin)
    clone = tmp_path / "clone"
    git("clone", "-q", "--filter=blob:none", origin.as_uri(), str(clone), cwd=tmp_path)
    if how == "uploadpack":
        git("config", "remote.origin.uploadpack", f"touch '{marker}'; git-upload-pack", cwd=clone)
    else:
        git("config", "remote.origin.url", f"ext::touch {marker}", cwd=clone)  # ext:: splits on spaces
    # What a hostile repository would add so that protocol.allow=never alone does not hold.
    for key in ("protocol.allow", "protocol.file.allow", "protocol.ext.allow"):
        git("config", key, "always", cwd=clone)
    return clone


@pytest.mark.skipif(sys.platform == "win32", reason="the upload-pack command runs through sh")
@pytest.mark.parametrize("how", ["uploadpack", "ext-url"])
def test_review_of_a_partial_clone_fetches_nothing_and_runs_no_configured_command(tmp_path: Path, how: str):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    marker = tmp_path / "COMMAND_RAN"
    clone = _partial_clone(tmp_path, marker, how)
    base_blob = git("rev-parse", "HEAD~1:train.py", cwd=clone).strip()

    result = memlint("review", "--base", "HEAD~1", cwd=clone)

    assert not marker.exists(), "git ran the repository's upload-pack command (a lazy fetch)"
    assert result.returncode == 2, result.stdout
    assert "Traceback" not in result.stderr
    assert base_blob in result.stderr, result.stderr  # the message names the object git lacks


@pytest.mark.skipif(sys.platform == "win32", reason="the upload-pack command runs through sh")
@pytest.mark.parametrize("how", ["uploadpack", "ext-url"])
def test_the_partial_clone_would_fetch_without_the_guards(tmp_path: Path, how: str):
    # The control for the test above: a plain `git diff` does run the command (the fetch then fails
    # for the `ext::` remote, whose command is no git server).
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    marker = tmp_path / "COMMAND_RAN"
    clone = _partial_clone(tmp_path, marker, how)
    subprocess.run(["git", "diff", "--no-ext-diff", "--no-textconv", "HEAD~1"], cwd=clone, capture_output=True, check=False)
    assert marker.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="the git wrapper is a shell script")
def test_review_reads_no_diff_of_files_it_does_not_lint(repo: Path, tmp_path: Path):
    # A large data file changed beside a Python file: review lints .py and .ipynb files only, so the
    # bytes it reads from git must not grow with the data file. A `git` first on PATH counts them.
    real_git = shutil.which("git")
    wrapper_dir, log = tmp_path / "bin", tmp_path / "git.log"
    wrapper_dir.mkdir()
    wrapper = wrapper_dir / "git"
    wrapper.write_text(
        "#!/bin/sh\n"
        f'out=$(mktemp); "{real_git}" "$@" > "$out"; status=$?\n'
        f'printf "%s %s\\n" "$(wc -c < "$out")" "$*" >> "{log}"\n'
        'cat "$out"; rm -f "$out"; exit $status\n',
        encoding="utf-8",
    )
    wrapper.chmod(0o755)
    row = "".join(f"{n},{n * 0.5},label{n}\n" for n in range(1000))
    (repo / "data.csv").write_text(row * 5, encoding="utf-8")  # about 100 KB
    git("add", "data.csv", cwd=repo)
    git("commit", "-q", "-m", "data", cwd=repo)
    (repo / "data.csv").write_text(row.replace("label", "LABEL") * 5, encoding="utf-8")  # every line changed
    (repo / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")

    result = memlint("review", "--base", "HEAD", cwd=repo, env={"PATH": f"{wrapper_dir}{os.pathsep}{os.environ['PATH']}"})

    assert result.returncode == 0, result.stderr
    assert sorted({c["path"] for c in json.loads(result.stdout)["comments"]}) == ["train.py"]
    calls = [line.split(" ", 1) for line in log.read_text(encoding="utf-8").splitlines()]
    assert any(args.startswith("--no-pager diff") for _, args in calls), calls  # the wrapper saw the diff
    read = sum(int(size) for size, _ in calls)
    assert read < 10_000, f"review read {read} bytes from git: {calls}"


def test_a_renamed_file_is_reviewed_on_its_changed_lines_only(repo: Path):
    # The names are diffed first, then the diff of the linted ones (old names included): a rename is
    # still found, so the lines the file brought with it are not reported as new.
    (repo / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    git("commit", "-q", "-am", "findings", cwd=repo)
    git("mv", "train.py", "renamed.py", cwd=repo)
    changed = SOURCE_WITH_FINDINGS.replace("tötal = 0; total += loss", "tötal = 1; total += loss")
    (repo / "renamed.py").write_text(changed, encoding="utf-8")

    result = memlint("review", "--base", "HEAD", cwd=repo)

    assert result.returncode == 0, result.stderr
    assert [(c["path"], c["line"]) for c in json.loads(result.stdout)["comments"]] == [("renamed.py", 14)]
