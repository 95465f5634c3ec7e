"""How `--fix` writes files: a fix that was not written is an error (exit 2) and is not counted; the
file keeps what it is (read-only stays untouched, owner, group, hard links and symlinks kept); no
write goes outside the paths named; temporary files left by a killed run are never linted and are
removed by the next `--fix`. The policy is in docs/reliability.md ("How --fix writes a file")."""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import sys
import tempfile

import pytest
from conftest import EVAL_LOOP, invoke

from memlint.pipeline import runner, writing

LOOP = EVAL_LOOP.lstrip("\n")
FIXED = LOOP.replace("total += loss", "total += loss.detach()")
ROOT = os.geteuid() == 0


def _fix(*paths: str):
    return invoke("check", "--fix", "--no-cache", "--jobs", "1", *paths)


def _temporaries(directory):
    return sorted(p.name for p in directory.iterdir() if p.name.endswith(".memlint-tmp"))


def test_a_read_only_file_is_refused(project):
    path = project / "train.py"
    path.write_text(LOOP)
    os.chmod(path, 0o444)
    result = _fix("train.py")
    assert result.exit_code == 2
    assert "memlint: error: train.py: fixes not written: the file is read-only (mode 0444)" in result.output
    assert path.read_text() == LOOP and stat.S_IMODE(path.stat().st_mode) == 0o444
    assert "Fixed" not in result.output and "Found 1 finding." in result.output
    assert _temporaries(project) == []


def test_a_write_that_fails_is_an_error_and_is_not_counted(project, monkeypatch):
    (project / "a.py").write_text(LOOP)
    (project / "b.py").write_text(LOOP)
    real_mkstemp = tempfile.mkstemp

    def read_only_filesystem_for_b(*args, prefix="", **kwargs):
        if prefix.startswith(".b.py."):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_mkstemp(*args, prefix=prefix, **kwargs)

    monkeypatch.setattr(writing.tempfile, "mkstemp", read_only_filesystem_for_b)
    result = _fix(".")
    assert result.exit_code == 2
    assert "memlint: error: b.py: fixes not written: [Errno 30] Read-only file system" in result.output
    assert (project / "a.py").read_text() == FIXED and (project / "b.py").read_text() == LOOP
    # b.py's finding is still there and is listed; only a.py's counts as fixed.
    assert "b.py:6:5: ML001" in result.output and "a.py:6:5" not in result.output
    assert "Found 2 findings (1 fixed, 1 remaining)." in result.output


def test_a_directory_we_may_not_add_to_gets_the_file_written_in_place(project, monkeypatch):
    directory = project / "locked"
    directory.mkdir()
    path = directory / "train.py"
    path.write_text(LOOP)
    inode = path.stat().st_ino
    if ROOT:  # root may write anywhere: make creating the temporary file fail as it would for a user

        def denied(*args, **kwargs):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(writing.tempfile, "mkstemp", denied)
    else:
        os.chmod(directory, 0o555)
    try:
        result = _fix("locked/train.py")
    finally:
        os.chmod(directory, 0o755)
    assert result.exit_code == 0, result.output
    assert path.read_text() == FIXED and path.stat().st_ino == inode


def test_a_name_at_the_length_limit_is_fixed(project):
    limit = os.pathconf(project, "PC_NAME_MAX")
    name = "m" * (limit - 3) + ".py"
    (project / name).write_text(LOOP)
    result = _fix(name)
    assert result.exit_code == 0, result.output
    assert (project / name).read_text() == FIXED and _temporaries(project) == []


def test_hard_links_stay_one_file(project):
    path = project / "train.py"
    path.write_text(LOOP)
    os.link(path, project / "copy_elsewhere.txt")
    result = _fix("train.py")
    assert result.exit_code == 0, result.output
    other = project / "copy_elsewhere.txt"
    assert path.read_text() == other.read_text() == FIXED
    assert path.stat().st_ino == other.stat().st_ino and path.stat().st_nlink == 2


@pytest.mark.skipif(not ROOT, reason="only root can make a file owned by another user")
def test_another_users_file_keeps_its_owner_and_group(project):
    path = project / "train.py"
    path.write_text(LOOP)
    os.chown(path, 12345, 23456)
    os.chmod(path, 0o664)
    assert _fix("train.py").exit_code == 0
    info = path.stat()
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (12345, 23456, 0o664)
    assert path.read_text() == FIXED


