"""memlint.api, the public Python API, used as a program would use it (a fresh interpreter)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, write

from memlint import api

SOURCE = EVAL_LOOP.lstrip("\n")  # `total += loss` on line 6


def test_lint_source_finds_what_the_command_line_finds():
    findings = api.lint_source(SOURCE, "train.py")
    assert [(d.code, d.location.row, d.location.column) for d in findings] == [("ML001", 6, 5)]
    assert findings[0].fix is not None and findings[0].to_json()["code"] == "ML001"


def test_selection_works_as_on_the_command_line():
    assert api.lint_source(EVAL_LOOP, "train.py", ignore=["ML001"]) == []
    assert api.lint_source(EVAL_LOOP, "train.py", select=["ML002"]) == []


def test_fix_source_returns_the_fixed_text_and_what_was_fixed():
    result = api.fix_source(EVAL_LOOP, "train.py")
    assert "total += loss.detach()" in result.text
    assert result.fixed == {"ML001": 1} and result.remaining == []
    compile(result.text, "train.py", "exec")  # the fixed text parses
    assert api.lint_source(result.text, "train.py") == []  # and re-linting it finds nothing


def test_configuration_is_found_from_the_paths(tmp_path: Path):
    write(tmp_path / "pyproject.toml", '[tool.memlint]\nignore = ["ML001"]\n')
    write(tmp_path / "src" / "train.py", EVAL_LOOP)
    assert api.lint_paths([tmp_path / "src"]) == []
    write(tmp_path / "other.toml", "")
    found = api.lint_paths([tmp_path / "src"], config=tmp_path / "other.toml")
    assert [d.code for d in found] == ["ML001"]


def test_fix_paths_writes_only_inside_the_paths(tmp_path: Path):
    write(tmp_path / "a" / "train.py", EVAL_LOOP)
    write(tmp_path / "b" / "train.py", EVAL_LOOP)
    assert api.fix_paths([tmp_path / "a"]) == []
    assert "loss.detach()" in (tmp_path / "a" / "train.py").read_text(encoding="utf-8")
    assert "loss.detach()" not in (tmp_path / "b" / "train.py").read_text(encoding="utf-8")
    assert [d.code for d in api.lint_paths([tmp_path / "b"])] == ["ML001"]


def test_a_bad_configuration_raises_config_error(tmp_path: Path):
    write(tmp_path / "memlint.toml", 'selct = ["ML001"]\n')
    with pytest.raises(api.ConfigError, match="selct"):
        api.lint_paths([tmp_path])


def test_rules_lists_every_rule_with_its_documentation():
    listed = api.rules()
    codes = [rule.code for rule in listed]
    assert codes == sorted(codes) and "ML001" in codes and "ML017" in codes
    ml017 = next(rule for rule in listed if rule.code == "ML017")
    assert not ml017.default_enabled and "## What it does" in ml017.documentation


def test_the_api_in_a_fresh_interpreter_does_not_import_torch(tmp_path: Path):
    write(tmp_path / "train.py", EVAL_LOOP)
    program = (
        "import json, sys\n"
        "from memlint import api\n"
        "found = api.lint_paths(['train.py'])\n"
        "print(json.dumps([d.to_json() for d in found]))\n"
        "print('torch' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    findings, torch_loaded = done.stdout.splitlines()
    assert [f["code"] for f in json.loads(findings)] == ["ML001"] and torch_loaded == "False"
