"""What memlint reads and writes (issue 25): it writes only regular files, never through a symlink
it did not resolve on purpose, atomically; it reads configuration, ignore, baseline and source files
only when they are regular files of bounded size, so a FIFO or /dev/zero planted by a repository
cannot hang it or fill memory. Every test runs the real command in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, memlint

from memlint.config import MAX_KEY_PARTS
from memlint.pipeline.reading import BASELINE_LIMIT, CONFIG_LIMIT
from memlint.pipeline.tempfiles import SUFFIX

PRECIOUS = "a file memlint must not touch\n"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with findings (ML001) and a file outside it that a link may point to."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tmp_path / "victim.txt").write_text(PRECIOUS, encoding="utf-8")
    return project


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if p.name.endswith(SUFFIX))


# ---------------------------------------------------------------------------- writes


def test_write_baseline_refuses_a_symlink_and_leaves_its_target(tree: Path):
    (tree / "bl.json").symlink_to(tree.parent / "victim.txt")
    result = memlint("check", "--baseline", "bl.json", "--write-baseline", "train.py", cwd=tree)
    assert result.returncode == 2
    assert "memlint: error: bl.json: cannot write: it is a symbolic link" in result.stderr
    assert (tree.parent / "victim.txt").read_text(encoding="utf-8") == PRECIOUS
    assert (tree / "bl.json").is_symlink()
    assert leftovers(tree) == []


def test_output_file_refuses_a_symlink_and_leaves_its_target(tree: Path):
    (tree / "report.sarif").symlink_to(tree.parent / "victim.txt")
    result = memlint("check", "--output-format", "sarif", "-o", "report.sarif", "train.py", cwd=tree)
    assert result.returncode == 2
    assert "cannot write the report to report.sarif: it is a symbolic link" in result.stderr
    assert (tree.parent / "victim.txt").read_text(encoding="utf-8") == PRECIOUS


def test_a_dangling_symlink_is_refused_too(tree: Path):
    """A link to a file that does not exist yet would create the file wherever the link points."""
    (tree / "bl.json").symlink_to(tree.parent / "created-elsewhere.json")
    result = memlint("check", "--baseline", "bl.json", "--write-baseline", "train.py", cwd=tree)
    assert result.returncode == 2 and "symbolic link" in result.stderr
    assert not (tree.parent / "created-elsewhere.json").exists()


@needs_fifo
@pytest.mark.parametrize("option", [["-o"], ["--write-baseline", "--baseline"]])
def test_a_fifo_is_not_written_to(tree: Path, option):
    os.mkfifo(tree / "out")
    result = memlint("check", *option, "out", "train.py", cwd=tree)  # used to wait for a reader forever
    assert result.returncode == 2
    assert "not a regular file: it is a named pipe (FIFO)" in result.stderr


def test_baseline_and_report_are_new_regular_files_with_the_usual_mode(tree: Path):
    old_mask = os.umask(0o022)
    try:
        written = memlint("check", "--baseline", "bl.json", "--write-baseline", "train.py", cwd=tree)
        report = memlint("check", "--output-format", "json", "-o", "report.json", "train.py", cwd=tree)
    finally:
        os.umask(old_mask)
    assert written.returncode == 0 and report.returncode == 1
    for name in ("bl.json", "report.json"):
        info = os.lstat(tree / name)
        assert stat.S_ISREG(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o644, name
    assert len(json.loads((tree / "bl.json").read_text(encoding="utf-8"))["findings"]) == 2
    assert len(json.loads((tree / "report.json").read_text(encoding="utf-8"))) == 2
    assert leftovers(tree) == []


def test_an_existing_baseline_is_replaced_by_a_rename_keeping_its_mode(tree: Path):
    baseline = tree / "bl.json"
    baseline.write_text("old\n", encoding="utf-8")
    os.chmod(baseline, 0o640)
    before = os.stat(baseline).st_ino
    result = memlint("check", "--baseline", "bl.json", "--write-baseline", "train.py", cwd=tree)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(os.stat(baseline).st_mode) == 0o640
    assert os.stat(baseline).st_ino != before  # a new file renamed over the old one: never half written
    assert json.loads(baseline.read_text(encoding="utf-8"))["memlint-baseline"] == 1


def test_a_read_only_baseline_is_not_overwritten(tree: Path):
    baseline = tree / "bl.json"
    baseline.write_text("kept\n", encoding="utf-8")
    os.chmod(baseline, 0o444)
    result = memlint("check", "--baseline", "bl.json", "--write-baseline", "train.py", cwd=tree)
    assert result.returncode == 2 and "read-only" in result.stderr
    assert baseline.read_text(encoding="utf-8") == "kept\n"


def test_a_cache_directory_that_is_a_symlink_is_not_used(tree: Path):
    elsewhere = tree.parent / "elsewhere"
    elsewhere.mkdir()
    (tree / ".memlint_cache").symlink_to(elsewhere, target_is_directory=True)
    result = memlint("check", "train.py", cwd=tree)
    assert result.returncode == 1  # the findings, as without a cache
    assert "not using .memlint_cache as the cache: it is a symbolic link" in result.stderr.replace(str(tree) + os.sep, "")
    assert list(elsewhere.iterdir()) == []


def test_a_cache_format_directory_replaced_by_a_symlink_is_not_written_through(tree: Path):
    assert memlint("check", "train.py", cwd=tree).returncode == 1  # makes the cache
    cache = tree / ".memlint_cache"
    shutil.rmtree(cache / "v1")
    elsewhere = tree.parent / "elsewhere"
    elsewhere.mkdir()
    (cache / "v1").symlink_to(elsewhere, target_is_directory=True)  # as a committed cache could hold
    assert memlint("check", "train.py", cwd=tree).returncode == 1
    assert list(elsewhere.iterdir()) == []


def test_add_noqa_on_a_read_only_file_is_an_error(tree: Path):
    os.chmod(tree / "train.py", 0o444)
    result = memlint("check", "--add-noqa", ".", cwd=tree)
    assert result.returncode == 2  # was 0, with a warning
    assert "memlint: error: train.py: noqa comments not written: the file is read-only (mode 0444)" in result.stderr
    assert (tree / "train.py").read_text(encoding="utf-8") == SOURCE_WITH_FINDINGS


def test_add_noqa_writes_through_no_symlink_out_of_the_paths_named(tree: Path):
    outside = tree.parent / "outside.py"
    outside.write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tree / "linked.py").symlink_to(outside)
    result = memlint("check", "--add-noqa", ".", cwd=tree)
    assert result.returncode == 2
    assert "linked.py: noqa comments not written: it is a symlink to" in result.stderr
    assert outside.read_text(encoding="utf-8") == SOURCE_WITH_FINDINGS
    assert "# noqa: ML001" in (tree / "train.py").read_text(encoding="utf-8")  # the others are done


# ---------------------------------------------------------------------------- reads


@needs_fifo
@pytest.mark.parametrize(
    "name, args",
    [
        ("memlint.toml", ["check", "--config", "memlint.toml", "train.py"]),
        ("memlint.toml", ["check", "train.py"]),  # found by discovery
        ("pyproject.toml", ["check", "train.py"]),
        ("bl.json", ["check", "--baseline", "bl.json", "train.py"]),
    ],
)
def test_a_fifo_as_configuration_or_baseline_is_refused_without_blocking(tree: Path, name, args):
    os.mkfifo(tree / name)
    result = memlint(*args, cwd=tree)
    assert result.returncode == 2
    assert f"{name}: cannot read" in result.stderr and "it is a named pipe (FIFO)" in result.stderr
    assert "Traceback" not in result.stderr


@needs_fifo
def test_a_fifo_as_gitignore_is_refused_without_blocking(tree: Path):
    (tree / ".git").mkdir()  # a work tree: its ignore files are read
    os.mkfifo(tree / ".gitignore")
    result = memlint("check", ".", cwd=tree)
    assert result.returncode == 2
    assert ".gitignore: cannot read: not a regular file: it is a named pipe (FIFO)" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("option", ["--config", "--baseline"])
def test_dev_zero_is_refused(tree: Path, option):
    result = memlint("check", option, "/dev/zero", "train.py", cwd=tree)
    assert result.returncode == 2
    assert "/dev/zero: cannot read" in result.stderr and "character device" in result.stderr


@pytest.mark.parametrize(
    "name, args, limit, what",
    [
        ("memlint.toml", ["check", "--config", "memlint.toml", "train.py"], CONFIG_LIMIT, "a configuration file"),
        (".gitignore", ["check", "."], CONFIG_LIMIT, "an ignore file"),
        ("bl.json", ["check", "--baseline", "bl.json", "train.py"], BASELINE_LIMIT, "a baseline"),
    ],
)
def test_files_over_their_cap_are_refused(tree: Path, name, args, limit, what):
    (tree / ".git").mkdir()
    with open(tree / name, "wb") as handle:
        handle.truncate(limit + 1)  # sparse: costs no disk
    result = memlint(*args, cwd=tree)
    assert result.returncode == 2
    assert f"{name}: cannot read" in result.stderr
    assert f"larger than {limit // 2**20} MiB, the most memlint reads from {what}" in result.stderr


def test_a_configuration_file_at_the_cap_is_read(tree: Path):
    text = 'select = ["ML001"]\n'
    (tree / "memlint.toml").write_text(text + "#" * (CONFIG_LIMIT - len(text) - 1) + "\n", encoding="utf-8")
    assert os.path.getsize(tree / "memlint.toml") == CONFIG_LIMIT
    result = memlint("check", "train.py", cwd=tree)
    assert result.returncode == 1, result.stderr


def test_deeply_nested_toml_is_a_configuration_error(tree: Path):
    depth = 100_000
    (tree / "memlint.toml").write_text("x = " + "[" * depth + "]" * depth + "\n", encoding="utf-8")
    result = memlint("check", "train.py", cwd=tree)
    assert result.returncode == 2
    assert result.stderr.startswith("memlint: error: ")
    assert "memlint.toml: invalid TOML: arrays or inline tables nested too deeply" in result.stderr
    assert "RecursionError" not in result.stderr and "internal error" not in result.stderr


@pytest.mark.parametrize("line", ["[tool.other]\n" + ".".join(["k"] * 100_000) + " = 1", "[" + ".".join(['"k"'] * 100_000) + "]"])
def test_a_dotted_key_of_many_parts_is_refused_before_tomllib_spends_minutes(tree: Path, line):
    """tomllib's time is quadratic in the parts of one key: with 100,000 parts memlint had not
    finished after 60 s."""
    (tree / "pyproject.toml").write_text(line + "\n[tool.memlint]\nselect = ['ML001']\n", encoding="utf-8")
    result = memlint("check", "train.py", cwd=tree)
    assert result.returncode == 2
    assert f"pyproject.toml: invalid TOML: a dotted key or table name of more than {MAX_KEY_PARTS} parts" in result.stderr


def test_many_dots_that_are_not_one_key_are_read(tree: Path):
    numbers = ", ".join(["1.5"] * 2000)  # 2,000 dots on one line, in floats
    (tree / "pyproject.toml").write_text(f"[tool.other]\nweights = [{numbers}]\nkey.a.b = 'x.y.z'\n", encoding="utf-8")
    assert memlint("check", "train.py", cwd=tree).returncode == 1


def test_deeply_nested_baseline_json_is_a_baseline_error(tree: Path):
    depth = 100_000
    (tree / "bl.json").write_text("[" * depth + "]" * depth, encoding="utf-8")
    result = memlint("check", "--baseline", "bl.json", "train.py", cwd=tree)
    assert result.returncode == 2
    assert "bl.json: not a memlint baseline: nested too deeply" in result.stderr


@needs_fifo
def test_a_fifo_named_as_a_source_is_an_error_and_one_met_in_a_walk_is_skipped(tree: Path):
    os.mkfifo(tree / "named.py")
    (tree / "sub").mkdir()
    os.mkfifo(tree / "sub" / "walked.py")
    result = memlint("check", "named.py", "sub", "train.py", cwd=tree)
    assert result.returncode == 2  # a path named was not checked, as a missing one (the others were)
    assert "memlint: error: named.py: not a regular file: it is a named pipe (FIFO)" in result.stderr
    assert f"memlint: warning: {Path('sub', 'walked.py')}: skipped: not a regular file: it is a named pipe" in result.stderr
    assert "train.py:9:5: ML001" in result.stdout
