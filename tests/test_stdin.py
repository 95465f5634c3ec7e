"""`memlint check --stdin-filename PATH -`, as an editor calls it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from integration_helpers import SOURCE_WITH_FINDINGS, memlint

CONFIG = """\
[tool.memlint]
extend-exclude = ["generated"]
per-file-ignores = { "legacy/*" = ["ML001"] }
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    return tmp_path


def test_stdin_is_linted_under_the_given_name(project: Path):
    result = memlint("check", "--output-format", "json", "--stdin-filename", "src/train.py", "-",
                     cwd=project, input=SOURCE_WITH_FINDINGS)  # fmt: skip
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    assert [(f["filename"], f["location"]["row"]) for f in findings] == [("src/train.py", 9), ("src/train.py", 14)]


def test_fix_writes_the_fixed_source_to_stdout_and_findings_to_stderr(project: Path):
    (project / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    assert memlint("check", "--fix", "train.py", cwd=project).returncode == 0
    expected = (project / "train.py").read_text(encoding="utf-8")
    assert expected != SOURCE_WITH_FINDINGS

    result = memlint("check", "--fix", "--stdin-filename", "train.py", "-", cwd=project, input=SOURCE_WITH_FINDINGS)
    assert result.returncode == 0
    assert result.stdout == expected
    assert "Fixed 2 findings." in result.stderr

    # Findings that remain are reported on stderr, never mixed into the source.
    unfixable = "import torch\nfor x in torch.zeros(3)\n    pass\n"
    result = memlint("check", "--fix", "--output-format", "concise", "--stdin-filename", "b.py", "-",
                     cwd=project, input=unfixable)  # fmt: skip
    assert result.returncode == 1
    assert result.stdout == unfixable
    assert "b.py:2:" in result.stderr and "ML000" in result.stderr


def test_per_file_ignores_and_excludes_follow_the_stdin_filename(project: Path):
    ignored = memlint("check", "--stdin-filename", "legacy/old.py", "-", cwd=project, input=SOURCE_WITH_FINDINGS)
    assert ignored.returncode == 0, ignored.stdout
    excluded = memlint("check", "--fix", "--stdin-filename", "generated/x.py", "-", cwd=project, input=SOURCE_WITH_FINDINGS)
    assert excluded.returncode == 0
    assert excluded.stdout == SOURCE_WITH_FINDINGS  # passed through unchanged


def test_diff_of_stdin(project: Path):
    result = memlint("check", "--diff", "--stdin-filename", "t.py", "-", cwd=project, input=SOURCE_WITH_FINDINGS)
    assert result.returncode == 1
    assert "--- a/t.py" in result.stdout and "+    ).item()" in result.stdout


def test_stdin_cannot_be_mixed_with_paths(project: Path):
    result = memlint("check", "-", "other.py", cwd=project, input="")
    assert result.returncode == 2
    assert "cannot be combined" in result.stderr and "Traceback" not in result.stderr


# ---------------------------------------------------------------------------- every option of check works with `-`


def _stdin(project: Path, *options: str):
    return memlint("check", *options, "--stdin-filename", "src/train.py", "-", cwd=project, input=SOURCE_WITH_FINDINGS)


def test_statistics_of_stdin(project: Path):
    result = _stdin(project, "--statistics")
    assert result.returncode == 1
    assert result.stdout.startswith("2\tML001\t[*] accumulated-graph\nFound 2 findings.\n")
    (project / "src").mkdir()
    (project / "src" / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    assert memlint("check", "--statistics", "src/train.py", cwd=project).stdout == result.stdout  # as for a file


def test_quiet_and_silent_on_stdin(project: Path):
    quiet = _stdin(project, "-q", "--output-format", "concise")
    assert quiet.returncode == 1
    assert quiet.stdout.count("ML001") == 2 and "Found" not in quiet.stdout
    silent = _stdin(project, "-s")
    assert silent.returncode == 1 and silent.stdout == "" and silent.stderr == ""


def test_output_file_of_stdin(project: Path):
    result = _stdin(project, "-o", "report.json", "--output-format", "json")
    assert result.returncode == 1 and result.stdout == ""
    report = json.loads((project / "report.json").read_text(encoding="utf-8"))
    assert [f["filename"] for f in report] == ["src/train.py", "src/train.py"]
    # With --fix the fixed source still goes to standard output, and the report to the file.
    fixed = _stdin(project, "--fix", "-o", "fixed.txt")
    assert fixed.returncode == 0 and ".item()" in fixed.stdout
    assert (project / "fixed.txt").read_text(encoding="utf-8") == "Fixed 2 findings.\n"


def test_show_fixes_and_exit_options_on_stdin(project: Path):
    result = _stdin(project, "--fix", "--show-fixes", "--exit-non-zero-on-fix")
    assert result.returncode == 1
    assert "- src/train.py:\n    2 × ML001 (accumulated-graph)" in result.stderr
    assert _stdin(project, "--exit-zero").returncode == 0


def test_show_files_and_show_settings_of_stdin(project: Path):
    assert _stdin(project, "--show-files").stdout == "src/train.py\n"
    excluded = memlint("check", "--show-files", "--stdin-filename", "generated/x.py", "-", cwd=project, input="")
    assert excluded.returncode == 0 and excluded.stdout == ""
    shown = json.loads(memlint("check", "--show-settings", "--stdin-filename", "legacy/old.py", "-", cwd=project, input="").stdout)
    assert shown["file"] == "legacy/old.py" and "ML001" not in shown["rules for the file"]


@pytest.mark.parametrize("option", ["--project-context", "--no-project-context", "--add-noqa"])
def test_options_for_files_only_are_refused_on_stdin(project: Path, option: str):
    result = _stdin(project, option)
    assert result.returncode == 2
    assert result.stderr.startswith(f"memlint: error: {option}") and "standard input" in result.stderr
    assert result.stdout == ""
