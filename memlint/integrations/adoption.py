"""The `check` options for adopting memlint on legacy code: `--add-noqa`, `--baseline`,
`--write-baseline` (what they do lives in memlint/integrations/noqa.py and memlint/integrations/baseline.py, imported only
when one of these options is used: a plain check validates the options and needs nothing else)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence

import click

from memlint.diagnostics import Diagnostic


def _fail(message: str) -> click.exceptions.Exit:
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def check_adoption_options(
    *, fix: bool, diff: bool, add_noqa: bool, baseline: Optional[Path], write_baseline: bool, stdin: bool = False
) -> None:
    if stdin and (add_noqa or baseline is not None):
        raise _fail(f"{'--add-noqa' if add_noqa else '--baseline'} works on files, not on standard input")
    if write_baseline and baseline is None:
        raise _fail("--write-baseline needs --baseline FILE")
    if (add_noqa or write_baseline) and (fix or diff):
        raise _fail(f"{'--add-noqa' if add_noqa else '--write-baseline'} cannot be combined with --fix or --diff")
    if add_noqa and baseline is not None:
        raise _fail("--add-noqa cannot be combined with --baseline")


def adopt(
    diagnostics: Sequence[Diagnostic], *, add_noqa: bool, baseline: Optional[Path], write_baseline: bool,
    roots: Optional[Sequence[str]] = None,
) -> list[Diagnostic]:  # fmt: skip
    """Findings to report after the baseline; exits after --add-noqa and --write-baseline.
    `roots`: the real paths named, outside which --add-noqa writes through no symlink."""
    if add_noqa:
        from memlint.integrations.noqa import add_noqa_to_files

        outcome = add_noqa_to_files(diagnostics, roots)
        for problem in outcome.problems:
            click.echo(f"memlint: warning: {problem}", err=True)
        for problem in outcome.unwritten:  # as a fix that could not be written: an error
            click.echo(f"memlint: error: {problem}", err=True)
        message = f"Added {outcome.added} noqa directive{'' if outcome.added == 1 else 's'}."
        if outcome.skipped:
            message += f" {outcome.skipped} finding(s) are on lines that cannot take a comment."
        click.echo(message, err=True)
        raise click.exceptions.Exit(2 if outcome.unwritten else 0)
    assert baseline is not None
    from memlint.integrations.baseline import BaselineError, new_findings
    from memlint.integrations.baseline import write_baseline as write_baseline_file

    try:
        if write_baseline:
            count = write_baseline_file(baseline, diagnostics)
            click.echo(f"Wrote {count} finding{'' if count == 1 else 's'} to the baseline {baseline}.", err=True)
            raise click.exceptions.Exit(0)
        return new_findings(baseline, diagnostics)
    except BaselineError as error:
        raise _fail(str(error)) from None
