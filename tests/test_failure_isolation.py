"""A broken rule or a dying worker costs one finding, never the run: the other rules and files are
still reported, and the failure is an ML900 finding that names what failed (exit 2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, invoke, write

from memlint.config import ConfigFile, Selection, build_settings
from memlint.diagnostics import Severity
from memlint.pipeline import registry, runner
from memlint.rule import Rule


class ExplodingRule(Rule):
    """Raises on any call to a function named `explode`: stands in for a rule with a bug."""

    code = "ML899"
    name = "exploding-rule"
    severity = Severity.WARNING

    def visit_Call(self, node):
        if getattr(node.func, "value", None) == "explode":
            raise ZeroDivisionError("deliberate failure")


@pytest.fixture
def with_exploding_rule(monkeypatch):
    """ExplodingRule installed as a third-party rule (one the prescreen has no check for)."""
    monkeypatch.setattr(registry, "third_party_rules", lambda: (ExplodingRule,))
    registry.all_rules.cache_clear()
    registry.rule_entries.cache_clear()
    yield registry.all_rules()
    registry.all_rules.cache_clear()
    registry.rule_entries.cache_clear()


def test_a_raising_rule_is_ml900_and_everything_else_is_still_reported(project, with_exploding_rule):
    write(project / "a_broken.py", EVAL_LOOP + "explode()\n")
    write(project / "b_fine.py", EVAL_LOOP)
    # A third-party rule is off until selected (docs/plugins.md).
    result = invoke("check", "--extend-select", "ML899", "--output-format", "concise", ".")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    crash = [line for line in lines if "ML900" in line]
    assert len(crash) == 1
    assert crash[0].startswith("a_broken.py:8:1: ML900")
    assert "rule ML899 (exploding-rule) raised ZeroDivisionError: deliberate failure" in crash[0]
    # ML001 still ran on the file where ML899 failed, and on the other file.
    assert any(line.startswith("a_broken.py:6:5: ML001") for line in lines)
    assert any(line.startswith("b_fine.py:6:5: ML001") for line in lines)


def test_a_raising_rule_in_worker_processes(project, with_exploding_rule):
    for index in range(runner.PARALLEL_THRESHOLD + 2):
        extra = "explode()\n" if index == 3 else ""
        write(project / f"m{index:02}.py", EVAL_LOOP + extra)
    result = invoke("check", "--extend-select", "ML899", "--output-format", "concise", "--no-cache", "--jobs", "2", ".")
    assert result.exit_code == 2
    assert result.output.count("ML900") == 1 and "m03.py:8:1: ML900" in result.output
    assert result.output.count(": ML001") == runner.PARALLEL_THRESHOLD + 2


def _crash_on(marker: str, original):
    def process_text(text, filename, settings, mode, *facts):
        if marker in text:
            os._exit(3)  # a worker dying without a Python exception (like a segfault or the OOM killer)
        return original(text, filename, settings, mode, *facts)

    return process_text


def test_a_worker_that_dies_loses_no_other_file(project, monkeypatch):
    # Workers are forked from this process, so they inherit the patched function.
    monkeypatch.setattr(runner, "process_text", _crash_on("KILL_THE_WORKER", runner.process_text))
    count = 3 * runner.PARALLEL_THRESHOLD
    for index in range(count):
        extra = "# KILL_THE_WORKER\n" if index in (5, 17) else ""
        write(project / f"m{index:02}.py", EVAL_LOOP + extra)
    settings = build_settings(ConfigFile(None, {}), Selection())
    files = sorted(project.glob("*.py"))
    results = runner.run(files, settings, runner.Mode(), jobs=2)
    assert [r.filename for r in results] == [f.name for f in files]  # every file, in order
    for index, result in enumerate(results):
        codes = [d.code for d in result.diagnostics]
        if index in (5, 17):
            assert codes == ["ML900"]
            assert "worker process checking this file died" in result.diagnostics[0].message
        else:
            assert codes == ["ML001"], (result.filename, codes)


def test_a_worker_that_dies_in_the_project_pass_loses_no_file(project, monkeypatch):
    """A worker that dies while summarising (phase one) costs nothing: those files are linted in
    phase two, without their summaries, and the one that kills a worker again is ML900."""
    import memlint.pipeline.prepare as prepare

    original = prepare.prepare_file

    def prepare_file(path, *rest):
        if "KILL_THE_WORKER" in Path(path).read_text():
            os._exit(3)
        return original(path, *rest)

    monkeypatch.setattr(prepare, "prepare_file", prepare_file)
    count = 2 * runner.PARALLEL_THRESHOLD
    for index in range(count):
        extra = "# KILL_THE_WORKER\n" if index == 3 else ""
        write(project / f"m{index:02}.py", EVAL_LOOP + extra)
    settings = build_settings(ConfigFile(None, {}), Selection())
    files = sorted(project.glob("*.py"))
    results = runner.run(files, settings, runner.Mode(), jobs=2)
    assert [r.filename for r in results] == [f.name for f in files]
    assert all([d.code for d in r.diagnostics] == ["ML001"] for r in results), [(r.filename, [d.code for d in r.diagnostics]) for r in results]


def test_worker_crash_through_the_cli_exits_two_with_the_file_named(project, monkeypatch):
    monkeypatch.setattr(runner, "process_text", _crash_on("KILL_THE_WORKER", runner.process_text))
    for index in range(runner.PARALLEL_THRESHOLD + 4):
        extra = "# KILL_THE_WORKER\n" if index == 2 else ""
        write(project / f"m{index:02}.py", EVAL_LOOP + extra)
    result = invoke("check", "--output-format", "concise", "--no-cache", "--jobs", "2", ".")
    assert result.exit_code == 2
    assert "m02.py:1:1: ML900" in result.output
    assert result.output.count(": ML001") == runner.PARALLEL_THRESHOLD + 3


def test_an_exception_outside_the_rules_is_ml900_for_that_file_only(project, monkeypatch):
    original = runner.process_text

    def process_text(text, filename, settings, mode, *facts):
        if "BREAK_THE_ENGINE" in text:
            raise RecursionError("deliberate")
        return original(text, filename, settings, mode, *facts)

    monkeypatch.setattr(runner, "process_text", process_text)
    write(project / "a.py", EVAL_LOOP + "# BREAK_THE_ENGINE\n")
    write(project / "b.py", EVAL_LOOP)
    result = invoke("check", "--output-format", "concise", "--no-cache", "--jobs", "1", ".")
    assert result.exit_code == 2
    assert "a.py:1:1: ML900 memlint raised RecursionError while checking this file: deliberate" in result.output
    assert "b.py:6:5: ML001" in result.output
