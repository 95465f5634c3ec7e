"""The findings memlint reports about a file itself rather than about its code: ML000 (a syntax
error), ML901 (valid Python not analysed, wholly or in part: too large, too deep or too dense for
libcst, or libcst cannot read it) and ML900 (memlint itself failed: pipeline/checker.py, runner.py)."""

from __future__ import annotations

from typing import Optional

from memlint.config import Settings
from memlint.diagnostics import Diagnostic, Location, Severity
from memlint.pipeline import registry
from memlint.pipeline.depth import LIMIT, Complexity
from memlint.pipeline.source import compile_ast
from memlint.units import format_bytes


def syntax_error(text: str, filename: str, libcst_error: Optional[Exception] = None) -> Diagnostic:
    """ML000 with CPython's message and position when it has one (clearer than the parser's)."""
    message, row, column = None, 1, 1
    try:
        compile_ast(text, filename)
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


def python_syntax_error(error: SyntaxError, filename: str) -> Diagnostic:
    """ML000 for a SyntaxError CPython has raised already (python_refusals.py), at its position."""
    row, column = error.lineno or 1, max(error.offset or 1, 1)
    return reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error.msg}", filename, row, column, Severity.ERROR)


def not_analysed(filename: str, reason: str, row: int = 1, column: int = 1) -> Diagnostic:
    """ML901 for a file memlint could not analyse (too large, too complex for libcst): not a syntax
    error, not memlint's own failure (ML900), and not silence either: a finding, so the run exits 1
    (0 under --exit-zero) as for any finding."""
    return reserved_diagnostic(registry.NOT_ANALYSED, f"file not analysed: {reason}", filename, row, column, Severity.WARNING)


# What out_of_resources adds to its message: such a finding depends on the machine (its memory, the
# stack), not on the file alone, so the result cache does not keep it (runner.py).
_OUT_OF_RESOURCES = " (on this machine)"


def out_of_resources(filename: str, reason: str) -> Diagnostic:
    """ML901 for a file whose analysis ran out of memory or stack."""
    return not_analysed(filename, reason + _OUT_OF_RESOURCES)


def depends_on_the_machine(diagnostic: Diagnostic) -> bool:
    """A finding the result cache must not keep: ML900 (memlint failed), or ML901 out of resources."""
    if diagnostic.code == registry.INTERNAL_ERROR[0]:
        return True
    return diagnostic.code == registry.NOT_ANALYSED[0] and diagnostic.message.endswith(_OUT_OF_RESOURCES)


def partly_analysed(filename: str, reason: str, row: int, column: int) -> Diagnostic:
    """ML901 for one statement left out of the analysis (pipeline/masking.py); the rest of the file
    was analysed and its findings are reported beside this one."""
    return reserved_diagnostic(
        registry.NOT_ANALYSED, f"statement not analysed: {reason}; the rest of the file was analysed", filename, row, column,
        Severity.WARNING,
    )  # fmt: skip


def too_large(text: str, settings: Settings) -> Optional[str]:
    """Why `text` is not analysed for its size, or None; `max-file-size` counts characters of source
    (bytes, for ASCII).  It is only a guard against pathological inputs (a generated file of tens of
    megabytes): below it the analysis costs time and memory in proportion to the size, its memory
    bounded per character by pipeline/masking.py."""
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


def too_complex_reason(complexity: Complexity) -> str:
    return (
        f"too complex for memlint's parser (libcst): {complexity.what} here nests deeper than the "
        f"{LIMIT:,} levels it handles"
    )


def too_complex_diagnostic(complexity: Complexity, filename: str) -> Diagnostic:
    return not_analysed(filename, too_complex_reason(complexity), complexity.row, complexity.column)
