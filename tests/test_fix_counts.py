"""One fix count everywhere: `check`'s "[*] N fixable", `--diff`'s "Would fix N" and `--fix`'s "Fixed N"
/ "(N fixed, ...)" are the same number: the findings whose fix applies under the --unsafe-fixes
setting (a fix that several findings share counts once per finding)."""

from __future__ import annotations

import re
import shutil

import pytest
from conftest import REPO, invoke, write


def _number(pattern: str, output: str) -> int:
    match = re.search(pattern, output)
    return int(match.group(1)) if match else 0


def _three_counts(directory, monkeypatch, *options: str) -> tuple[int, int, int]:
    monkeypatch.chdir(directory)
    checked = invoke("check", "--no-cache", *options, ".")
    diffed = invoke("check", "--no-cache", "--diff", *options, ".")
    fixed = invoke("check", "--no-cache", "--fix", *options, ".")
    assert "not applied" not in checked.output + diffed.output + fixed.output
    return (
        _number(r"\[\*\] (\d+) fixable", checked.output),
        _number(r"Would fix (\d+) finding", diffed.output),
        _number(r"Fixed (\d+) finding", fixed.output) or _number(r"\((\d+) fixed, \d+ remaining\)", fixed.output),
    )


@pytest.mark.parametrize("unsafe", ["--no-unsafe-fixes", "--unsafe-fixes"])
def test_check_diff_and_fix_agree_on_the_fixtures(tmp_path, monkeypatch, unsafe):
    copy = tmp_path / "fixtures"
    shutil.copytree(REPO / "fixtures", copy)
    fixable, would_fix, fixed = _three_counts(copy, monkeypatch, unsafe)
    assert fixable > 0
    assert fixable == would_fix == fixed


def test_findings_sharing_one_fix_count_once_each(tmp_path, monkeypatch):
    """ML016 gives every call through one import line the same fix; `--fix` used to count it once."""
    write(
        tmp_path / "train.py",
        """
        from torch.cuda.amp import autocast, GradScaler
        model = Net().cuda()
        scaler = GradScaler()
        for input, target in data:
            with autocast():
                output = model(input)
            scaler.scale(loss).backward()
        """,
    )
    assert _three_counts(tmp_path, monkeypatch, "--select", "ML016") == (2, 2, 2)
