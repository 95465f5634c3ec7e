"""Output formats: one module per format, each a `Reporter` with a `render` method."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol, Sequence

from memlint.diagnostics import Diagnostic

# format name -> module in this package that defines `REPORTER`
FORMATS = {
    "full": "text",
    "concise": "text",
    "json": "json_format",
    "json-lines": "json_format",
    "sarif": "sarif",
    "github": "github",
    "gitlab": "gitlab",
    "rdjson": "rdjson",
    "junit": "junit",
    "grouped": "grouped",
    "pylint": "pylint",
    "azure": "azure",
}
# The formats for people: a summary follows the findings, and a long run shows a progress bar.
HUMAN_FORMATS = ("full", "concise", "grouped")


@dataclass(frozen=True)
class ReportOptions:
    format: str
    unsafe_fixes: bool = False  # decides which fixes are shown as applicable ([*])
    show_fixes: bool = False
    color: bool = False


class Reporter(Protocol):
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str: ...


def reporter_for(name: str) -> Reporter:
    module = importlib.import_module(f"memlint.report.{FORMATS[name]}")
    return module.reporter(name)


def is_applicable(diagnostic: Diagnostic, unsafe_fixes: bool) -> bool:
    return diagnostic.fix is not None and (unsafe_fixes or diagnostic.fix.is_safe)


# --fail-level: the lowest severity whose findings make the exit code 1, as reviewdog's fail level.
# `none`: findings never do (unlike --exit-zero, an internal error still exits 2).
FAIL_LEVELS = ("none", "info", "warning", "error")


def fails(diagnostic: Diagnostic, fail_level: str) -> bool:
    """Is the finding at or above the fail level?"""
    if fail_level == "none":
        return False
    return FAIL_LEVELS.index(diagnostic.severity.value) >= FAIL_LEVELS.index(fail_level)
