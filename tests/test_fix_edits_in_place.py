"""The edits of multi-line fixes are computed in place (memlint/pipeline/checker.py, `_in_place_edit`)
rather than by printing the whole module once per fix, which made a 1,000-line file with 177 fixes
take seconds. The shortcut must give the very edits the whole-module way gives: compared here on
every rule's examples, the fixtures and a generated file with fixes at many indentations."""

from __future__ import annotations

import sys
import textwrap

import pytest
from conftest import REPO

from memlint.config import Settings
from memlint.pipeline import checker, registry
from memlint.rule import SELECTED_BY_CODE
from memlint.testing import example_cases, source_of

sys.path.insert(0, str(REPO / "bench"))
from lsp_latency import source as generated_file  # noqa: E402

_CODES = frozenset(rule.code for rule in registry.all_rules())
EVERY_RULE = Settings(enabled=_CODES, options={SELECTED_BY_CODE: sorted(_CODES)})  # each as selected by its exact code
NESTED = textwrap.dedent('''
    import torch
    from torch import nn


    class Trainer:
        def run(self, loader):
            if self.ready:
                for epoch in range(3):
                    # the evaluation of this epoch
                    @torch.enable_grad()
                    def validate(model, batches):
                        model.eval()
                        total = 0.0
                        for x, y in batches:
                            total += criterion(model(x), y)
                        return total
                    score = validate(self.model, loader)
                    self.blocks = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8),
                                                nn.ReLU())


    def evaluate(model, loader):
    \tmodel.eval()
    \tfor x, y in loader:
    \t\tprint(model(x))
''')


def texts() -> list[tuple[str, str]]:
    found = [(case.id, source_of(case.example)) for case in example_cases(registry.all_rules())]
    found += [(path.name, path.read_text(encoding="utf-8")) for path in sorted((REPO / "fixtures").glob("*.py"))]
    return found + [("generated", generated_file(300)), ("nested", NESTED)]


def fixes(text: str) -> list:
    return [(d.code, d.location, d.fix) for d in checker.check_text(text, "example.py", EVERY_RULE)]


@pytest.mark.parametrize("name, text", texts(), ids=[name for name, _ in texts()])
def test_in_place_edits_equal_whole_module_edits(name, text, monkeypatch):
    quick = fixes(text)
    monkeypatch.setattr(checker, "code_in_block", lambda *args: None)  # every fix the whole-module way
    assert quick == fixes(text)


def test_the_shortcut_is_taken_for_multi_line_fixes(monkeypatch):
    """Not vacuous: on the generated file no fix prints the whole module."""
    import libcst as cst

    calls = []
    original = cst.Module.deep_replace
    monkeypatch.setattr(cst.Module, "deep_replace", lambda self, *a: calls.append(1) or original(self, *a))
    found = fixes(generated_file(300))
    assert sum(fix is not None for _, _, fix in found) > 40
    assert any(len({e.location.row for e in fix.edits} | {e.end_location.row for e in fix.edits}) > 1 or "\n" in fix.edits[0].content
               for _, _, fix in found if fix is not None)  # fmt: skip
    assert calls == []
