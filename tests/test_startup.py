"""Start-up cost: `memlint check FILE` imports only what checking that file needs.

Each test runs memlint in a fresh interpreter, as a user's shell or pre-commit hook does, and reads
`sys.modules` when it exits: a module imported eagerly again (libcst for a file the prescreen clears,
the process pool for one file, the confirm/estimate/review commands) fails the test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import EVAL_LOOP, write

from memlint.report import FORMATS

# Runs `python -m memlint ARGS...` in this interpreter and prints the imported modules after it exits.
PROBE = textwrap.dedent(
    """
    import json, runpy, sys
    sys.argv = ["memlint", *sys.argv[1:]]
    code = 0
    try:
        runpy.run_module("memlint", run_name="__main__", alter_sys=True)
    except SystemExit as exit:
        code = exit.code
    sys.stdout.flush()
    print("\\nMODULES " + json.dumps({"exit": code, "modules": sorted(sys.modules)}))
    """
)

# A model file no rule can report in: the prescreen clears it without libcst (the layer sizes are
# attributes, which ML005 cannot fold; the forward is too short a chain for ML004).
CLEAN_MODEL = """
import torch
from torch import nn


class Head(nn.Module):
    def __init__(self, config) -> None:
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.out = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.dense(x)
        return self.out(torch.tanh(x))
