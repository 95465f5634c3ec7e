"""Every rule's VALID and INVALID examples, collected automatically (the examples are the tests)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from memlint.pipeline.registry import all_rules
from memlint.rule import DOC_SECTIONS, Invalid, Valid
from memlint.testing import example_cases, fix_example, lint_example, source_of

CASES = list(example_cases(all_rules()))


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_example(case):
    rule, example = case.rule, case.example
    findings = [d for d in lint_example(rule, example) if d.code in (rule.code, "ML000", "ML900")]
    if isinstance(example, Valid):
        assert findings == [], f"expected no finding, got {[(d.location, d.message) for d in findings]}"
        return
    assert isinstance(example, Invalid)
    assert len(findings) == 1, f"expected one finding, got {[(d.code, d.location, d.message) for d in findings]}"
    finding = findings[0]
    assert finding.code == rule.code
    assert (finding.location.row, finding.location.column) == (example.line, example.column)
    if example.message is not None:
        assert example.message in finding.message
    if example.fixed is None:
        assert finding.fix is None, "the example says there is no fix, but the rule offers one"
        return
    assert finding.fix is not None, "the example expects a fix"
    assert finding.fix.is_safe == (not example.unsafe)
    outcome = fix_example(rule, example, unsafe=example.unsafe)
    expected = textwrap.dedent(example.fixed).lstrip("\n")
    assert outcome.text == expected
    cst.parse_module(outcome.text)  # the fixed code parses
    if example.unsafe:  # without --unsafe-fixes nothing changes
        assert fix_example(rule, example, unsafe=False).text == source_of(example)
    again = fix_example(rule, Invalid(outcome.text, 1, 1, config=example.config), unsafe=True)
    assert again.text == outcome.text, "a second fix run changed the code again"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_rule_is_documented_and_has_examples(rule):
    sections = rule.doc_sections()
    missing = [s for s in DOC_SECTIONS if not sections.get(s)]
    assert not missing, f"{rule.code} lacks documentation sections {missing}"
    assert rule.VALID and rule.INVALID
    assert rule.name == rule.name.lower() and " " not in rule.name
    folder = rule.__module__.split(".")[2]  # memlint.rules.<folder>.rule
    assert folder == f"{rule.code.lower()}_{rule.name.replace('-', '_')}"
