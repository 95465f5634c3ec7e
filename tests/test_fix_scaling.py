"""`--fix` stays near-linear when some fixes do not parse: a bad fix is found with a bounded number of
compiles (counted here, not timed), every other fix is applied, and each bad one is reported once.

The linter is replaced by a small stand-in (`fake_lint`) so that thousands of findings cost nothing
to produce: what is tested is how `fix_text` chooses, checks and applies fixes. The end-to-end test at
the bottom runs the real rules through the CLI with a third-party rule whose fix is broken.
"""

from __future__ import annotations

import math
import random
import re

import libcst as cst
import pytest
from conftest import invoke, write

from memlint.config import Settings
from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from memlint.pipeline import fixes, registry
from memlint.rule import NodeFix, Rule

# `vK = 1` is a finding; its fix makes it `vK = 2`, or, on a line marked `# bad`, `vK = (`.
FINDING = re.compile(r"^(?P<indent> *)v(?P<k>[0-9]+) = (?P<one>1)(?P<bad>  # bad)?$", re.M)


def fake_lint(text: str, filename: str, settings, project=None) -> list[Diagnostic]:
    found = []
    for match in FINDING.finditer(text):
        start = match.start("one")
        where = Location(1, 1)
        edit = Edit(start, start + 1, "(" if match["bad"] else "2", where, where)
        fix = Fix("fix it", Applicability.SAFE, (edit,))
        found.append(Diagnostic("ML999", "fake", f"v{match['k']}", Severity.WARNING, filename, where, where, fix))
    return found


def program(count: int, bad: set[int], per_function: int) -> str:
    lines = []
    for k in range(count):
        if k % per_function == 0:
            lines.append(f"def f{k}():")
        lines.append(f"    v{k} = 1" + ("  # bad" if k in bad else ""))
    return "\n".join(lines) + "\n"


@pytest.fixture
def counted(monkeypatch):
    """Counts the compiles fix_text makes and the characters they compile."""
    counts = {"calls": 0, "chars": 0}
    real = fixes._compile

    def compile_counted(text, filename="<fix>"):
        counts["calls"] += 1
        counts["chars"] += len(text)
        return real(text, filename)

    monkeypatch.setattr(fixes, "_compile", compile_counted)
    monkeypatch.setattr(fixes, "lint_text", fake_lint)
    return counts


def _fix(text: str):
    return fixes.fix_text(text, "many.py", Settings(enabled=frozenset({"ML999"})), unsafe=False)


def _check(outcome, text: str, count: int, bad: set[int]) -> None:
    assert fixes.parses(outcome.text)
    assert outcome.text == re.sub(r" = 1$", " = 2", text, flags=re.M)  # every good fix, the bad ones not
    assert outcome.fixed["ML999"] == count - len(bad)
    assert sorted(int(d.message[1:]) for d in outcome.dropped) == sorted(bad)  # each bad fix reported once
    assert [d.message for d in outcome.remaining] == [f"v{k}" for k in sorted(bad)]


