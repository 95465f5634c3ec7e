"""`--fix` can never damage a file: encoding, BOM, newlines and mode survive; a failed write leaves the
original intact with no temporary file behind; a file changed since it was read is not overwritten."""

from __future__ import annotations

import os
import stat

import pytest
from conftest import EVAL_LOOP, invoke

from memlint.config import ConfigFile, Selection, build_settings
from memlint.pipeline import runner, writing
from memlint.pipeline.writing import FileChangedError, write_atomically

LOOP = EVAL_LOOP.lstrip("\n")
FIXED = LOOP.replace("total += loss", "total += loss.detach()")


def _fix(*paths: str):
    return invoke("check", "--fix", "--no-cache", "--jobs", "1", *paths)


@pytest.mark.parametrize(
    "name, data, expected",
    [
        ("latin.py", ("# -*- coding: latin-1 -*-\n# café\n" + LOOP).encode("latin-1"),
         ("# -*- coding: latin-1 -*-\n# café\n" + FIXED).encode("latin-1")),
        ("bom.py", ("\ufeff" + LOOP).encode("utf-8"), ("\ufeff" + FIXED).encode("utf-8")),
        ("crlf.py", LOOP.replace("\n", "\r\n").encode(), FIXED.replace("\n", "\r\n").encode()),
        ("cr.py", LOOP.replace("\n", "\r").encode(), FIXED.replace("\n", "\r").encode()),
        ("bom_crlf.py", ("\ufeff" + LOOP).replace("\n", "\r\n").encode("utf-8"),
         ("\ufeff" + FIXED).replace("\n", "\r\n").encode("utf-8")),
    ],
)  # fmt: skip
def test_fix_keeps_encoding_bom_and_newline_style(project, name, data, expected):
    path = project / name
    path.write_bytes(data)
    os.chmod(path, 0o640)
    result = _fix(name)
    assert result.exit_code == 0, result.output
    assert path.read_bytes() == expected  # byte for byte: only the fix changed
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_executable_mode_is_kept(project):
    path = project / "run.py"
    path.write_text("#!/usr/bin/env python\n" + LOOP)
    os.chmod(path, 0o755)
    assert _fix("run.py").exit_code == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o755 and "loss.detach()" in path.read_text()


def _leftovers(directory):
    return [p.name for p in directory.iterdir() if p.name.endswith(".memlint-tmp")]


@pytest.mark.parametrize("failing", ["replace", "write", "fsync", "chmod"])
def test_a_failure_mid_write_leaves_the_original_and_no_temporary_file(project, monkeypatch, failing):
    path = project / "train.py"
    path.write_text(LOOP)
    original = path.read_bytes()

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    if failing == "write":  # the temporary file gets half the data, then the disk is full
        real_fdopen = os.fdopen

        class HalfWriter:
            def __init__(self, handle):
                self.handle = handle

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

            def write(self, data):
                self.handle.write(data[: len(data) // 2])
                fail()

            def __getattr__(self, name):
                return getattr(self.handle, name)

        monkeypatch.setattr(writing.os, "fdopen", lambda fd, mode: HalfWriter(real_fdopen(fd, mode)))
    else:
        monkeypatch.setattr(writing.os, failing, fail)
    result = _fix("train.py")
    assert "memlint: error: train.py: fixes not written: [Errno 28] No space left on device" in result.output
    assert result.exit_code == 2 and "Fixed" not in result.output and "1 fixable" in result.output
    assert path.read_bytes() == original
    assert _leftovers(project) == []


def test_an_interrupt_mid_write_leaves_the_original(tmp_path, monkeypatch):
    path = tmp_path / "train.py"
    path.write_text(LOOP)

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(writing.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomically(path, FIXED.encode(), expected=LOOP.encode())
    assert path.read_text() == LOOP and _leftovers(tmp_path) == []


def test_a_file_changed_since_it_was_read_is_not_overwritten(project, monkeypatch):
    path = project / "train.py"
    path.write_text(LOOP)
    edited_by_someone_else = LOOP + "# edited in the editor meanwhile\n"
    real_process_text = runner.process_text

    def process_text(*args, **kwargs):
        result = real_process_text(*args, **kwargs)
        path.write_text(edited_by_someone_else)  # the race: between memlint's read and its write
        return result

    monkeypatch.setattr(runner, "process_text", process_text)
    result = _fix("train.py")
    assert "memlint: error: train.py: fixes not written:" in result.output and result.exit_code == 2
    assert "changed on disk since it was read; not overwritten" in result.output
    assert path.read_text() == edited_by_someone_else
    assert _leftovers(project) == []


def test_write_atomically_refuses_changed_content(tmp_path):
    path = tmp_path / "a.py"
    path.write_bytes(b"new")
    with pytest.raises(FileChangedError):
        write_atomically(path, b"fixed", expected=b"old")
    assert path.read_bytes() == b"new"


def test_fix_through_a_symlink_keeps_the_link(project):
    (project / "real.py").write_text(LOOP)
    os.symlink("real.py", project / "link.py")
    assert _fix("link.py").exit_code == 0
    assert os.path.islink(project / "link.py")
    assert (project / "real.py").read_text() == FIXED


def test_parallel_fix_run_twice_changes_nothing_the_second_time(project):
    for index in range(runner.PARALLEL_THRESHOLD + 2):
        (project / f"m{index:02}.py").write_bytes(LOOP.replace("\n", "\r\n" if index % 2 else "\n").encode())
    settings = build_settings(ConfigFile(None, {}), Selection(), unsafe_fixes=True)
    files = sorted(project.glob("*.py"))
    mode = runner.Mode(fix=True, write=True)
    first = runner.run(files, settings, mode, jobs=2)
    assert sum(sum(r.fixed.values()) for r in first) == len(files)
    snapshot = {f: f.read_bytes() for f in files}
    second = runner.run(files, settings, mode, jobs=2)
    assert sum(sum(r.fixed.values()) for r in second) == 0
    assert {f: f.read_bytes() for f in files} == snapshot
