"""`memlint rules` lists each rule with the first sentence of its "What it does": whole sentences,
never cut at an ellipsis, an abbreviation or a full stop inside inline code."""

from __future__ import annotations

import json

import pytest
from integration_helpers import REPO, memlint

from memlint.pipeline.registry import all_rules
from memlint.report.sentences import first_sentence


@pytest.mark.parametrize(
    "paragraph, expected",
    [
        ("Finds a thing. Then more.", "Finds a thing"),
        ("Finds `nn.ReLU()`, `nn.SiLU()`, ... with no flag; in places\nthat are safe:", "Finds `nn.ReLU()`, `nn.SiLU()`, ... with no flag; in places that are safe"),
        ("Finds calls (e.g. `a. b`) and i.e. others. Second.", "Finds calls (e.g. `a. b`) and i.e. others"),
        ("Finds `torch.float16` and 3.5 GiB. Next.", "Finds `torch.float16` and 3.5 GiB"),
        ("Does it leak? Yes.", "Does it leak?"),
        ("No full stop at all", "No full stop at all"),
    ],
)
def test_first_sentence(paragraph: str, expected: str):
    assert first_sentence(paragraph) == expected


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_summary_is_a_whole_sentence_of_its_documentation(rule):
    first = " ".join(rule.doc_sections()["What it does"].split("\n\n")[0].split())
    summary = rule.summary()
    assert first.startswith(summary)
    rest = first[len(summary):]
    # The summary stops at the end of a sentence: a full stop followed by the next sentence, or the
    # end of the paragraph (a colon there introduces a list).
    assert rest in ("", ".", ":") or rest.startswith(". "), (rule.code, rest[:40])
    assert summary.count("`") % 2 == 0 and summary.count("(") == summary.count(")")


def test_rules_listing_keeps_ml003_whole():
    result = memlint("rules", cwd=REPO)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("ML003")]
    assert line.rstrip().endswith("in the places where in-place is provably safe")
    listed = {r["code"]: r["summary"] for r in json.loads(memlint("rules", "--output-format", "json", cwd=REPO).stdout)}
    assert listed["ML003"].endswith("provably safe")
