"""`memlint check`: build the run (memlint/run.py), lint its files or standard input, report, and exit
with the code that says what was found (raises click's Exit).

Standard input (`memlint check -`, `--stdin-filename`) is the same run with one text instead of
files: every option applies to it in the same way (the report, `-q`, `-s`, `--statistics`,
`--show-fixes`, `-o`, `--show-settings`, `--show-files`), except that with `--fix` the fixed source
goes to standard output and the report to standard error (or `-o`), for editors. The options that
work on files only are refused with `-` (_check_stdin_arguments).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import click

from memlint.commands.common import command_line, configured, fail, rule_codes, wants_stdin
from memlint.config import Selection
from memlint.diagnostics import Diagnostic
from memlint.integrations.adoption import adopt, check_adoption_options  # light: baseline/noqa load when used
from memlint.pipeline.runner import FileResult, display_name, fixed_count
from memlint.report import HUMAN_FORMATS, ReportOptions, reporter_for
from memlint.report.color import use_color
from memlint.report.progress import progress_for
from memlint.report.summary import exit_code, fix_listing, plural, summary, unified_diffs, would_fix
from memlint.report.summary import statistics as statistics_of
from memlint.pipeline.files import STDIN
from memlint.run import Output, Run


def run_check(
    paths: tuple[Path, ...],
    fix: bool,
    unsafe_fixes: Optional[bool],
    diff: bool,
    select: tuple[str, ...],
    extend_select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    statistics: bool,
    exit_zero: bool,
    exit_non_zero_on_fix: bool,
    show_fixes: bool,
    config: Optional[Path],
    no_cache: bool,
    cache_dir: Optional[Path],
    jobs: Optional[int],
    force_exclude: bool,
    project_context: Optional[bool],
    stdin_filename: Optional[Path],
    add_noqa: bool,
    baseline: Optional[Path],
    write_baseline: bool,
    color: str = "auto",
    quiet: bool = False,
    silent: bool = False,
    output_file: Optional[Path] = None,
    respect_gitignore: Optional[bool] = None,
    show_settings: bool = False,
    show_files: bool = False,
    fixable: tuple[str, ...] = (),
    extend_fixable: tuple[str, ...] = (),
    unfixable: tuple[str, ...] = (),
    fail_level: str = "info",
    fix_only: bool = False,
    ignore_noqa: bool = False,
    isolated: bool = False,
    exclude: tuple[str, ...] = (),
    extend_exclude: tuple[str, ...] = (),
    per_file_ignores: tuple[str, ...] = (),
    extend_per_file_ignores: tuple[str, ...] = (),
) -> None:
    """Check PATHS (files or directories, default ".") and optionally fix what was found."""
    fix = fix or fix_only  # as Ruff: --fix-only fixes, then reports only what it fixed
    overlay = command_line(exclude, extend_exclude, per_file_ignores, extend_per_file_ignores, ignore_noqa)
    stdin = wants_stdin(paths, stdin_filename)
    check_adoption_options(
        fix=fix, diff=diff, add_noqa=add_noqa, baseline=baseline, write_baseline=write_baseline, stdin=stdin,
    )  # fmt: skip
    if stdin:
        _check_stdin_arguments(paths, project_context=project_context)
    output = Output(
        format=output_format, diff=diff, statistics=statistics, show_fixes=show_fixes, quiet=quiet, silent=silent, color=color,
        file=output_file, exit_zero=exit_zero, exit_non_zero_on_fix=exit_non_zero_on_fix, fail_level=fail_level,
        fix_only=fix_only,
    )  # fmt: skip
    run = configured(lambda: Run.configure(
        ((stdin_filename or STDIN),) if stdin else (paths or (Path("."),)),
        config=config,
        selection=Selection(rule_codes(select) or None, rule_codes(extend_select), rule_codes(ignore)),
        fixes=Selection(rule_codes(fixable) or None, rule_codes(extend_fixable), rule_codes(unfixable)),
        unsafe_fixes=unsafe_fixes,
        command_line=overlay,
        isolated=isolated,
        fix=fix or diff,
        write=fix and not diff and not stdin,  # standard input's fixed source goes to standard output
        force_exclude=force_exclude,
        respect_gitignore=respect_gitignore,
        project_context=project_context,
        output=output,
    ))  # fmt: skip
    if show_settings:
        _show_settings(run, stdin_filename if stdin else None)
    if stdin:
        if show_files:
            excluded = stdin_filename is not None and configured(lambda: run.settings_for(stdin_filename)).is_excluded(stdin_filename)
            if not excluded:
                click.echo(display_name(stdin_filename) if stdin_filename else "-")
            raise click.exceptions.Exit(0)
        result, fixed_source = _lint_stdin(run, stdin_filename)
        raise click.exceptions.Exit(_report(run, [result], errors=False, fixed_source=fixed_source))
    discovery = configured(run.discover)
    for path in discovery.missing:  # an error, as in Ruff; the other paths are still checked
        click.echo(f"memlint: error: {path}: no such file or directory", err=True)
    for refused in discovery.refused:
        click.echo(f"memlint: error: {refused}", err=True)
    for problem in discovery.problems:
        click.echo(f"memlint: warning: {problem}", err=True)
    if show_files:
        for file in discovery.files:
            click.echo(file.as_posix())
        raise click.exceptions.Exit(2 if discovery.path_errors else 0)
    if run.write and discovery.temporaries:
        from memlint.pipeline.tempfiles import remove_stale  # left by a `--fix` that was killed while writing

        remove_stale(discovery.temporaries)
    cache = None
    if not no_cache:
        from memlint.pipeline.cache import open_cache  # not needed with --no-cache

        cache = open_cache(cache_dir, run.settings, warn=lambda message: click.echo(f"memlint: warning: {message}", err=True))
    with progress_for(len(discovery.files), output_format) as advance:
        results = run.lint(discovery.files, jobs=jobs, cache=cache, progress=advance)
    for result in results:
        if result.error:  # a fix that was not written is an error; an unreadable file a warning
            click.echo(f"memlint: {'error' if result.unwritten else 'warning'}: {result.error}", err=True)
        for dropped in result.dropped:
            click.echo(
                f"memlint: warning: {dropped.filename}:{dropped.location.row}:{dropped.location.column}: "
                f"the {dropped.code} fix was not applied: it would produce code that does not parse",
                err=True,
            )
    adopted = None
    if add_noqa or baseline is not None:
        found = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
        # `# noqa` comments, as fixes, go through no symlink out of the paths named (docs/reliability.md).
        roots = tuple(os.path.realpath(p) for p in run.paths) if add_noqa else None
        try:
            adopted = adopt(found, add_noqa=add_noqa, baseline=baseline, write_baseline=write_baseline, roots=roots)
        except click.exceptions.Exit as done:  # --add-noqa and --write-baseline end the run here
            raise click.exceptions.Exit(2 if discovery.path_errors else done.exit_code) from None
    # A fix not written or a path named that could not be checked is an error: exit 2 (the rest was
    # still checked).
    errors = any(r.unwritten for r in results) or discovery.path_errors
    raise click.exceptions.Exit(_report(run, results, errors=errors, diagnostics=adopted))


def _check_stdin_arguments(paths: tuple[Path, ...], *, project_context: Optional[bool]) -> None:
    """Options that work on files only are an error with `-` (exit 2) rather than silently ignored:
    --[no-]project-context here, --add-noqa, --baseline and --write-baseline in check_adoption_options.
    --jobs, --no-cache, --cache-dir, --force-exclude and --[no-]respect-gitignore need no refusal: one
    text needs one job and no cache, and the stdin filename's excludes always apply."""
    if len([p for p in paths if p != STDIN]) or list(paths).count(STDIN) > 1:
        raise fail("`-` (standard input) cannot be combined with other paths")
    if project_context is not None:  # --add-noqa and --baseline: check_adoption_options
        flag = "--project-context" if project_context else "--no-project-context"
        raise fail(f"{flag} does not apply to standard input (a text is a project of its own)")


