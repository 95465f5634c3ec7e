"""Adopting memlint on legacy code: `--add-noqa`, `--baseline` and `--write-baseline`."""

from __future__ import annotations

import json
from pathlib import Path

from integration_helpers import SOURCE_WITH_FINDINGS, memlint

from memlint.integrations.noqa import add_noqa, with_noqa


def test_add_noqa_silences_every_current_finding(tmp_path: Path):
    (tmp_path / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    result = memlint("check", "--add-noqa", ".", cwd=tmp_path)
    assert result.returncode == 0
    assert "Added 2 noqa directives." in result.stderr
    text = (tmp_path / "train.py").read_text(encoding="utf-8")
    assert "    total += (  # noqa: ML001\n" in text
    assert "total += loss  # noqa: ML001\n" in text
    assert memlint("check", ".", cwd=tmp_path).returncode == 0
    again = memlint("check", "--add-noqa", ".", cwd=tmp_path)
    assert "Added 0 noqa directives." in again.stderr
    assert (tmp_path / "train.py").read_text(encoding="utf-8") == text


def test_noqa_comments_are_merged():
    assert with_noqa("x = 1  # noqa: E501", ["ML001"]) == "x = 1  # noqa: E501, ML001"
    assert with_noqa("x = 1  # noqa:ML002", ["ML001"]) == "x = 1  # noqa:ML002, ML001"
    assert with_noqa("x = 1  # noqa", ["ML001"]) == "x = 1  # noqa"  # already suppresses everything
    assert with_noqa("x = 1  # keep me", ["ML003", "ML001"]) == "x = 1  # keep me  # noqa: ML001, ML003"
    assert with_noqa("x = 1  # noqa: ML001", ["ML001"]) == "x = 1  # noqa: ML001"
    # a space-separated list, as flake8 and Ruff accept it, is read whole
    assert with_noqa("x = 1  # noqa: E501 ML002", ["ML001"]) == "x = 1  # noqa: E501, ML002, ML001"
    assert with_noqa("x = 1  # noqa: E501 ML001", ["ML001"]) == "x = 1  # noqa: E501 ML001"


def test_add_noqa_leaves_lines_ending_inside_strings_or_continuations():
    from memlint.diagnostics import Diagnostic, Location, Severity

    text = 'x = f("""\nabc""")\ny = 1 + \\\n    2\nz = 3\r\n'
    found = [
        Diagnostic("ML001", "n", "m", Severity.WARNING, "a.py", Location(row, 1), Location(row, 2))
        for row in (1, 3, 5)
    ]
    new_text, added, skipped = add_noqa(text, found)
    assert (added, skipped) == (1, 2)
    assert new_text == text.replace("z = 3\r\n", "z = 3  # noqa: ML001\r\n")


def test_baseline_reports_only_new_findings_and_survives_line_shifts(tmp_path: Path):
    target = tmp_path / "src" / "train.py"
    target.parent.mkdir()
    target.write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    written = memlint("check", "--baseline", "memlint-baseline.json", "--write-baseline", ".", cwd=tmp_path)
    assert written.returncode == 0 and "Wrote 2 findings" in written.stderr
    entries = json.loads((tmp_path / "memlint-baseline.json").read_text(encoding="utf-8"))["findings"]
    assert [e["path"] for e in entries] == ["src/train.py", "src/train.py"]

    # Lines inserted above the old findings, and one new finding appended.
    new_loop = "for x, y in loader:\n    loss = criterion(model(x), y)\n    grand += loss\n"
    target.write_text("# header\n\n" + SOURCE_WITH_FINDINGS + "grand = 0.0\n" + new_loop, encoding="utf-8")
    result = memlint("check", "--output-format", "json", "--baseline", "memlint-baseline.json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert [(f["code"], f["location"]["row"]) for f in json.loads(result.stdout)] == [("ML001", 21)]

    # From another directory, with the baseline path given from there: the same answer.
    other = memlint("check", "--output-format", "json", "--baseline", "../memlint-baseline.json", ".", cwd=tmp_path / "src")
    assert [f["location"]["row"] for f in json.loads(other.stdout)] == [21]


def test_baseline_counts_identical_findings(tmp_path: Path):
    target = tmp_path / "t.py"
    target.write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    memlint("check", "--baseline", "b.json", "--write-baseline", "t.py", cwd=tmp_path)
    duplicate = SOURCE_WITH_FINDINGS.split("print(total)\n", 1)[1]  # the second loop, once more
    target.write_text(SOURCE_WITH_FINDINGS + duplicate, encoding="utf-8")
    result = memlint("check", "--output-format", "json", "--baseline", "b.json", "t.py", cwd=tmp_path)
    assert len(json.loads(result.stdout)) == 1


def test_baseline_errors_are_clear(tmp_path: Path):
    (tmp_path / "t.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    missing = memlint("check", "--baseline", "nope.json", "t.py", cwd=tmp_path)
    assert missing.returncode == 2 and "--write-baseline" in missing.stderr
    (tmp_path / "bad.json").write_text("[1, 2]", encoding="utf-8")
    bad = memlint("check", "--baseline", "bad.json", "t.py", cwd=tmp_path)
    assert bad.returncode == 2 and "not a memlint baseline" in bad.stderr
    alone = memlint("check", "--write-baseline", "t.py", cwd=tmp_path)
    assert alone.returncode == 2 and "needs --baseline" in alone.stderr
    for output in (missing, bad, alone):
        assert "Traceback" not in output.stderr


def test_adoption_options_refuse_standard_input(tmp_path: Path):
    for option in (["--add-noqa"], ["--baseline", "b.json"]):
        result = memlint("check", *option, "--stdin-filename", "a.py", "-", cwd=tmp_path, input=SOURCE_WITH_FINDINGS)
        assert result.returncode == 2 and "standard input" in result.stderr
