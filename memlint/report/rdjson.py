"""`rdjson`: reviewdog's diagnostic format (a DiagnosticResult), with fixes as suggestions.

reviewdog counts columns in UTF-8 bytes and its ranges are end-exclusive; memlint counts characters,
so columns are converted with the finding's code frame. Only fixes that `--fix` would apply (safe
ones, and unsafe ones with `--unsafe-fixes`) become suggestions.
"""

from __future__ import annotations

import json
from typing import Sequence

from memlint.diagnostics import Diagnostic, Location, Severity
from memlint.report import ReportOptions
from memlint.report.common import TOOL_NAME, located_message, utf8_column

SEVERITIES = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}


def _position(d: Diagnostic, location: Location) -> dict:
    return {"line": location.row, "column": utf8_column(d, location.row, location.column)}


def diagnostic(d: Diagnostic, options: ReportOptions) -> dict:
    result = {
        "message": located_message(d),
        "location": {"path": d.filename, "range": {"start": _position(d, d.location), "end": _position(d, d.end_location)}},
        "severity": SEVERITIES[d.severity],
        "source": {"name": TOOL_NAME},
        "code": {"value": d.code, "url": d.url} if d.url else {"value": d.code},
    }
    # Cell-relative positions cannot be placed in a notebook's JSON text: no suggestions there.
    if d.fix is not None and d.cell is None and options.applicable(d):
        result["suggestions"] = [
            {"range": {"start": _position(d, e.location), "end": _position(d, e.end_location)}, "text": e.content}
            for e in d.fix.edits
        ]
    return result


class RdjsonReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        result = {
            "source": {"name": TOOL_NAME},
            "severity": "WARNING",
            "diagnostics": [diagnostic(d, options) for d in diagnostics],
        }
        return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def reporter(name: str) -> RdjsonReporter:
    return RdjsonReporter()
