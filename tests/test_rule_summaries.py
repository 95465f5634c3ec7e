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


# A rule's one-line description (`memlint rules`, SARIF's shortDescription, the API's RuleInfo.summary)
# is one sentence a listing can show: the detail belongs to the rest of "What it does".
SUMMARY_LIMIT = 150


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_every_summary_is_one_short_sentence(rule):
    summary = rule.summary()
    assert first_sentence(summary) == summary  # no second sentence inside it
    assert "\n" not in summary and ". " not in summary.replace("e.g. ", "").replace("i.e. ", "")
    assert 20 <= len(summary) <= SUMMARY_LIMIT, (rule.code, len(summary), summary)


def test_rules_listing_and_sarif_show_the_short_sentences(tmp_path):
    result = memlint("rules", cwd=REPO)
    assert result.returncode == 0, result.stderr
    (line,) = [line for line in result.stdout.splitlines() if line.startswith("ML003")]
    assert line.rstrip().endswith("Finds an activation or dropout built out of place where running it in place is provably safe")
    listed = {r["code"]: r["summary"] for r in json.loads(memlint("rules", "--output-format", "json", cwd=REPO).stdout)}
    assert listed["ML001"] == "Finds a tensor with autograd history kept across the iterations of a loop"
    (tmp_path / "empty.py").write_text("", encoding="utf-8")
    sarif = json.loads(memlint("check", "--select", "ALL", "--output-format", "sarif", "empty.py", cwd=tmp_path).stdout)
    short = {r["id"]: r["shortDescription"]["text"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert short["ML001"] == listed["ML001"]
    assert all(len(text) <= SUMMARY_LIMIT for text in short.values()), short
