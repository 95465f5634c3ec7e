"""Inputs that used to cost memlint its memory or its other results (issue 13, items 3.3 and 3.10):
files over `max-file-size`, a run under an address-space cap, a notebook nested too deeply, and a
file named `-`.  Each runs memlint in a subprocess, as users do."""

from __future__ import annotations

import json
import resource
import sys

import pytest
from conftest import EVAL_LOOP, memlint_subprocess, write

from memlint.config import DEFAULT_MAX_FILE_SIZE

NEIGHBOUR = "z_neighbour.py:6:5: ML001"
TOO_LARGE = "ML901 file not analysed: "
BLOCK = """
def step_{i}(model, loader, optimizer):
    total = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss
    return total
"""


def dense(size: int, fill: str = "#") -> str:
    """Training code of exactly `size` characters (whole functions, then a comment of `fill`), an
    ML001 finding in every function."""
    parts, length = ["import torch\n"], len("import torch\n")
    while length + len(BLOCK.format(i=len(parts))) + 3 <= size:
        parts.append(BLOCK.format(i=len(parts)))
        length += len(parts[-1])
    return "".join(parts) + "#" + fill * (size - length - 2) + "\n"


@pytest.fixture
def neighbour(project):
    write(project / "z_neighbour.py", EVAL_LOOP)
    return project


def check(project, *args, **kwargs):
    result = memlint_subprocess("check", "--output-format", "concise", "--no-cache", *args, cwd=project, **kwargs)
    assert "Traceback" not in result.stderr and "panicked" not in result.stderr, result.stderr
    return result


def test_a_file_over_the_default_size_is_not_analysed_and_the_run_goes_on(neighbour):
    (neighbour / "huge.py").write_text(dense(DEFAULT_MAX_FILE_SIZE + 1))
    result = check(neighbour, "--jobs", "1", ".")
    assert result.returncode == 1, result.stdout + result.stderr  # a finding (ML901), not memlint's failure
    # One character over rounds to the same 2.00 MiB, so the message gives the exact counts instead.
    expected = f"huge.py:1:1: {TOO_LARGE}{DEFAULT_MAX_FILE_SIZE + 1:,} characters of source is more than max-file-size ({DEFAULT_MAX_FILE_SIZE:,})"
    assert expected in result.stdout, result.stdout
    assert result.stdout.count("huge.py:") == 1  # no finding of its own: it was not analysed
    assert NEIGHBOUR in result.stdout
    (neighbour / "z_neighbour.py").unlink()
    assert check(neighbour, "--jobs", "1", "--exit-zero", ".").returncode == 0  # a finding like any other


def test_the_limit_is_configurable_and_counts_characters(neighbour):
    (neighbour / "pyproject.toml").write_text('[tool.memlint]\nmax-file-size = "4KiB"\n')
    (neighbour / "at_limit.py").write_text(dense(4096))
    (neighbour / "over.py").write_text(dense(4097))
    (neighbour / "wide.py").write_text(dense(4096, fill="é"))  # more than 4 KiB of UTF-8
    assert (neighbour / "wide.py").stat().st_size > 4096
    result = check(neighbour, "--jobs", "1", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "at_limit.py:10:9: ML001" in result.stdout and TOO_LARGE not in result.stdout.split("over.py")[0]
    assert "wide.py:10:9: ML001" in result.stdout
    assert "over.py:1:1: ML901 file not analysed: 4,097 characters of source is more than max-file-size (4,096)" in result.stdout
    assert NEIGHBOUR in result.stdout


def test_the_limit_applies_to_stdin_fix_and_notebooks(neighbour):
    (neighbour / "pyproject.toml").write_text('[tool.memlint]\nmax-file-size = "2KB"\n')
    source = dense(3000)
    result = check(neighbour, "--stdin-filename", "big.py", "-", input=source)
    assert result.returncode == 1 and f"big.py:1:1: {TOO_LARGE}" in result.stdout, result.stdout
    (neighbour / "big.py").write_text(source)
    result = check(neighbour, "--fix", "big.py", "z_neighbour.py")
    assert result.returncode == 1 and f"big.py:1:1: {TOO_LARGE}" in result.stdout, result.stdout
    assert (neighbour / "big.py").read_text() == source  # not analysed, not touched
    assert "total += loss\n" not in (neighbour / "z_neighbour.py").read_text()  # the other file was fixed
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": source}
    notebook = {"cells": [cell], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (neighbour / "big.ipynb").write_text(json.dumps(notebook))
    result = check(neighbour, "big.ipynb")
    assert result.returncode == 1 and f"big.ipynb:cell 1:1:1: {TOO_LARGE}" in result.stdout, result.stdout


@pytest.mark.parametrize("value", ['"lots"', "0", "-5", "true", '"12 parsecs"'])
def test_a_bad_limit_is_a_configuration_error(project, value):
    (project / "pyproject.toml").write_text(f"[tool.memlint]\nmax-file-size = {value}\n")
    write(project / "a.py", EVAL_LOOP)
    result = check(project, "a.py")
    assert result.returncode == 2
    assert "invalid value for 'max-file-size'" in result.stderr and "pyproject.toml" in result.stderr


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS as Linux counts it")
def test_a_large_file_under_an_address_space_cap_costs_only_itself(neighbour):
    # 22 MB of dense code needs more than 10 GB in libcst's tree: under a 6 GiB cap the parser
    # aborted the whole process (exit 134) and every other file's result was lost.
    (neighbour / "generated.py").write_text(dense(22 * 10**6))
    write(neighbour / "a_other.py", EVAL_LOOP)
    cap = 6 * 2**30

    def limit_memory():
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    result = check(neighbour, ".", preexec_fn=limit_memory)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"generated.py:1:1: {TOO_LARGE}21.0 MiB of source is more than max-file-size" in result.stdout
    assert NEIGHBOUR in result.stdout and "a_other.py:6:5: ML001" in result.stdout


def test_a_notebook_nested_too_deeply_is_a_notebook_error(neighbour):
    (neighbour / "deep.ipynb").write_text('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}")
    result = check(neighbour, "--jobs", "1", ".")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "deep.ipynb:1:1: ML000 SyntaxError: notebook not a notebook: its JSON is nested too deeply" in result.stdout
    assert "ML900" not in result.stdout and NEIGHBOUR in result.stdout


def test_dot_slash_dash_is_the_file_named_dash(neighbour):
    write(neighbour / "-", EVAL_LOOP)
    result = check(neighbour, "./-", input="import torch\nx = 1\n")  # the file, not standard input
    assert result.returncode == 1, result.stdout + result.stderr
    assert "-:6:5: ML001" in result.stdout
    result = check(neighbour, "-", input="import torch\nx = 1\n")  # a bare `-` is standard input
    assert result.returncode == 0 and "All checks passed" in result.stdout