@pytest.mark.skipif(not ROOT, reason="only root can make a file owned by another user")
def test_when_the_owner_cannot_be_given_back_the_file_is_written_in_place(project, monkeypatch):
    path = project / "train.py"
    path.write_text(LOOP)
    os.chown(path, 12345, 23456)
    inode = path.stat().st_ino

    def not_allowed(*args, **kwargs):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(writing.os, "chown", not_allowed)  # as for a user fixing a group-writable file
    assert _fix("train.py").exit_code == 0
    info = path.stat()
    assert info.st_ino == inode and (info.st_uid, info.st_gid) == (12345, 23456)
    assert path.read_text() == FIXED and _temporaries(project) == []


def test_in_place_write_that_fails_puts_the_original_back(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(LOOP)
    os.link(path, tmp_path / "other.py")  # hard-linked: written in place
    real_fsync = os.fsync
    calls = []

    def full_on_first_sync(descriptor):
        calls.append(descriptor)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_fsync(descriptor)

    monkeypatch.setattr(writing.os, "fsync", full_on_first_sync)
    with pytest.raises(OSError, match="No space left"):
        writing.write_atomically(path, FIXED.encode(), expected=LOOP.encode())
    assert path.read_text() == LOOP and (tmp_path / "other.py").read_text() == LOOP


def test_a_symlink_out_of_the_tree_is_not_written(tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    target = outside / "shared.py"
    target.write_text(LOOP)
    tree = tmp_path / "project"
    tree.mkdir()
    (tree / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    os.symlink(target, tree / "linked.py")
    monkeypatch.chdir(tree)
    result = _fix(".")
    assert result.exit_code == 2
    assert f"memlint: error: linked.py: fixes not written: it is a symlink to {target}, outside the paths" in result.output
    assert target.read_text() == LOOP and os.path.islink(tree / "linked.py")
    # Named explicitly, the link is written through (the file it names is fixed, the link stays).
    assert _fix("linked.py").exit_code == 0
    assert target.read_text() == FIXED and os.path.islink(tree / "linked.py")


def test_a_symlink_inside_the_tree_fixes_its_target_once_and_stays_a_link(project):
    (project / "pkg").mkdir()
    target = project / "pkg" / "real.py"
    target.write_text(LOOP)
    os.symlink("pkg/real.py", project / "alias.py")
    for index in range(runner.PARALLEL_THRESHOLD):  # enough files for worker processes
        (project / f"clean{index}.py").write_text("import torch\n")
    checked = invoke("check", "--no-cache", "--jobs", "2", "--output-format", "concise", ".")
    assert checked.output.startswith("pkg/real.py:6:5: ML001") and "Found 1 finding." in checked.output
    result = invoke("check", "--fix", "--no-cache", "--jobs", "2", ".")
    assert result.exit_code == 0, result.output
    assert target.read_text() == FIXED and os.path.islink(project / "alias.py")
    assert "Fixed 1 finding." in result.output


KILLED_MID_WRITE = """
import os, signal, sys
from memlint.pipeline import runner, writing
from memlint.cli import main
def killed(*args):
    os.kill(os.getpid(), signal.SIGKILL)  # `kill -9` after the temporary file is written, before the rename
writing.os.replace = killed
sys.argv = ["memlint", "check", "--fix", "--no-cache", "."]
main()
"""


@pytest.mark.parametrize("next_run", [["."], ["train.py"]])
def test_a_temporary_file_left_by_kill_9_is_ignored_then_removed(project, next_run):
    path = project / "train.py"
    path.write_text(LOOP)
    (project / "other.py").write_text("import torch\n")
    killed = subprocess.run([sys.executable, "-c", KILLED_MID_WRITE], cwd=project, capture_output=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    left = _temporaries(project)
    assert len(left) == 1 and left[0].startswith(".train.py.") and path.read_text() == LOOP
    checked = invoke("check", "--no-cache", "--output-format", "concise", ".")
    assert "memlint-tmp" not in checked.output and checked.output.startswith("train.py:6:5: ML001")
    assert _temporaries(project) == left  # a check writes nothing
    fixed = _fix(*next_run)
    assert fixed.exit_code == 0, fixed.output
    assert path.read_text() == FIXED and _temporaries(project) == []


def test_a_temporary_file_of_a_running_process_is_left_alone(project):
    (project / "train.py").write_text(LOOP)
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    try:
        live = project / f".train.py.{running.pid}.abcdefgh.memlint-tmp"
        live.write_text("being written by another memlint")
        assert _fix(".").exit_code == 0
        assert live.exists() and (project / "train.py").read_text() == FIXED
    finally:
        running.kill()
        running.wait()
