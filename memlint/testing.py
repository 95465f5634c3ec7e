"""Running a rule's VALID / INVALID examples (used by memlint's test suite and by third-party rules)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Union

from memlint.config import RULE_OPTIONS, SCHEMA, Settings, validate
from memlint.diagnostics import Diagnostic
from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import FixOutcome, fix_text
from memlint.rule import Invalid, Rule, Valid


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
