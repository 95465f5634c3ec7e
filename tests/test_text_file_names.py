"""Text output shows a file name with terminal control characters escaped (`\\x1b`), not stripped
(the name shown would name another file) and not raw (the terminal would interpret it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from integration_helpers import memlint
from memlint.report.text import shown_name

SOURCE = "import torch\nmodel = torch.nn.Linear(2, 2)\ntotal = 0\nfor x in loader:\n    total += model(x).sum()\n"


@pytest.mark.parametrize(
    "name, shown",
    [
        ("a\x1b[31mb.py", "a\\x1b[31mb.py"),
        ("new\nline.py", "new\\x0aline.py"),
        ("tab\t\x7f\x9b.py", "tab\\x09\\x7f\\x9b.py"),
        ("evil\u202egnp.py", "evil\\u202egnp.py"),
        ("undecodable\udcff.py", "undecodable\\xff.py"),
        ("dir\\sub/ünïcode.py", "dir\\sub/ünïcode.py"),
    ],
)
def test_shown_name(name: str, shown: str):
    assert shown_name(name) == shown


@pytest.mark.skipif(sys.platform == "win32", reason="ESC is not allowed in Windows file names")
@pytest.mark.parametrize("output_format", ["full", "concise"])
def test_escape_sequences_in_file_names_are_shown_escaped(tmp_path: Path, output_format: str):
    name = "a\x1b[31mb.py"
    (tmp_path / name).write_text(SOURCE, encoding="utf-8")
    result = memlint("check", "--output-format", output_format, ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "a\\x1b[31mb.py:5:5: ML001" in result.stdout
    assert "\x1b" not in result.stdout
    # Machine-readable formats keep the real name (JSON escapes it itself).
    (finding,) = json.loads(memlint("check", "--output-format", "json", ".", cwd=tmp_path).stdout)
    assert os.path.basename(finding["filename"]) == name
