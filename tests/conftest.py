from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from memlint.cli import main

REPO = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------- determinism
# Every test must pass the same way on any machine, in any order, from any shell (issue 13;
# `make determinism` runs the suite in a fresh clone at 1, 2 and 4 threads, in random orders).

# Variables of the caller's shell that change what memlint, click, git or the tools the tests run
# print or do. A test that needs one sets it itself (monkeypatch.setenv, or env= for a subprocess).
LEAKING_VARIABLES = (
    # colour and terminal width: memlint reads NO_COLOR; pytest, pre-commit and flake8 in a
    # subprocess read the others
    "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "PY_COLORS", "PRE_COMMIT_COLOR", "COLUMNS", "LINES",
    # CI detection (pytest and pre-commit change their output under CI)
    "CI", "GITHUB_ACTIONS", "GITHUB_WORKSPACE", "GITLAB_CI", "BUILDKITE", "TF_BUILD", "JENKINS_URL",
    # git, when the suite runs from a git hook: the outer repository would answer the tests' git calls
    "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR", "GIT_PREFIX", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_DIFF_OPTS",
    "PRE_COMMIT", "PRE_COMMIT_HOME",
)  # fmt: skip
# memlint's own variables (MEMLINT_CACHE_DIR, MEMLINT_TRACEBACK, ...) are all removed except these
# knobs of the test suite itself.
SUITE_KNOBS = ("MEMLINT_FUZZ_EXAMPLES", "MEMLINT_TEST_TORCH_THREADS")


def _pinned_torch_threads() -> int | None:
    """`MEMLINT_TEST_TORCH_THREADS=N`: run every test with torch's intra-op thread count at N.

    OMP_NUM_THREADS alone cannot do it: torch caps it at the number of cores it may use, so on a
    2-core machine OMP_NUM_THREADS=4 still gives 2 threads."""
    value = os.environ.get("MEMLINT_TEST_TORCH_THREADS")
    return int(value) if value else None


def pytest_configure(config):
    threads = _pinned_torch_threads()
    if threads:
        try:
            import torch
        except ImportError:  # the tests that need torch skip themselves
            pass
        else:
            torch.set_num_threads(threads)
    _deterministic_hypothesis(config)


def _deterministic_hypothesis(config) -> None:
    """Generated-program tests draw the same examples on every run, whatever ran before them."""
    try:
        from hypothesis import settings
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:
        return
    # Same seed every run, and no example database under the checkout carrying failures from one run
    # (or one checkout) into the next. `make fuzz` explores with random draws instead
    # (`--hypothesis-profile=memlint-explore`).
    settings.register_profile("memlint-deterministic", derandomize=True, database=None)
    settings.register_profile("memlint-explore", derandomize=False, database=None)
    settings.load_profile("memlint-deterministic")
    # Hypothesis also caches Unicode tables and the constants of local modules under .hypothesis/ in
    # the working directory: keep them out of the checkout, fresh for every run.
    config._memlint_hypothesis_home = tempfile.mkdtemp(prefix="memlint-hypothesis-")
    set_hypothesis_home_dir(config._memlint_hypothesis_home)
    # It also draws constants from the source of every local module imported so far, so the programs
    # generated depended on which tests had run before (test order). Its built-in constants remain.
    # (A private hook: if a later Hypothesis moves it, the run is merely less independent of order.)
    try:
        from hypothesis.internal.conjecture import providers

        no_constants = providers.Constants()
        providers._get_local_constants = lambda: no_constants
    except (ImportError, AttributeError):
        pass


def pytest_unconfigure(config):
    home = getattr(config, "_memlint_hypothesis_home", None)
    if home:
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch):
    """Each test starts without the shell's leaking variables and without the user's git config
    (commit.gpgsign, init.defaultBranch, hooks...): an empty global config, no system config."""
    for name in list(os.environ):
        if name in LEAKING_VARIABLES or name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")):
            monkeypatch.delenv(name)
        elif name.startswith("MEMLINT_") and name not in SUITE_KNOBS:
            monkeypatch.delenv(name)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture(autouse=True)
def _torch_threads_restored():
    """A test that changes torch's thread count in this process does not change it for the next."""
    torch = sys.modules.get("torch")
    before = _pinned_torch_threads() or (torch.get_num_threads() if torch is not None else None)
    yield
    torch = sys.modules.get("torch")
    if torch is not None and before is not None and torch.get_num_threads() != before:
        torch.set_num_threads(before)


@pytest.fixture
def project(tmp_path, monkeypatch):
    """An empty project directory (with its own pyproject.toml) as the working directory."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def write(path: Path, source: str, **kwargs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source).lstrip("\n"), **kwargs)
    return path


def invoke(*args: str, input: str | None = None):
    """Run the CLI in-process as a user would type it."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def memlint_subprocess(*args: str, cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "memlint", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120, **kwargs
    )


EVAL_LOOP = """
import torch

total = 0.0
for x, y in loader:
    loss = criterion(model(x), y)
    total += loss
print(total)
"""
