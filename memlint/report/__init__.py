"""Output formats: one module per format, each a `Reporter` with a `render` method."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Protocol, Sequence

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


def _no_unsafe_fixes(filename: str) -> bool:
    return False


@dataclass(frozen=True)
class ReportOptions:
    format: str
    # Whether the unsafe fixes of a file's findings apply (memlint.run.Run.unsafe_fixes_for: its closest
    # configuration's `unsafe-fixes`, the command line's flag over it): decides which fixes are shown as
    # applicable ([*]) and which are counted as hidden.
    unsafe_fixes: Callable[[str], bool] = _no_unsafe_fixes
    color: bool = False

    def applicable(self, diagnostic: Diagnostic) -> bool:
        return is_applicable(diagnostic, self.unsafe_fixes(diagnostic.filename))

    def hidden(self, diagnostic: Diagnostic) -> bool:
        """An unsafe fix that does not apply to this file (`--unsafe-fixes` would show it)."""
        return diagnostic.fix is not None and not diagnostic.fix.is_safe and not self.unsafe_fixes(diagnostic.filename)


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
