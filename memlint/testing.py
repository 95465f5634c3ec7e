"""Running a rule's VALID / INVALID examples (used by memlint's test suite and by third-party rules)."""

from __future__ import annotations

import json
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Union

from memlint.config import RULE_OPTIONS, SCHEMA, Settings, validate
from memlint.diagnostics import Diagnostic
from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import FixOutcome, fix_text
from memlint.rule import Harness, Invalid, Rule, Valid


def settings_for(rule: type[Rule], config: Mapping[str, Any] = ()) -> Settings:
    """The rule alone, with the example's options; `extend-select` codes run beside it (ML100's
    examples need the rules whose suppressions they judge)."""
    values = validate(dict(config), f"{rule.code} example config")
    options = {key: values.get(key, SCHEMA[key][1]) for key in RULE_OPTIONS}
    beside = {code.upper() for code in values.get("extend-select", ())}
    return Settings(enabled=frozenset({rule.code, *beside}), options=options)


def source_of(example: Union[Valid, Invalid]) -> str:
    return textwrap.dedent(example.code).lstrip("\n")


def lint_example(rule: type[Rule], example: Union[Valid, Invalid]) -> list[Diagnostic]:
    return lint_text(source_of(example), "example.py", settings_for(rule, example.config))


def fix_example(rule: type[Rule], example: Invalid, *, unsafe: bool) -> FixOutcome:
    return fix_text(source_of(example), "example.py", settings_for(rule, example.config), unsafe=unsafe)


@dataclass(frozen=True)
class ExampleCase:
    rule: type[Rule]
    example: Union[Valid, Invalid]
    index: int

    @property
    def id(self) -> str:
        kind = "valid" if isinstance(self.example, Valid) else "invalid"
        return f"{self.rule.code}-{kind}-{self.index}"


def example_cases(rules) -> Iterator[ExampleCase]:
    for rule in rules:
        for index, example in enumerate([*rule.VALID, *rule.INVALID]):
            yield ExampleCase(rule, example, index)


# ---------------------------------------------------------------------------- executing fixes


@dataclass(frozen=True)
class Execution:
    """An example run as written and as fixed (`execute_fix`)."""

    before_source: str
    after_source: str  # equal to before_source when no fix applied
    before: Optional[dict]  # memlint.confirm.harness.outcome's report; None when nothing changed
    after: Optional[dict]
    rtol: float = 0.0  # floating-point numbers may differ by this much, relatively (Harness.rtol)

    @property
    def changed(self) -> bool:
        return self.after_source != self.before_source

    @property
    def same(self) -> bool:
        """Did the fixed program do what the original did (the same result or the same exception)?"""
        if not self.changed or _outcome_key(self.before) == _outcome_key(self.after):
            return True
        both_ok = bool(self.before and self.before.get("ok") and self.after and self.after.get("ok"))
        return both_ok and self.rtol > 0 and _close(self.before["result"], self.after["result"], self.rtol)  # type: ignore[index]

    def explain(self) -> str:
        return f"before: {_outcome_key(self.before)}\nafter:  {_outcome_key(self.after)}\nfixed program:\n{self.after_source}"


def _outcome_key(report: Optional[dict]) -> str:
    report = report or {}
    if report.get("ok"):
        return json.dumps({"result": report.get("result")}, sort_keys=True)
    return json.dumps({"raised": report.get("error", "no report")}, sort_keys=True)


def _close(a: Any, b: Any, rtol: float) -> bool:
    """The same JSON structure, with floating-point numbers equal within `rtol` (relative to the first)."""
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return a == b or abs(a - b) <= rtol * abs(a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k], rtol) for k in a)
    return a == b


def harness_program(code: str, harness: Harness) -> str:
    """The example's code between its harness's setup and `then` (each dedented on its own)."""
    parts = [textwrap.dedent(harness.setup).strip("\n"), code.rstrip("\n"), textwrap.dedent(harness.then).strip("\n")]
    return "\n".join(p for p in parts if p) + "\n"


def execute_fix(rule: type[Rule], example: Union[Valid, Invalid], *, unsafe: bool, timeout: float = 120.0) -> Execution:
    """Apply the rule's fixes to the example (only the safe ones unless `unsafe`) and, when that
    changed the code, run its harness around the code before and after (memlint.confirm's child
    processes: torch on the CPU, the same seed) and report both outcomes.  Needs torch."""
    harness = example.harness
    if harness is None:
        raise ValueError(f"{rule.code}: the example has no harness")
    before_code = source_of(example)
    outcome = fix_text(before_code, "example.py", settings_for(rule, example.config), unsafe=unsafe)
    before_source = harness_program(before_code, harness)
    if outcome.text == before_code:
        return Execution(before_source, before_source, None, None)
    after_source = harness_program(outcome.text, harness)
    return run_programs(before_source, after_source, fake_cuda=harness.fake_cuda, rtol=harness.rtol, timeout=timeout)


def run_programs(
    before_source: str, after_source: str, *, fake_cuda: bool = False, rtol: float = 0.0, timeout: float = 120.0
) -> Execution:
    """Run two programs (memlint.confirm's child processes: torch on the CPU, the same seed) and
    report both outcomes.  Needs torch."""
    from memlint.confirm.runner import run_outcome  # torch is imported only in the child processes

    with tempfile.TemporaryDirectory(prefix="memlint-fix-execution-") as temporary:
        root = Path(temporary)
        reports = []
        for name, program in (("before", before_source), ("after", after_source)):
            script = root / f"{name}.py"
            script.write_text(program, encoding="utf-8")
            reports.append(run_outcome(script, root, timeout, fake_cuda=fake_cuda))
    return Execution(before_source, after_source, reports[0], reports[1], rtol)
