"""A bug in memlint exits 2 with one line saying so, never a traceback and exit 1 ("findings left")."""

from __future__ import annotations

import pytest
from conftest import memlint_subprocess, write

# Loaded by Python at start-up (PYTHONPATH names its folder): replaces the function named by
# $MEMLINT_TEST_BREAK with one that raises, as a bug in memlint would.
SITECUSTOMIZE = """
import importlib, os

target = os.environ.get("MEMLINT_TEST_BREAK")
if target:
    module, attribute = target.split(":")

    def broken(*args, **kwargs):
        raise RuntimeError("deliberately broken\\nfor a test")

    setattr(importlib.import_module(module), attribute, broken)
"""


@pytest.fixture
def broken(project, tmp_path_factory, monkeypatch):
    """Break `module:attribute` in memlint processes started by memlint_subprocess."""
    folder = tmp_path_factory.mktemp("site")
    write(folder / "sitecustomize.py", SITECUSTOMIZE)
    monkeypatch.setenv("PYTHONPATH", str(folder))
    monkeypatch.delenv("MEMLINT_TRACEBACK", raising=False)

    def breaking(target: str) -> None:
        monkeypatch.setenv("MEMLINT_TEST_BREAK", target)

    write(project / "train.py", "import torch\n")
    return breaking


@pytest.mark.parametrize(
    "target, command",
    [
        ("memlint.pipeline.files:discover_files", ["check", "."]),  # imported by name when the CLI loads
        ("memlint.pipeline.registry:all_rules", ["rules"]),
        ("memlint.pipeline.cache:clean", ["clean"]),  # a subcommand loaded on demand
    ],
)
def test_an_internal_error_exits_2_with_one_line(project, broken, target, command):
    broken(target)
    result = memlint_subprocess(*command, cwd=project)
    assert result.returncode == 2
    assert result.stdout == ""
    first, hint = result.stderr.splitlines()
    assert first == "memlint: error: internal error: RuntimeError: deliberately broken for a test"
    assert "this is a bug in memlint" in hint and "MEMLINT_TRACEBACK=1" in hint
    assert "Traceback" not in result.stderr


def test_the_traceback_on_request(project, broken, monkeypatch):
    broken("memlint.pipeline.files:discover_files")
    monkeypatch.setenv("MEMLINT_TRACEBACK", "1")
    result = memlint_subprocess("check", ".", cwd=project)
    assert result.returncode == 2
    assert result.stderr.startswith("memlint: error: internal error: RuntimeError: deliberately broken for a test\n")
    assert "Traceback (most recent call last):" in result.stderr and "in broken" in result.stderr


def test_without_a_bug_nothing_changes(project, broken):
    """The harness itself breaks nothing unless asked: the same run passes."""
    result = memlint_subprocess("check", ".", cwd=project)
    assert result.returncode == 0 and result.stdout == "All checks passed!\n"
    usage = memlint_subprocess("check", "--no-such-option", cwd=project)
    assert usage.returncode == 2 and "No such option" in usage.stderr and "internal error" not in usage.stderr
