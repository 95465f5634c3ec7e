"""Safe fixes do not change what a program does (issue 25): every rule example with a harness is run
as written and as fixed (torch on the CPU, each run in a fresh child process with the same seed),
and the outcomes, the result or the exception, must be equal.  A safe fix without a harness needs
its rule's argument in docs/reliability.md ("Why each safe fix keeps behaviour").

Unsafe examples with a harness must show the difference that makes them unsafe, so the harness is
known to see it; VALID examples with a harness are reproductions of fixes that were wrong: should a
rule report there again with a safe fix, the fix is executed like any other."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from memlint.pipeline.registry import all_rules
from memlint.rule import Invalid, Valid
from memlint.testing import example_cases, execute_fix, run_programs

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
CASES = list(example_cases(all_rules()))
HARNESSED = [case for case in CASES if case.example.harness is not None]


def _safe_fix(example) -> bool:
    return isinstance(example, Invalid) and example.fixed is not None and not example.unsafe


def _argued_rules() -> set[str]:
    """The rules whose safe fixes docs/reliability.md argues for instead of executing them."""
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = text.split("## Why each safe fix keeps behaviour", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\*\*(ML\d{3})\*\*.*\(argued\)", section, flags=re.M))


@pytest.mark.parametrize("case", HARNESSED, ids=[case.id for case in HARNESSED])
def test_fix_keeps_what_the_program_does(case):
    example = case.example
    unsafe = isinstance(example, Invalid) and example.unsafe
    execution = execute_fix(case.rule, example, unsafe=unsafe)
    if isinstance(example, Valid):
        # No finding here today (test_rule_examples.py); a safe fix offered later must keep behaviour.
        assert not execution.changed or execution.before["ok"], execution.explain()
        assert execution.same, execution.explain()
        return
    assert execution.changed, "the example's fix changed nothing"
    if example.harness.raises:  # the fix removes an error the original always raises
        assert not execution.before["ok"] and execution.before["error"].startswith(example.harness.raises), execution.explain()
        assert execution.after["ok"], execution.explain()
        return
    assert execution.before["ok"], f"the harness fails on the original code: {execution.before.get('error')}"
    if unsafe:
        assert not execution.same, "an unsafe example's harness should show what the fix changes"
    else:
        assert execution.same, execution.explain()


def test_every_safe_fix_is_executed_or_argued():
    argued = _argued_rules()
    missing = [case.id for case in CASES if _safe_fix(case.example) and case.example.harness is None and case.rule.code not in argued]
    assert not missing, f"safe fixes neither executed (no harness) nor argued in docs/reliability.md: {missing}"


def test_the_rules_with_safe_fixes_are_all_in_the_argument():
    """docs/reliability.md states, per rule with a safe fix, why the edit keeps behaviour."""
    text = (ROOT / "docs" / "reliability.md").read_text(encoding="utf-8")
    section = text.split("## Why each safe fix keeps behaviour", 1)[1].split("\n## ", 1)[0]
    with_safe_fixes = {rule.code for rule in all_rules() if any(_safe_fix(e) for e in rule.INVALID)}
    stated = set(re.findall(r"^\*\*(ML\d{3})\*\*", section, flags=re.M))
    assert with_safe_fixes <= stated, sorted(with_safe_fixes - stated)


PROGRAM = """
import torch
import torch.nn.functional as F
torch.manual_seed(0)
x = torch.randn(8)
y = F.relu(x)
result = (y, x)
"""


def test_the_comparison_sees_an_overwritten_input_and_an_exception():
    """Not vacuous: an in-place edit that overwrites the caller's tensor, a raised exception and
    a device that differs are each seen as a different outcome; the same program is the same."""
    inplace = PROGRAM.replace("F.relu(x)", "F.relu(x, inplace=True)")
    assert not run_programs(PROGRAM, inplace).same
    leaf = PROGRAM.replace("torch.randn(8)", "torch.randn(8, requires_grad=True)")
    raising = run_programs(leaf, leaf.replace("F.relu(x)", "F.relu(x, inplace=True)"))
    assert raising.before["ok"] and not raising.after["ok"] and not raising.same
    assert "RuntimeError" in raising.after["error"]
    on_gpu = "import torch\nresult = torch.zeros(3).cuda(None)\n"
    moved = run_programs(on_gpu, "import torch\nresult = torch.zeros(3, device=None)\n", fake_cuda=True)
    assert moved.before["result"]["device"] == "cuda:0" and not moved.same, moved.explain()
    assert run_programs(PROGRAM, PROGRAM).same
