"""Linting one source text: the cheap filters that decide whether a file needs the full analysis
(it never mentions torch; the prescreen finds no rule that could report), then the full analysis in
memlint.pipeline.checker, which imports libcst.  Also the text-level helpers fixes share."""

from __future__ import annotations

import ast
import bisect
import re
import warnings
from typing import TYPE_CHECKING, Iterable, Optional

from memlint.config import Settings
from memlint.diagnostics import Diagnostic, Edit, Location, Severity
from memlint.pipeline import registry
from memlint.pipeline.depth import LIMIT, Complexity, too_complex
from memlint.prescreen import Source, needs_analysis
from memlint.units import format_bytes

if TYPE_CHECKING:
    from memlint.pipeline.project import FileView

_NEWLINE = re.compile(r"\r\n|\r|\n")


class Positions:
    """Line table of a source text: offsets <-> 1-based (row, column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]

    def offset(self, line: int, column: int) -> int:
        """`line` 1-based, `column` 0-based, as libcst reports them."""
        return self.starts[line - 1] + column

    def location(self, offset: int) -> Location:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Location(line + 1, offset - self.starts[line] + 1)

    def frame(self, first: int, last: int, context: int = 1, limit: int = 8) -> tuple[tuple[int, str], ...]:
        """The finding's lines with `context` lines around them, at most `limit` lines."""
        rows = range(max(1, first - context), min(len(self.starts), last + context) + 1)
        return tuple((row, self.line_text(row)) for row in list(rows)[:limit])

    def line_text(self, row: int) -> str:
        if row - 1 >= len(self.starts):
            return ""
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def syntax_error(text: str, filename: str, libcst_error: Optional[Exception] = None) -> Diagnostic:
    """ML000 with CPython's message and position when it has one (clearer than the parser's)."""
    message, row, column = None, 1, 1
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        message = error.msg
        row, column = error.lineno or 1, max(error.offset or 1, 1)
    except (ValueError, RecursionError, MemoryError) as error:
        message = str(error) or type(error).__name__
    if message is None:  # CPython accepts it: only libcst's parser failed, so libcst is loaded already
        import libcst as cst

        if isinstance(libcst_error, cst.ParserSyntaxError):
            # Not a syntax error (Python reads the file), a limit of memlint's parser: say so.
            message = libcst_error.message.replace("\n", " ").strip()
            reason = f"memlint's parser (libcst) cannot read it, though Python can: {message}"
            return not_analysed(filename, reason, libcst_error.raw_line, libcst_error.raw_column + 1)
        return not_analysed(filename, f"memlint's parser (libcst) failed: {libcst_error}")
    return reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {message}", filename, row, column, Severity.ERROR)


def not_analysed(filename: str, reason: str, row: int = 1, column: int = 1) -> Diagnostic:
    """ML900 for a file memlint could not analyse (too large, too complex for libcst): not a syntax
    error, and not silence either; exit code 2 says the file was not checked."""
    return reserved_diagnostic(registry.INTERNAL_ERROR, f"file not analysed: {reason}", filename, row, column)


def too_large(text: str, settings: Settings) -> Optional[str]:
    """Why `text` is not analysed for its size (libcst's tree takes about 0.3-0.8 GB per MB of
    source), or None; `max-file-size` counts characters of source (bytes, for ASCII)."""
    limit = settings.max_file_size
    if limit is None or len(text) <= limit:
        return None
    size, most = format_bytes(len(text)), format_bytes(limit)
    if size == most:  # rounded alike: the exact numbers say which is larger
        size, most = f"{len(text):,} characters", f"{limit:,}"
    return f"{size} of source is more than max-file-size ({most}); raise `max-file-size` in [tool.memlint] or exclude the file"


def reserved_diagnostic(
    code_name: tuple[str, str], message: str, filename: str, row: int = 1, column: int = 1,
    severity: Severity = Severity.ERROR,
) -> Diagnostic:  # fmt: skip
    code, name = code_name
    location = Location(row, column)
    return Diagnostic(code, name, message, severity, filename, location, location)


def lint_text(
    text: str, filename: str, settings: Settings, project: Optional[FileView] = None, *, screened: bool = False
) -> list[Diagnostic]:
    """All findings for one Python source text, sorted; no fixes are applied.

    `project`: what the project pass knows about this file (memlint/pipeline/project.py); without it the
    file is a project of its own (its own summary, resolved alone).  `screened`: the caller has
    compiled the text and its screens let it through already (memlint/pipeline/prepare.py), so neither is
    done again."""
    if "torch" not in text:  # a file that never mentions torch cannot have a finding
        return []
    codes = settings.codes_for(filename)
    if not codes:
        return []
    oversized = too_large(text, settings)
    if oversized is not None:  # before CPython's AST too, which is large as well
        return [not_analysed(filename, oversized)]
    if not screened:
        source = Source(text)
        compiled = source.tree is not None  # else the full analysis reports the syntax error
        if compiled and project is None:
            from memlint.analysis.summaries import summarize
            from memlint.pipeline.project import single_file_view

            try:
                summary = summarize(source)
            except (RecursionError, MemoryError):  # as in prepare.py: the project knows less
                summary = None
            project = single_file_view(summary, filename)
        source.project = project  # the screens follow the project's facts
        if compiled and not needs_analysis(source, codes, settings.options):
            return []
        if compiled:  # libcst's tree is deeper than CPython's AST; code it cannot handle stops here
            complexity = too_complex(source.tree, text)
            if complexity is not None:
                return [too_complex_diagnostic(complexity, filename)]
        del source  # its AST is not needed any more
    from memlint.pipeline.checker import check_text

    # depth_checked: CPython's AST has passed the depth guards (here, or in the runner's phase one).
    return check_text(text, filename, settings, depth_checked=screened or compiled, project=project)


def too_complex_diagnostic(complexity: Complexity, filename: str) -> Diagnostic:
    reason = (
        f"too complex for memlint's parser (libcst): {complexity.what} here nests deeper than the "
        f"{LIMIT:,} levels it handles"
    )
    return not_analysed(filename, reason, complexity.row, complexity.column)


def minimal_edit(old: str, new: str, lines: Positions) -> Optional[Edit]:
    """The single edit that turns `old` into `new` (they differ in one region)."""
    if old == new:
        return None
    limit = min(len(old), len(new))
    prefix = _common_length(lambda k: old[:k] == new[:k], limit)
    suffix_limit = limit - prefix
    suffix = _common_length(lambda k: k == 0 or old[-k:] == new[-k:], suffix_limit)
    start, end = prefix, len(old) - suffix
    content = new[prefix : len(new) - suffix]
    return Edit(start, end, content, lines.location(start), lines.location(end))


def _common_length(matches, limit: int) -> int:
    """Largest k <= limit with matches(k), for a predicate that is monotone (true up to some k)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if matches(middle):
            low = middle
        else:
            high = middle - 1
    return low


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    pieces, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.content)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)
