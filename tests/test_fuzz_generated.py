"""No rule ever raises on a syntactically valid program: generated programs (hypothesmith), made to
look like PyTorch code so the "mentions torch" prefilter lets them through, give no ML900 with every
rule enabled.  A bounded run here; `python bench/fuzz.py` runs many more."""

from __future__ import annotations

import os
import textwrap

import hypothesmith
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memlint.config import Settings
from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import fix_text, parses
from memlint.pipeline.registry import all_rules
from memlint.rule import SELECTED_BY_CODE

EXAMPLES = int(os.environ.get("MEMLINT_FUZZ_EXAMPLES", "100"))

TORCH_PRELUDE = """\
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint
model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(inplace=True)).cuda().double()
optimizer = torch.optim.Adam(model.parameters())
"""
TRAINING_LOOP = """\
for step, (x, y) in enumerate(loader):
    optimizer.zero_grad(set_to_none=False)
    loss = model(x.cuda()).sum()
{body}
    loss.backward(retain_graph=True)
    optimizer.step()
    total += loss
"""


def every_rule() -> Settings:
    """All rules, including those off by default (`--select ALL` leaves those out), each as
    selected by its exact code."""
    codes = frozenset(rule.code for rule in all_rules())
    return Settings(enabled=codes, options={SELECTED_BY_CODE: sorted(codes)})


def torch_looking(code: str, where: str) -> str:
    if where == "top":
        return TORCH_PRELUDE + code
    if where == "loop":
        return TORCH_PRELUDE + TRAINING_LOOP.format(body=textwrap.indent(code or "pass\n", "    "))
    return TORCH_PRELUDE + "def train_step(model, batch):\n" + textwrap.indent(code or "pass\n", "    ")


programs = st.tuples(
    st.one_of(hypothesmith.from_grammar(), hypothesmith.from_node()),
    st.sampled_from(["top", "loop", "function"]),
).map(lambda pair: torch_looking(*pair))


def assert_no_internal_error(source: str) -> None:
    findings = lint_text(source, "generated.py", every_rule())
    crashes = [d.message for d in findings if d.code == "ML900"]
    assert not crashes, f"{crashes}\n--- program ---\n{source}"
    if parses(source) and any(d.fix is not None for d in findings):
        outcome = fix_text(source, "generated.py", every_rule(), unsafe=True)
        assert parses(outcome.text), f"a fix broke the program\n--- program ---\n{source}"
        crashes = [d.message for d in outcome.remaining if d.code == "ML900"]
        assert not crashes, f"{crashes}\n--- program ---\n{source}"


@pytest.mark.filterwarnings("ignore::SyntaxWarning")
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
)
@given(programs)
def test_no_rule_raises_on_generated_programs(source):
    assert_no_internal_error(source)


def test_the_prelude_alone_is_clean_of_internal_errors():
    for where in ("top", "loop", "function"):
        assert_no_internal_error(torch_looking("x = 1\n", where))
