"""`full` (Ruff-style code frame) and `concise` (one line per finding) terminal output."""

from __future__ import annotations

from typing import Sequence

import click

from memlint.diagnostics import Diagnostic
from memlint.report import ReportOptions


# Characters that would change what a terminal shows: C0/C1 controls (ANSI escapes, newlines),
# and the bidirectional-text controls that reorder what follows them.
_BIDI = {0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A)}


def shown_name(name: str) -> str:
    """A file name as text output shows it: control characters, bidi controls and undecodable bytes
    (surrogate escapes) written as `\\x1b`, `\\u202e`, `\\xff`, so the name shown is the name on disk,
    neither stripped by click nor interpreted by the terminal. Backslashes are kept (Windows paths)."""
    out = []
    for char in name:
        code = ord(char)
        if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8, kept by os.fsdecode
            out.append(f"\\x{code - 0xDC00:02x}")
        elif code < 0x20 or 0x7F <= code < 0xA0:
            out.append(f"\\x{code:02x}")
        elif code in _BIDI:
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    return "".join(out)


class TextReporter:
    def __init__(self, full: bool) -> None:
        self.full = full

    def render(self, diagnostics: Sequence[Diagnostic], options: ReportOptions) -> str:
        out = []
        for diagnostic in diagnostics:
            out.append(self._header(diagnostic, options))
            if self.full:
                out.append(self._frame(diagnostic, options))
        return "".join(out)

    def _style(self, text: str, options: ReportOptions, **style) -> str:
        return click.style(text, **style) if options.color else text

    def _header(self, d: Diagnostic, options: ReportOptions) -> str:
        where = f"{shown_name(d.filename)}:"
        if d.cell is not None:
            where += f"cell {d.cell}:"
        where += f"{d.location.row}:{d.location.column}:"
        marker = " [*]" if options.applicable(d) else ""
        code = self._style(d.code, options, fg="red", bold=True)
        return f"{self._style(where, options, bold=True)} {code}{marker} {d.message}\n"

    def _frame(self, d: Diagnostic, options: ReportOptions) -> str:
        if not d.frame:
            return "\n"
        width = len(str(d.frame[-1][0]))
        gutter = " " * width + " |"
        lines = [gutter]
        for row, text in d.frame:
            lines.append(f"{row:>{width}} | {text}")
            if d.location.row <= row <= d.end_location.row:
                start = d.location.column - 1 if row == d.location.row else len(text) - len(text.lstrip())
                end = d.end_location.column - 1 if row == d.end_location.row else len(text)
                carets = "^" * max(1, end - start)
                label = f" {d.code}" if row == d.end_location.row else ""
                lines.append(f"{gutter} {' ' * start}{self._style(carets + label, options, fg='red')}")
        lines.append(gutter)
        if d.fix is not None:
            hint = d.fix.message if d.fix.is_safe else f"{d.fix.message} (unsafe fix)"
            lines.append(f"{' ' * width} = help: {hint}")
        return "\n".join(lines) + "\n\n"


def reporter(name: str) -> TextReporter:
    return TextReporter(full=name == "full")
