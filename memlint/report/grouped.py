"""`grouped`: the findings of each file under its name, as Ruff's grouped format shows them.

    train.py:
       9:5  ML001 [*] `total` accumulates `loss`, ...
      14:44 ML001 [*] ...

Rows and columns are right-aligned to the widest in the file, and each file's block ends with an
empty line.  A notebook finding starts with its cell (`cell 6:9:5`), rows and columns within it.
"""

from __future__ import annotations

from itertools import groupby
from typing import Sequence

import click

from memlint.diagnostics import Diagnostic
from memlint.report import ReportOptions, is_applicable
from memlint.report.text import shown_name


class GroupedReporter:
    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        out = []
        for filename, group in groupby(diagnostics, key=lambda d: d.filename):
            found = list(group)
            out.append(self._style(shown_name(filename), options, bold=True, underline=True) + ":\n")
            row_width = max(len(str(d.location.row)) for d in found)
            column_width = max(len(str(d.location.column)) for d in found)
            for d in found:
                colon = self._style(":", options, fg="cyan")
                cell = f"cell {d.cell}{colon}" if d.cell is not None else ""
                row = " " * (row_width - len(str(d.location.row))) + str(d.location.row)
                column = str(d.location.column) + " " * (column_width - len(str(d.location.column)))
                code = self._style(d.code, options, fg="red", bold=True)
                marker = " [*]" if is_applicable(d, options.unsafe_fixes) else ""
                out.append(f"  {cell}{row}{colon}{column} {code}{marker} {d.message}\n")
            out.append("\n")
        return "".join(out)

    def _style(self, text: str, options: ReportOptions, **style) -> str:
        return click.style(text, **style) if options.color else text


def reporter(name: str) -> GroupedReporter:
    return GroupedReporter()
