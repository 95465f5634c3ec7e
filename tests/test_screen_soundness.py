"""The screens never lose a finding.

A rule's screen (the trigger words of its meta.py and its screen.py) must hold on every file the
rule reports in, and so must the "mentions torch" prefilter.  Every VALID / INVALID example of
every rule, every fixture and a slice of generated programs is linted with every rule twice: by
the full analysis alone (`checker.check_text`) and as `memlint check` does it, behind the
prefilter and the screens (`engine.lint_text`).  A finding the first gives and the second does
not fails the test, naming the rule; so does a finding of a rule whose own screen clears the
file (another rule's screen may have let the file through, hiding the fault from the first
comparison).  bench/prescreen_check.py asks the same on the downloaded corpora.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlint.checker import check_text
from memlint.config import Selection, Settings, build_settings, discover, validate
from memlint.engine import lint_text
from memlint.prescreen import Source, screen_holds
from memlint.registry import RESERVED_CODES, all_rules, builtin_rules, rule_options
from memlint.testing import source_of
from test_fuzz_generated import programs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
BUILT_IN = frozenset(builtin.meta.code for builtin in builtin_rules())
DEFAULTS = {option.key: option.default for option in rule_options()}
# ML006 reports only against a budget: a small one lets it report wherever it can.
GENEROUS = {**DEFAULTS, "gpu-memory": 1 << 20}


def every_rule(options: Mapping[str, Any]) -> Settings:
    return Settings(enabled=BUILT_IN, options=options)


def lost_findings(text: str, settings: Settings) -> list[str]:
    """What the prefilter and the screens would hide, one line per finding, naming its rule."""
    full = [d for d in check_text(text, "probe.py", settings) if d.code not in RESERVED_CODES]
    screened = lint_text(text, "probe.py", settings)
    lost = [f"{d.code} ({d.name}) at {d.location.row}:{d.location.column} appears only without screens" for d in full if d not in screened]
    source = Source(text)
    if "torch" in text and source.tree is not None:
        for code in sorted({d.code for d in full}):
            if not screen_holds(source, code, settings.options):
                lost.append(f"{code}: its screen clears a file it reports in")
    return lost


def _failure(lost: list[str], text: str) -> str:
    return "\n".join(lost) + "\n--- program ---\n" + text


@pytest.mark.parametrize("rule", all_rules(), ids=lambda rule: rule.code)
def test_no_finding_of_an_example_is_lost_to_the_screens(rule):
    for kind, examples in (("VALID", rule.VALID), ("INVALID", rule.INVALID)):
        for index, example in enumerate(examples):
            options = {**DEFAULTS, **validate(dict(example.config), f"{rule.code} example config")}
            text = source_of(example)
            lost = lost_findings(text, every_rule(options))
            assert not lost, f"{rule.code} {kind}[{index}]: " + _failure(lost, text)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.py")), ids=lambda path: path.name)
def test_no_finding_of_a_fixture_is_lost_to_the_screens(path):
    configured = build_settings(discover(FIXTURES), Selection(select=sorted(BUILT_IN)))
    text = path.read_text(encoding="utf-8")
    lost = lost_findings(text, every_rule(configured.options))
    assert not lost, _failure(lost, text)


# Programs made of the rules' own examples, two or three at a time, at the top of a module or
# inside a function: each example's findings meet the others' names, imports and loops.
SNIPPETS = [source_of(e) for rule in all_rules() for e in [*rule.VALID, *rule.INVALID] if not e.config]


def _place(parts: list[str], where: str) -> str:
    text = "\n".join(parts)
    if where == "function":
        return "def run(model, loader, optimizer):\n" + textwrap.indent(text, "    ")
    return text


mixed_examples = st.builds(_place, st.lists(st.sampled_from(SNIPPETS), min_size=2, max_size=3), st.sampled_from(["top", "function"]))

GENERATED = settings(
    max_examples=80,
    derandomize=True,  # the same programs on every run
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@GENERATED
@given(mixed_examples)
def test_no_finding_of_mixed_examples_is_lost_to_the_screens(text):
    lost = lost_findings(text, every_rule(GENEROUS))
    assert not lost, _failure(lost, text)


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@GENERATED
@given(programs)
def test_no_finding_of_generated_programs_is_lost_to_the_screens(text):
    lost = lost_findings(text, every_rule(GENEROUS))
    assert not lost, _failure(lost, text)


def test_a_screen_that_drops_a_finding_is_named(monkeypatch):
    """The comparison can fail: with ML004's screen made to say no, its example's finding is lost."""
    import memlint.prescreen as prescreen

    screen = prescreen._screen
    monkeypatch.setattr(prescreen, "_screen", lambda code: (lambda source, options: False) if code == "ML004" else screen(code))
    (rule,) = [r for r in all_rules() if r.code == "ML004"]
    lost = lost_findings(source_of(rule.INVALID[0]), every_rule(DEFAULTS))
    assert any(line.startswith("ML004 (retained-intermediates) at ") for line in lost), lost
    assert "ML004: its screen clears a file it reports in" in lost
