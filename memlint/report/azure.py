"""`azure`: Azure Pipelines logging commands, one `task.logissue` per finding, as Ruff writes them.

    ##vso[task.logissue type=warning;sourcepath=train.py;linenumber=15;columnnumber=5;code=ML001;]`total` ...

Ruff reports every finding as `type=error`; memlint has severities, and Azure Pipelines knows two
issue types: error findings are errors, warning and info findings are warnings.  Values are
escaped as Azure's task library escapes them: `%`, CR and LF everywhere, and `;` and `]` in
properties, where they would end the value or the command.
"""

from __future__ import annotations

from typing import Sequence

from memlint.diagnostics import Diagnostic, Severity
from memlint.report import ReportOptions
from memlint.report.common import located_message


def escape_data(text: str) -> str:
    return text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace("]", "%5D").replace(";", "%3B")


def logissue(d: Diagnostic) -> str:
    kind = "error" if d.severity is Severity.ERROR else "warning"
    properties = (
        ("type", kind), ("sourcepath", d.filename), ("linenumber", str(d.location.row)),
        ("columnnumber", str(d.location.column)), ("code", d.code),
    )  # fmt: skip
    joined = "".join(f"{key}={escape_property(value)};" for key, value in properties)
    return f"##vso[task.logissue {joined}]{escape_data(located_message(d))}\n"


class AzureReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return "".join(logissue(d) for d in diagnostics)


def reporter(name: str) -> AzureReporter:
    return AzureReporter()
