"""Every kind of configuration mistake exits 2 with the file, the key and what was expected."""

from __future__ import annotations

import pytest
from conftest import EVAL_LOOP, invoke, write

CASES = [
    ("[tool.memlint\n", "pyproject.toml: invalid TOML: "),
    ('[tool.memlint]\nselect = ["ML001"\n', "pyproject.toml: invalid TOML: "),
    ("tool = 3\n", "pyproject.toml: invalid value for 'tool': expected a table, got int"),
    ("[tool]\nmemlint = 3\n", "pyproject.toml [tool.memlint]: expected a table of settings, got int 3"),
    ('[tool.memlint]\nselct = ["ML001"]\n', "pyproject.toml [tool.memlint]: unknown key 'selct' (did you mean 'select'?)"),
    ("[tool.memlint]\nfrobnicate = 1\n", "pyproject.toml [tool.memlint]: unknown key 'frobnicate'"),
    ('[tool.memlint]\nselect = "ML001"\n', "[tool.memlint]: invalid value for 'select': expected a list of strings"),
    ("[tool.memlint]\nignore = [1]\n", "[tool.memlint]: invalid value for 'ignore': expected a list of strings"),
    ('[tool.memlint]\nunsafe-fixes = "yes"\n', "[tool.memlint]: invalid value for 'unsafe-fixes': expected true or false"),
    ('[tool.memlint]\ngpu-memory = "lots"\n', "[tool.memlint]: invalid value for 'gpu-memory': expected a size such as"),
    ("[tool.memlint]\nmemory-headroom = 1.5\n", "invalid value for 'memory-headroom': expected a number from 0 up to"),
    ("[tool.memlint]\nmax-linear-params = -1\n", "invalid value for 'max-linear-params': expected a positive integer"),
    ("[tool.memlint]\nmin-retained-chain = 1\n", "invalid value for 'min-retained-chain': expected an integer of at least 2"),
    ("[tool.memlint]\nprefer-inference-mode = 1\n", "invalid value for 'prefer-inference-mode': expected true or false"),
    ('[tool.memlint]\nper-file-ignores = {"a.py" = "ML001"}\n', "invalid value for 'per-file-ignores': expected a table of glob"),
    ('[tool.memlint.per-file-ignores]\n"a.py" = ["NOPE"]\n', "pyproject.toml: per-file-ignores 'a.py': unknown rule selector 'NOPE'"),
    ('[tool.memlint]\nselect = ["NOPE1"]\n', "pyproject.toml: unknown rule selector 'NOPE1'"),
]


@pytest.mark.parametrize("content, expected", CASES, ids=[expected.split(": ", 1)[-1][:40] for _, expected in CASES])
def test_pyproject_mistakes_exit_two_naming_file_and_key(project, content, expected):
    (project / "pyproject.toml").write_text(content)
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "train.py")
    assert result.exit_code == 2
    assert result.output.startswith("memlint: error: ")
    assert expected in result.output
    assert "Traceback" not in result.output


def test_undecodable_config_file(project):
    (project / "pyproject.toml").write_bytes(b'[tool.memlint]\nselect = ["\xff"]\n')
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "train.py")
    assert result.exit_code == 2
    assert "pyproject.toml: cannot read: 'utf-8' codec can't decode" in result.output


@pytest.mark.parametrize(
    "content, expected",
    [("select = 3\n", "custom.toml: invalid value for 'select': expected a list of strings"),
     ("[memlint]\nselect = []\n", "custom.toml: unknown key 'memlint'"),
     ("select = [\n", "custom.toml: invalid TOML")],
)  # fmt: skip
def test_explicit_config_file_mistakes(project, content, expected):
    (project / "custom.toml").write_text(content)
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--config", "custom.toml", "train.py")
    assert result.exit_code == 2
    assert expected in result.output


def test_command_line_selector_mistake(project):
    write(project / "train.py", EVAL_LOOP)
    result = invoke("check", "--select", "ML9999", "train.py")
    assert result.exit_code == 2
    assert "command line: unknown rule selector 'ML9999'" in result.output
