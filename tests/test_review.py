"""`memlint review --base REF`: findings on changed lines as a GitHub review payload, with
suggestions that, applied as GitHub applies them, give what `memlint check --fix` gives."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from integration_helpers import SOURCE_WITH_FINDINGS, memlint

from memlint.integrations.gitdiff import parse_diff

BASE_SOURCE = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.MSELoss()
total = 0.0
print(total)
"""

OLD_FINDING = """\
import torch
from torch import nn

model = nn.Linear(4, 2)
criterion = nn.MSELoss()
total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss
print(total)
"""


def git(*args: str, cwd: Path) -> str:
    environment = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                   "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}  # fmt: skip
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=environment).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(BASE_SOURCE, encoding="utf-8")
    (tmp_path / "src" / "old.py").write_text(OLD_FINDING, encoding="utf-8")
    git("init", "-q", cwd=tmp_path)
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "base", cwd=tmp_path)
    # The change: train.py gains two findings; old.py keeps its finding and only gains a comment.
    (tmp_path / "src" / "train.py").write_text(SOURCE_WITH_FINDINGS, encoding="utf-8")
    (tmp_path / "src" / "old.py").write_text("# touched\n" + OLD_FINDING, encoding="utf-8")
    git("add", "-A", cwd=tmp_path)
    git("commit", "-q", "-m", "change", cwd=tmp_path)
    return tmp_path


def apply_suggestions(text: str, comments: list[dict]) -> str:
    """What GitHub does when every suggestion is committed: lines start_line..line become the block."""
    lines = text.splitlines()
    for comment in sorted(comments, key=lambda c: c["line"], reverse=True):
        match = re.search(r"(`{3,})suggestion\n(.*?)\n\1", comment["body"], re.DOTALL)
        if not match:
            continue
        first = comment.get("start_line", comment["line"])
        lines[first - 1 : comment["line"]] = match.group(2).split("\n")
    return "\n".join(lines) + "\n"


def test_review_payload_covers_only_changed_lines_and_suggestions_equal_fix(repo: Path):
    result = memlint("review", "--base", "HEAD~1", cwd=repo)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    comments = payload["comments"]
    assert [(c["path"], c.get("start_line"), c["line"]) for c in comments] == [
        ("src/train.py", 9, 11),  # a finding spanning three lines: a multi-line comment
        ("src/train.py", None, 14),
    ]
    assert all(c["side"] == "RIGHT" for c in comments)
    assert all(c.get("start_side", "RIGHT") == "RIGHT" for c in comments)
    assert all("```suggestion\n" in c["body"] and "ML001" in c["body"] for c in comments)
    assert "2 findings" in payload["body"] and "2 with a suggested fix" in payload["body"]

    applied = apply_suggestions(SOURCE_WITH_FINDINGS, comments)
    assert memlint("check", "--fix", "src/train.py", cwd=repo).returncode == 0
    assert applied == (repo / "src" / "train.py").read_text(encoding="utf-8")


def test_review_from_a_subdirectory_names_files_from_the_repository_root(repo: Path):
    result = memlint("review", "--base", "HEAD~1", "--output-format", "markdown", ".", cwd=repo / "src")
    assert result.returncode == 0, result.stderr
    assert "| `src/train.py` | 9-11 | ML001 |" in result.stdout
    assert "| `src/train.py` | 14 | ML001 |" in result.stdout
    assert "old.py" not in result.stdout


def test_markdown_links_a_rule_only_where_its_page_is_hosted(repo: Path):
    """The Action's job summary is this markdown: no `[ML001](None)` when MEMLINT_DOCS_URL is unset."""
    plain = memlint("review", "--base", "HEAD~1", "--output-format", "markdown", cwd=repo)
    assert plain.returncode == 0, plain.stderr
    assert "(None)" not in plain.stdout and "](" not in plain.stdout
    assert plain.stdout.count("| ML001 |") == 2
    hosted = memlint("review", "--base", "HEAD~1", "--output-format", "markdown", cwd=repo,
                     env={"MEMLINT_DOCS_URL": "https://docs.example.org/memlint/{code}.html"})  # fmt: skip
    assert hosted.stdout.count("| [ML001](https://docs.example.org/memlint/ml001.html) |") == 2