"""

# Never needed to check Python files one process at a time (torch is never needed at all).
NEVER = ("torch", "memlint.confirm", "memlint.estimate", "memlint.integrations.review", "memlint.commands.clean", "memlint.integrations.gitdiff")
NOT_FOR_ONE_CLEAN_FILE = (
    "libcst",
    "memlint.pipeline.checker",
    "memlint.rules",  # the rule.py modules (the rule folders' meta.py and screen.py are allowed)
    "memlint.pipeline.notebooks",
    "memlint.pipeline.fixes",
    "memlint.integrations.baseline",
    "memlint.integrations.noqa",
    "multiprocessing",
    "concurrent.futures.process",
)


def run_probe(*args: str, cwd: Path) -> tuple[int, str, set[str]]:
    env = {**os.environ, "NO_COLOR": "1"}
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )
    output, marker, report = result.stdout.rpartition("\nMODULES ")
    assert marker, result.stdout + result.stderr
    parsed = json.loads(report)
    return parsed["exit"], output, set(parsed["modules"])


def loaded(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    """The modules of `packages` that were imported (`memlint.rules` counts its rule.py modules only)."""
    return sorted(m for m in modules if any(_belongs(m, p) for p in packages))


def _belongs(module: str, package: str) -> bool:
    if package == "memlint.rules":
        return module.startswith("memlint.rules.") and module.endswith(".rule")
    return module == package or module.startswith(package + ".")


def test_a_clean_torch_file_needs_neither_libcst_nor_the_other_commands(project):
    write(project / "head.py", CLEAN_MODEL)
    code, output, modules = run_probe("check", "--no-cache", "head.py", cwd=project)
    assert code == 0 and "All checks passed!" in output, output
    assert "memlint.pipeline.engine" in modules  # the probe saw a real check
    assert loaded(modules, NEVER + NOT_FOR_ONE_CLEAN_FILE) == []


def test_the_default_command_and_the_cache_keep_start_up_light(project):
    write(project / "head.py", CLEAN_MODEL)
    for run in ("fills the cache", "answered from the cache"):
        code, output, modules = run_probe("head.py", cwd=project)  # `memlint FILE` means `memlint check FILE`
        assert code == 0 and "All checks passed!" in output, (run, output)
        assert "memlint.pipeline.cache" in modules, run
        assert loaded(modules, NEVER + NOT_FOR_ONE_CLEAN_FILE) == [], run
    assert list((project / ".memlint_cache").rglob("*.json")), "the first run stored an entry"


def test_a_file_with_a_finding_is_still_analysed_and_reported(project):
    write(project / "train.py", EVAL_LOOP)
    code, output, modules = run_probe("check", "--no-cache", "--output-format", "concise", "train.py", cwd=project)
    assert code == 1
    assert "train.py:6:5: ML001" in output, output
    assert {"libcst", "memlint.pipeline.checker"} <= modules  # the full analysis ran
    assert loaded(modules, NEVER + ("multiprocessing", "memlint.pipeline.fixes")) == []


def test_a_cached_finding_is_reported_without_libcst(project):
    write(project / "train.py", EVAL_LOOP)
    first = run_probe("check", "--output-format", "concise", "train.py", cwd=project)
    code, output, modules = run_probe("check", "--output-format", "concise", "train.py", cwd=project)
    assert code == first[0] == 1
    assert "train.py:6:5: ML001" in output and output == first[1], output
    assert loaded(modules, ("libcst", "memlint.pipeline.checker", "memlint.rules")) == []


def test_only_the_chosen_report_format_is_imported(project):
    write(project / "train.py", EVAL_LOOP)
    code, output, modules = run_probe("check", "--no-cache", "--output-format", "json", "train.py", cwd=project)
    assert code == 1 and json.loads(output)[0]["code"] == "ML001"
    # report/ also holds helpers every run uses (progress, sentences); only the format modules count
    format_modules = {f"memlint.report.{module}" for module in FORMATS.values()}
    formats = sorted(m for m in modules if m in format_modules)
    assert formats == ["memlint.report.json_format"]


def test_help_lists_every_command_with_its_summary(project):
    code, output, modules = run_probe("--help", cwd=project)
    assert code == 0
    listed = {}
    commands = output.split("Commands:", 1)[1]
    for line in commands.splitlines():
        name, _, summary = line.strip().partition(" ")
        if name:
            listed[name] = summary.strip()
    assert sorted(listed) == ["check", "clean", "confirm", "estimate", "review", "rule", "rules", "server"]
    assert all(listed.values()), listed
    assert listed["clean"].startswith("Remove the result cache")
    assert "torch" not in modules


def test_a_lazily_imported_command_runs_as_before(project):
    code, output, _ = run_probe("clean", cwd=project)
    assert code == 0
    code, output, _ = run_probe("review", "--help", cwd=project)
    assert code == 0 and "BASE" in output


def test_the_cache_key_follows_libcst_files_without_importing_libcst(tmp_path, monkeypatch):
    import importlib.machinery
    import importlib.util

    from memlint.pipeline import cache

    fake = tmp_path / "libcst"
    write(fake / "__init__.py", "")
    version = write(fake / "_version.py", "__version__ = '1.0.0'\n")
    spec = importlib.machinery.ModuleSpec("libcst", None, is_package=True)
    spec.submodule_search_locations = [str(fake)]
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: spec if name == "libcst" else real(name, *a))
    before = cache.code_stamp()
    assert cache.code_stamp() == before
    version.write_text("__version__ = '1.10.0'\n")
    assert cache.code_stamp() != before


def test_the_cache_key_follows_every_source_file_under_the_package(tmp_path):
    from memlint.pipeline.cache import _source_stamps

    write(tmp_path / "pkg" / "__init__.py", "")
    nested = write(tmp_path / "pkg" / "analysis" / "walk.py", "x = 1\n")
    write(tmp_path / "pkg" / "__pycache__" / "walk.cpython-311.pyc", "ignored")
    before = _source_stamps(str(tmp_path / "pkg"))
    assert [stamp.rsplit(":", 2)[0] for stamp in before] == ["__init__.py", "analysis/walk.py"]
    nested.write_text("x = 2\n")  # same size: only the modification time tells
    # An edit a second later, set explicitly: how soon a rewrite shows a new mtime depends on the
    # file system's timestamp granularity (coarse on some), which a short sleep does not guarantee.
    later = nested.stat().st_mtime_ns + 1_000_000_000
    os.utime(nested, ns=(later, later))
    assert _source_stamps(str(tmp_path / "pkg")) != before
