"""`json` (one array) and `json-lines` (one object per line), in the architecture's finding schema."""

from __future__ import annotations

import json
from typing import Sequence

from memlint.diagnostics import Diagnostic
from memlint.report import ReportOptions


class JsonReporter:
    def __init__(self, lines: bool) -> None:
        self.lines = lines

    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        objects = [d.to_json() for d in diagnostics]
        if self.lines:
            return "".join(json.dumps(obj, ensure_ascii=False) + "\n" for obj in objects)
        return json.dumps(objects, indent=2, ensure_ascii=False) + "\n"


def reporter(name: str) -> JsonReporter:
    return JsonReporter(lines=name == "json-lines")
