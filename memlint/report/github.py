"""`github`: GitHub Actions workflow commands, one annotation per finding.

    ::warning file=train.py,line=15,col=5,endLine=15,endColumn=18,title=memlint (ML001)::ML001 ...

Values are escaped as the Actions runner expects: `%`, CR and LF in the message; additionally `:`
and `,` in properties. GitHub only honours columns on single-line annotations, so a finding that
spans lines gets `line`/`endLine` only.
"""

from __future__ import annotations

from typing import Sequence

from memlint.diagnostics import Diagnostic, Severity
from memlint.report import ReportOptions
from memlint.report.common import located_message

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(d: Diagnostic) -> str:
    properties = [("file", d.filename), ("line", str(d.location.row))]
    if d.location.row == d.end_location.row:
        properties.append(("col", str(d.location.column)))
    properties.append(("endLine", str(d.end_location.row)))
    if d.location.row == d.end_location.row:
        properties.append(("endColumn", str(d.end_location.column)))
    properties.append(("title", f"memlint ({d.code})"))
    joined = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{COMMANDS[d.severity]} {joined}::{escape_data(f'{d.code} {located_message(d)}')}\n"


class GithubReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return "".join(annotation(d) for d in diagnostics)


def reporter(name: str) -> GithubReporter:
    return GithubReporter()