def test_review_without_changes_and_with_a_bad_ref(repo: Path):
    nothing = json.loads(memlint("review", "--base", "HEAD", cwd=repo).stdout)
    assert nothing["comments"] == [] and "no GPU-memory findings" in nothing["body"]
    bad = memlint("review", "--base", "no-such-ref", cwd=repo)
    assert bad.returncode == 2
    assert "no-such-ref" in bad.stderr and "Traceback" not in bad.stderr


def test_review_never_runs_repository_code(repo: Path):
    # A textconv filter and an external diff driver configured for the repository would run if the
    # review let git use them; so would a sitecustomize/conftest if memlint imported project code.
    marker = repo / "EXECUTED"
    (repo / ".gitattributes").write_text("*.py diff=evil\n", encoding="utf-8")
    git("config", "diff.evil.textconv", f"sh -c 'touch {marker}; cat \"$1\"' -", cwd=repo)
    git("config", "diff.external", f"sh -c 'touch {marker}'", cwd=repo)
    (repo / "src" / "conftest.py").write_text(f"open({str(marker)!r}, 'w').close()\nimport torch\n", encoding="utf-8")
    (repo / "src" / "train.py").write_text(SOURCE_WITH_FINDINGS + "x = 1\n", encoding="utf-8")
    result = memlint("review", "--base", "HEAD~1", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)["comments"]) == 2
    assert not marker.exists()


def test_unsafe_fixes_are_not_suggested_unless_asked(repo: Path):
    # A module-level accumulator that is returned escapes: ML001's fix is unsafe then.
    source = OLD_FINDING.replace("print(total)\n", "") 
    source = "def evaluate(loader):\n" + "".join("    " + line if line.strip() else line for line in source.splitlines(True)[3:]) + "    return total\n"
    source = "import torch\nfrom torch import nn\n\n" + source
    (repo / "src" / "esc.py").write_text(source, encoding="utf-8")
    check = json.loads(memlint("check", "--select", "ML001", "--output-format", "json", "src/esc.py", cwd=repo).stdout)
    if not check or check[0]["fix"] is None or check[0]["fix"]["applicability"] != "unsafe":
        pytest.skip("no unsafe ML001 fix for this snippet in this version of the rule")
    def ml001(*extra: str) -> dict:
        comments = json.loads(memlint("review", "--base", "HEAD", "--select", "ML001", *extra, cwd=repo).stdout)["comments"]
        assert len(comments) == 1
        return comments[0]

    safe_only = ml001()
    assert "```suggestion" not in safe_only["body"] and "--unsafe-fixes" in safe_only["body"]
    unsafe = ml001("--unsafe-fixes")
    assert "```suggestion" in unsafe["body"] and "(unsafe: it may change behaviour" in unsafe["body"]


def test_parse_diff_handles_pure_additions_deletions_and_quoted_names():
    diff = (
        "diff --git a/x.py b/x.py\n--- a/x.py\n+++ b/x.py\n@@ -3,0 +4,2 @@\n+a\n+b\n@@ -10 +12 @@\n-c\n+d\n"
        "@@ -20,2 +21,0 @@\n-e\n-f\n"
        "diff --git a/gone.py b/gone.py\n--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"
        '--- a/"sp\\303\\251cial.py"\n+++ "b/sp\\303\\251cial.py"\n@@ -0,0 +1 @@\n+z\n'
    )
    assert parse_diff(diff) == {"x.py": {4, 5, 12}, "spécial.py": {1}}


def test_notebook_findings_of_changed_cells_are_listed_in_the_body(repo: Path):
    def nb(*sources: str) -> str:
        cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                  "source": s.splitlines(keepends=True)} for s in sources]  # fmt: skip
        return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1) + "\n"

    loop = "for x, y in loader:\n    loss = criterion(model(x), y)\n    {name} += loss\n"
    setup = "import torch\nfrom torch import nn\nmodel = nn.Linear(4, 2)\ncriterion = nn.MSELoss()\nold = 0.0\nnew = 0.0\n"
    (repo / "train.ipynb").write_text(nb(setup, loop.format(name="old")), encoding="utf-8")
    git("add", "-A", cwd=repo)
    git("commit", "-q", "-m", "notebook", cwd=repo)
    (repo / "train.ipynb").write_text(nb(setup, loop.format(name="old"), loop.format(name="new")), encoding="utf-8")
    payload = json.loads(memlint("review", "--base", "HEAD", cwd=repo).stdout)
    assert payload["comments"] == []
    assert "`train.ipynb` cell 3, line 3: **ML001** `new` accumulates" in payload["body"]
    assert "cell 2" not in payload["body"]  # unchanged cell, old finding
