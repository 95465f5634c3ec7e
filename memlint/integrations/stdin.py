"""`memlint check --stdin-filename path.py -`: lint (or fix) standard input, for editors.

The filename decides the configuration that applies (discovered from its directory), the
per-file-ignores and the excludes; it is also the name findings are shown under. With `--fix` the
fixed source goes to standard output, unchanged when nothing was fixed or the file is excluded, and
the findings to standard error, so that an editor can replace its buffer with what it reads back.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

import click

from memlint.commands.common import STDIN, fail, load_settings
from memlint.config import CommandLine, Selection
from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.reserved import reserved_diagnostic
from memlint.pipeline.runner import FileResult, Mode, display_name, fixed_count, process_text
from memlint.pipeline.source import UndecodableSource, decode
from memlint.report import HUMAN_FORMATS, ReportOptions, reporter_for
from memlint.report.summary import exit_code, summary, unified_diffs, would_fix


def check_stdin(
    paths: Sequence[Path],
    stdin_filename: Optional[Path],
    *,
    selection: Selection,
    config: Optional[Path],
    unsafe_fixes: Optional[bool],
    fix: bool,
    diff: bool,
    output_format: str,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    fail_level: str = "info",
    command_line: CommandLine = CommandLine(),
    isolated: bool = False,
    fix_only: bool = False,
) -> int:
    """Run on standard input and return the exit code (the output is written here)."""
    if len([p for p in paths if p != STDIN]) or list(paths).count(STDIN) > 1:
        raise fail("`-` (standard input) cannot be combined with other paths")
    path = stdin_filename or STDIN
    settings = load_settings(
        [path] if stdin_filename else [], config, selection, unsafe_fixes, command_line=command_line, isolated=isolated,
    )
    filename = display_name(path) if stdin_filename else "-"
    data = sys.stdin.buffer.read()
    fixing = fix or diff
    excluded = stdin_filename is not None and settings.is_excluded(stdin_filename)
    try:
        source = decode(data)
    except UndecodableSource as error:
        source = None
        result = FileResult(filename, [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error}", filename)])
    if excluded:
        result = FileResult(filename)
    elif source is not None:
        mode = Mode(fix=fixing, write=False, unsafe=settings.unsafe_fixes)
        result = process_text(source.text, filename, settings, mode)
    options = ReportOptions(format=output_format, unsafe_fixes=settings.unsafe_fixes)
    diagnostics = sorted(result.diagnostics, key=Diagnostic.sort_key)
    fixed = fixed_count([result])
    if diff:
        click.echo(unified_diffs([result]), nl=False)
        click.echo(would_fix(fixed), err=True)
        return 1 if fixed else 0
    report = reporter_for(output_format).render(diagnostics, options)
    if output_format in HUMAN_FORMATS:
        report += summary(diagnostics, fixed, options)
    if fix_only:  # the fixed source only: the findings left are not reported
        report = ""
    if fix:
        sys.stdout.buffer.write(source.encode(result.fixed_text) if source and result.fixed_text is not None else data)
        sys.stdout.buffer.flush()
        click.echo(report, nl=False, err=True)
    else:
        click.echo(report, nl=False)
    return exit_code(diagnostics, fixed, exit_zero, exit_non_zero_on_fix, fail_level=fail_level)