@pytest.mark.parametrize("count", [500, 4000])
def test_one_bad_fix_among_thousands_costs_a_few_compiles_of_its_function(counted, count):
    bad = {count // 2 + 3}
    text = program(count, bad, per_function=10)
    outcome = _fix(text)
    _check(outcome, text, count, bad)
    # All fixes at once, the file cut at its functions, each cut compiled once, then about 2·log2(10)
    # compiles of the one function that fails, and the result: a few times the file's size in all,
    # whatever the number of fixes (one compile of the whole file per fix before: quadratic).
    assert counted["chars"] <= 6 * len(text)


@pytest.mark.parametrize("count", [256, 2048])
def test_in_one_long_function_the_search_takes_logarithmically_many_compiles(counted, count):
    bad = {count // 3}
    text = program(count, bad, per_function=count)
    _check(_fix(text), text, count, bad)
    assert counted["calls"] <= 2 * math.log2(count) + 8


def test_several_bad_fixes_in_several_functions(counted):
    count, bad = 3000, {5, 6, 1234, 2999}
    text = program(count, bad, per_function=25)
    _check(_fix(text), text, count, bad)
    assert counted["chars"] <= 10 * len(text)


def test_every_fix_bad_still_ends(counted):
    count = 200
    bad = set(range(count))
    text = program(count, bad, per_function=10)
    _check(_fix(text), text, count, bad)


def test_fixes_that_compile_piece_by_piece_but_not_together_are_found_by_the_whole_file_search(monkeypatch):
    """The first fix deletes the newline at the end of its statement: its piece compiles alone, but the
    file joins two statements on one line. The search over the whole file keeps the second fix."""
    text = "v1 = 1\nv2 = 1\n"

    def lint(source, filename, settings, project=None):
        where = Location(1, 1)
        found = []
        for name, start, content, end in (("v1", 5, "2", 7), ("v2", 12, "2", 13)):
            if source[start : start + 1] == "1" and source.startswith(name, start - 5):
                fix = Fix("f", Applicability.SAFE, (Edit(start, end, content, where, where),))
                found.append(Diagnostic("ML999", "fake", name, Severity.WARNING, filename, where, where, fix))
        return found

    monkeypatch.setattr(fixes, "lint_text", lint)
    outcome = _fix(text)
    assert outcome.text == "v1 = 1\nv2 = 2\n"
    assert [d.message for d in outcome.dropped] == ["v1"] and outcome.fixed["ML999"] == 1


def _naive_non_overlapping(groups):
    """The definition: in source order, skip a fix whose edits overlap or touch one already taken."""
    chosen, taken = [], []
    for group in sorted(groups, key=lambda g: (g.edits[0][0], g.findings[0].code)):
        spans = [(s, e) for s, e, _ in group.edits]
        if any(s <= te and ts <= e for s, e in spans for ts, te in taken):
            continue
        chosen.append(group)
        taken.extend(spans)
    return chosen


def _diagnostic(edits, code="ML999"):
    where = Location(1, 1)
    fix = Fix("f", Applicability.SAFE, tuple(Edit(s, e, c, where, where) for s, e, c in edits))
    return Diagnostic(code, "fake", "m", Severity.WARNING, "x.py", where, where, fix)


def test_non_overlapping_sweep_agrees_with_the_definition():
    generator = random.Random(13)
    for _ in range(300):
        diagnostics = []
        for _ in range(generator.randrange(1, 30)):
            edits, cursor = [], generator.randrange(0, 60)
            for _ in range(generator.randrange(1, 4)):  # a fix's own edits are disjoint and ordered
                start = cursor + generator.randrange(0, 8)
                end = start + generator.randrange(0, 4)
                edits.append((start, end, generator.choice("ab")))
                cursor = end + 1
            generator.shuffle(edits)
            diagnostics.append(_diagnostic(edits, generator.choice(["ML001", "ML002"])))
        chosen = fixes._non_overlapping(diagnostics)
        groups = {}
        for d in diagnostics:
            groups.setdefault(fixes._edits(d), fixes._Group(fixes._edits(d), [])).findings.append(d)
        assert [g.edits for g in chosen] == [g.edits for g in _naive_non_overlapping(list(groups.values()))]


def test_findings_sharing_one_fix_are_each_counted_fixed(monkeypatch):
    text = "a = 1\nb = 1\n"

    def lint(source, filename, settings, project=None):
        if "a = 2" in source:
            return []
        edits = [(4, 5, "2"), (10, 11, "2")]  # one fix for both lines, as ML016 gives per import line
        return [_diagnostic(edits), _diagnostic(list(reversed(edits)))]

    monkeypatch.setattr(fixes, "lint_text", lint)
    outcome = _fix(text)
    assert outcome.text == "a = 2\nb = 2\n" and outcome.fixed["ML999"] == 2


class BrokenFixRule(Rule):
    """Reports `break_here()` and "fixes" it into an unclosed bracket: stands in for a rule with a bug."""

    code = "ML898"
    name = "broken-fix"
    severity = Severity.WARNING
    fix_safety = "safe"

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "break_here":
            broken = cst.Name("broken")
            object.__setattr__(broken, "value", "broken(")  # past libcst's validation: prints `broken(`
            self.report(node, "broken fix", NodeFix("break", Applicability.SAFE, ((node, broken),)))


@pytest.fixture
def with_broken_fix_rule(monkeypatch):
    monkeypatch.setattr(registry, "third_party_rules", lambda: (BrokenFixRule,))
    registry.all_rules.cache_clear()
    registry.rule_entries.cache_clear()
    yield
    registry.all_rules.cache_clear()
    registry.rule_entries.cache_clear()


def test_cli_applies_every_good_fix_and_reports_the_bad_one_once(project, with_broken_fix_rule):
    body = "".join(f"        t{k} += loss.sum()\n" for k in range(30))
    names = " = ".join(f"t{k}" for k in range(30))
    path = write(
        project / "train.py",
        "import torch\n\n\ndef run(model, loader):\n"
        f"    {names} = 0.0\n    for x in loader:\n        loss = model(x)\n{body}        break_here()\n"
        f"    print({', '.join(f't{k}' for k in range(30))})\n",
    )
    result = invoke("check", "--fix", "--unsafe-fixes", "--no-cache", "--select", "ML001,ML898", "train.py")
    fixed = path.read_text()
    compile(fixed, "train.py", "exec")
    assert fixed.count(".item()") == 30 and "break_here()" in fixed
    assert result.output.count("the ML898 fix was not applied") == 1, result.output
    assert "Found 31 findings (30 fixed, 1 remaining)." in result.output
    second = invoke("check", "--no-cache", "--select", "ML001,ML898", "--output-format", "concise", "train.py")
    assert second.output.splitlines()[0].startswith("train.py:38:9: ML898")
