"""`pylint`: Pylint's parseable one-line format, as Ruff writes it, for tools that read it.

    train.py:15: [ML001] `total` accumulates `loss`, ...

Notebook findings keep the row within their cell and say the cell in the message, as the other
line-oriented formats do (`github`, `azure`).  A line break in a message would split the finding
over two lines of a line-oriented format: it is written as a space.
"""

from __future__ import annotations

from typing import Sequence

from memlint.diagnostics import Diagnostic
from memlint.report import ReportOptions
from memlint.report.common import located_message


def one_line(text: str) -> str:
    return " ".join(text.splitlines())


class PylintReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        return "".join(f"{d.filename}:{d.location.row}: [{d.code}] {one_line(located_message(d))}\n" for d in diagnostics)


def reporter(name: str) -> PylintReporter:
    return PylintReporter()
