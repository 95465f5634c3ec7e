"""The command-line options Ruff users reach for (issue 29): --fix-only, --ignore-noqa, --isolated,
--exclude / --extend-exclude, --per-file-ignores / --extend-per-file-ignores, each run through
`memlint check` as a user runs it."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from integration_helpers import REPO, SOURCE_WITH_FINDINGS, memlint

EVAL_WITHOUT_NO_GRAD = (REPO / "fixtures" / "ml002_eval_without_no_grad.py").read_text(encoding="utf-8")


def findings(cwd: Path, *args: str) -> tuple[int, list[tuple[str, str]]]:
    """(exit code, [(file, code)]) of a check in concise format, without the cache unless asked."""
    cache = [] if "--cache" in args else ["--no-cache"]
    args = tuple(a for a in args if a != "--cache")
    result = memlint("check", *cache, "--output-format", "concise", *args, cwd=cwd)
    assert result.returncode in (0, 1), result.stderr
    found = [(line.split(":")[0], line.split()[1]) for line in result.stdout.splitlines() if ": ML" in line]
    return result.returncode, sorted(found)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("a.py", "sub/b.py", "build/c.py"):  # build/ is excluded by default
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    return tmp_path


def files(result: tuple[int, list[tuple[str, str]]]) -> list[str]:
    return sorted({name for name, _ in result[1]})


# ---------------------------------------------------------------------------- --exclude, --extend-exclude


def test_exclude_replaces_the_configured_and_default_excludes(project):
    (project / "memlint.toml").write_text('extend-exclude = ["a.py"]\n', encoding="utf-8")
    assert files(findings(project, ".")) == ["sub/b.py"]
    # --exclude replaces `exclude` (build/ is linted again); the file's extend-exclude still applies.
    assert files(findings(project, "--exclude", "sub", ".")) == ["build/c.py"]
    assert files(findings(project, "--exclude", "sub,build", ".")) == []


def test_extend_exclude_adds_and_is_relative_to_the_working_directory(project):
    assert files(findings(project, "--extend-exclude", "sub/b.py", ".")) == ["a.py"]
    # A subproject's own configuration does not move the command line's patterns.
    (project / "sub" / "memlint.toml").write_text('select = ["ML001"]\n', encoding="utf-8")
    (project / "sub" / "c.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    assert files(findings(project, "--extend-exclude", "sub/b.py", ".")) == ["a.py", "sub/c.py"]
    assert files(findings(project / "sub", "--extend-exclude", "b.py", ".")) == ["c.py"]
    # A file named on the command line is linted unless --force-exclude, as for configured excludes.
    assert files(findings(project, "--extend-exclude", "a.py", "a.py")) == ["a.py"]
    assert files(findings(project, "--extend-exclude", "a.py", "--force-exclude", "a.py")) == []


# ---------------------------------------------------------------------------- --per-file-ignores


def test_per_file_ignores_replace_and_extend(project):
    (project / "memlint.toml").write_text('per-file-ignores = { "a.py" = ["ML001"] }\n', encoding="utf-8")
    assert files(findings(project, ".")) == ["sub/b.py"]
    assert files(findings(project, "--per-file-ignores", "sub/*:ML001", ".")) == ["a.py"]  # replaces the file's
    assert files(findings(project, "--extend-per-file-ignores", "sub/*:ML", ".")) == []  # adds; a prefix
    assert files(findings(project, "--per-file-ignores", "b.py:ML001,a.py:ML001", ".")) == []  # no "/": any directory


@pytest.mark.parametrize(("value", "message"), [("sub", "expected PATTERN:CODE"), ("sub/*:", "expected PATTERN:CODE"), ("sub/*:XX9", "XX9")])
def test_a_wrong_per_file_ignore_is_an_error(project, value, message):
    result = memlint("check", "--no-cache", "--per-file-ignores", value, ".", cwd=project)
    assert result.returncode == 2 and message in result.stderr


# ---------------------------------------------------------------------------- --ignore-noqa


def test_ignore_noqa_reports_what_comments_suppress(project):
    text = SOURCE_WITH_FINDINGS.replace("    total += (\n", "    total += (  # noqa: ML001\n")
    (project / "a.py").write_text(text, encoding="utf-8")
    (project / "sub" / "b.py").write_text("# memlint: ignore-file\n" + SOURCE_WITH_FINDINGS, encoding="utf-8")
    assert findings(project, "--cache", "a.py", "sub/b.py")[1] == [("a.py", "ML001")]
    # The cache keeps the two apart: the same files, with the flag, give every finding.
    assert findings(project, "--cache", "--ignore-noqa", "a.py", "sub/b.py")[1] == [("a.py", "ML001")] * 2 + [("sub/b.py", "ML001")] * 2
    # ML100 does not judge comments that --ignore-noqa ignores.
    assert findings(project, "--extend-select", "ML100", "a.py")[1] == [("a.py", "ML001")]
    assert ("a.py", "ML100") not in findings(project, "--extend-select", "ML100", "--ignore-noqa", "a.py")[1]


# ---------------------------------------------------------------------------- --isolated


def test_isolated_ignores_every_configuration_file(project):
    (project / "pyproject.toml").write_text('[tool.memlint]\nextend-exclude = ["a.py"]\n', encoding="utf-8")
    (project / "sub" / "memlint.toml").write_text('extend-exclude = ["b.py"]\n', encoding="utf-8")
    assert files(findings(project, ".")) == []
    assert files(findings(project, "--isolated", ".")) == ["a.py", "sub/b.py"]  # the defaults: build/ stays out
    assert files(findings(project, "--isolated", "--ignore", "ML001", ".")) == []  # the command line still counts
    both = memlint("check", "--isolated", "--config", "pyproject.toml", ".", cwd=project)
    assert both.returncode == 2 and "--isolated" in both.stderr
    shown = json.loads(memlint("check", "--isolated", "--show-settings", ".", cwd=project).stdout)
    assert shown["configuration"] is None


# ---------------------------------------------------------------------------- --fix-only


@pytest.fixture
def fixable(tmp_path: Path) -> Path:
    (tmp_path / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")  # two ML001, safe fixes
    (tmp_path / "evaluate.py").write_text(EVAL_WITHOUT_NO_GRAD, encoding="utf-8")  # ML002: an unsafe fix only
    return tmp_path


def test_fix_only_fixes_and_reports_only_what_it_fixed(fixable):
    result = memlint("check", "--no-cache", "--select", "ML001,ML002", "--fix-only", ".", cwd=fixable)
    assert result.returncode == 0, result.stderr  # ML002 is left, and neither reported nor failing
    assert result.stdout == "Fixed 2 findings.\n"
    assert "loss.item()" in (fixable / "train.py").read_text(encoding="utf-8")
    assert (fixable / "evaluate.py").read_text(encoding="utf-8") == EVAL_WITHOUT_NO_GRAD
    again = memlint("check", "--no-cache", "--select", "ML001,ML002", "--fix-only", ".", cwd=fixable)
    assert again.returncode == 0 and again.stdout == ""  # nothing fixed: nothing said


def test_fix_only_with_exit_non_zero_on_fix_and_machine_formats(fixable):
    strict = memlint("check", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", "--output-format", "json", ".", cwd=fixable)
    assert strict.returncode == 1 and strict.stdout == ""  # no findings in any format
    untouched = memlint("check", "--no-cache", "--fix-only", "--exit-non-zero-on-fix", ".", cwd=fixable)
    assert untouched.returncode == 0


def test_fix_only_on_standard_input_gives_the_fixed_source_and_reports_no_finding(fixable):
    result = memlint("check", "--no-cache", "--fix-only", "--stdin-filename", "train.py", "-", cwd=fixable, input=SOURCE_WITH_FINDINGS)
    assert result.returncode == 0 and result.stderr == "Fixed 2 findings.\n"  # the report goes to stderr
    assert "loss.item()" in result.stdout and "ML001" not in result.stdout


def test_the_options_are_listed_in_help(tmp_path):
    shown = memlint("check", "--help", cwd=tmp_path).stdout
    for option in ("--fix-only", "--ignore-noqa", "--isolated", "--exclude", "--extend-exclude", "--per-file-ignores",
                   "--extend-per-file-ignores", "--fail-level"):  # fmt: skip
        assert option in shown


# ---------------------------------------------------------------------------- --watch


def test_watch_checks_again_when_a_file_changes(tmp_path):
    import os
    import queue
    import sys
    import threading
    import time

    (tmp_path / "train.py").write_text("import torch\n", encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1"}
    process = subprocess.Popen(
        [sys.executable, "-m", "memlint", "check", "--watch", "--no-cache", "--select", "ML001", "--fix", "."],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()

    def until_watching() -> list[str]:
        seen, deadline = [], time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=1)
            except queue.Empty:
                assert process.poll() is None, process.stderr.read()
                continue
            seen.append(line)
            if "Watching for file changes." in line:
                return seen
        raise AssertionError(f"no run within 90 s: {seen}")

    try:
        first = until_watching()
        assert "All checks passed!\n" in first
        (tmp_path / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
        second = until_watching()
        assert sum(": ML001 " in line for line in second) == 2 and "Found 2 findings.\n" in second
        assert (tmp_path / "train.py").read_text(encoding="utf-8") == SOURCE_WITH_FINDINGS  # --fix is not applied
        time.sleep(1.5)  # nothing changed: no new run
        assert lines.empty()
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert "--fix is not supported in watch mode" in process.stderr.read()
