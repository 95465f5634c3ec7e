"""`gitlab`: GitLab code-quality report (a JSON array of issues).

Fingerprints come from the finding's content, not its line, so GitLab keeps recognising a finding
after unrelated lines move it (see memlint/report/fingerprints.py).
"""

from __future__ import annotations

import json
from typing import Sequence

from memlint.diagnostics import Diagnostic, Severity
from memlint.report import ReportOptions
from memlint.report.common import located_message
from memlint.report.fingerprints import numbered_fingerprints

SEVERITIES = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def issues(diagnostics: Sequence[Diagnostic]) -> list[dict]:
    return [
        {
            "type": "issue",
            "check_name": d.code,
            "description": f"{d.code} {located_message(d)}",
            "categories": ["Performance"],
            "severity": SEVERITIES[d.severity],
            "fingerprint": fingerprint,
            "location": {"path": d.filename, "lines": {"begin": d.location.row, "end": d.end_location.row}},
        }
        for d, fingerprint in zip(diagnostics, numbered_fingerprints(diagnostics))
    ]


class GitlabReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return json.dumps(issues(diagnostics), indent=2, ensure_ascii=False) + "\n"


def reporter(name: str) -> GitlabReporter:
    return GitlabReporter()