def _show_settings(run: Run, stdin_filename: Optional[Path]) -> None:
    """As Ruff's --show-settings: the settings that apply (to the one file named), then exit."""
    import json

    paths = run.paths
    target = stdin_filename or (paths[0] if len(paths) == 1 and paths[0].is_file() else None)
    shown = run.settings if target is None else configured(lambda: run.settings_for(target))
    click.echo(json.dumps(shown.describe(None if target is None else str(target)), indent=2, default=str))
    raise click.exceptions.Exit(0)


def _lint_stdin(run: Run, stdin_filename: Optional[Path]) -> tuple[FileResult, Optional[bytes]]:
    """The result of standard input, and with --fix the source to give back (fixed, or as it came)."""
    from memlint.pipeline import registry
    from memlint.pipeline.reserved import reserved_diagnostic
    from memlint.pipeline.source import UndecodableSource, decode

    filename = display_name(stdin_filename) if stdin_filename else "-"
    data = sys.stdin.buffer.read()
    source = None
    if stdin_filename is not None and configured(lambda: run.settings_for(stdin_filename)).is_excluded(stdin_filename):
        result = FileResult(filename)  # excluded: no findings, and --fix gives the text back unchanged
    else:
        try:
            source = decode(data)
        except UndecodableSource as error:
            result = FileResult(filename, [reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {error}", filename)])
        else:
            result = configured(lambda: run.lint_text(source.text, filename))
    if run.fix and not run.output.diff:
        return result, source.encode(result.fixed_text) if source is not None and result.fixed_text is not None else data
    return result, None


def _report(
    run: Run,
    results: list[FileResult],
    *,
    errors: bool,
    diagnostics: Optional[list[Diagnostic]] = None,
    fixed_source: Optional[bytes] = None,
) -> int:
    """Print the report of `results` as `run.output` says, and return the exit code. `fixed_source`
    (`--fix` on standard input) goes to standard output, which the editor reads back as its buffer,
    and the report then goes to standard error (or `-o`)."""
    report_to_stderr = fixed_source is not None
    output = run.output
    if diagnostics is None:
        diagnostics = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    fixed_total = fixed_count(results)
    stream = sys.stderr if report_to_stderr else sys.stdout
    colored = use_color(output.color, None if output.file is not None else stream)
    options = ReportOptions(format=output.format, unsafe_fixes=run.unsafe_fixes_for, color=colored)
    if output.diff:
        _emit([unified_diffs(results)], output, colored, err=False)
        if not (output.quiet or output.silent):
            click.echo(would_fix(fixed_total), err=True)
        return 2 if errors else 1 if fixed_total else 0
    if fixed_source is not None:
        sys.stdout.buffer.write(fixed_source)
        sys.stdout.buffer.flush()
    if output.fix_only:  # as Ruff: the findings left are neither reported nor counted in the exit code
        done = [fix_listing(results)] if output.show_fixes and fixed_total else []
        if fixed_total and not output.quiet and output.format in HUMAN_FORMATS:
            done.append(f"Fixed {plural(fixed_total, 'finding')}.\n")
        _emit(done, output, colored, err=report_to_stderr)
        return exit_code(diagnostics, fixed_total, True, output.exit_non_zero_on_fix, errors=errors)
    if output.statistics:
        pieces = [statistics_of(diagnostics, options)]
    else:
        pieces = [reporter_for(output.format).render(diagnostics, options)]
    if output.format in HUMAN_FORMATS and not output.quiet:
        if output.show_fixes and fixed_total:
            pieces.append(fix_listing(results))
        if diagnostics or fixed_total or not errors:  # never "All checks passed!" after an error
            pieces.append(summary(diagnostics, fixed_total, options))
    _emit(pieces, output, colored, err=report_to_stderr)
    return exit_code(
        diagnostics, fixed_total, output.exit_zero, output.exit_non_zero_on_fix, errors=errors, fail_level=output.fail_level,
    )


def _emit(pieces: list[str], output: Output, colored: bool, *, err: bool) -> None:
    """The report on standard output (standard error for `--fix -`), or in `output.file` (`-o`);
    nothing with --silent."""
    if output.silent:
        return
    text = "".join(pieces)
    if output.file is None:
        click.echo(text, nl=False, color=colored, err=err)  # click strips ANSI codes off a terminal unless told
        return
    from memlint.pipeline.writing import write_output  # atomically, never through a symlink

    try:
        write_output(output.file, text.encode("utf-8"))
    except OSError as error:
        raise fail(f"cannot write the report to {output.file}: {error.strerror or error}") from None
