"""`memlint check`: discover the files, run the pipeline over them, report, and exit with the code
that says what was found (raises click's Exit)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional

import click

from memlint.commands.common import configured, fail, load_settings, rule_codes, wants_stdin
from memlint.config import ConfigTree, Selection
from memlint.diagnostics import Diagnostic
from memlint.integrations.adoption import adopt, check_adoption_options  # light: baseline/noqa load when used
from memlint.pipeline.files import discover_files
from memlint.pipeline.runner import Mode, fixed_count, run
from memlint.report import ReportOptions, reporter_for
from memlint.report.color import use_color
from memlint.report.progress import progress_for
from memlint.report.summary import exit_code, fix_listing, summary, unified_diffs, would_fix
from memlint.report.summary import statistics as statistics_of


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
) -> None:
    """Check PATHS (files or directories, default ".") and optionally fix what was found."""
    selection = Selection(rule_codes(select) or None, rule_codes(extend_select), rule_codes(ignore))
    stdin = wants_stdin(paths, stdin_filename)
    check_adoption_options(
        fix=fix, diff=diff, add_noqa=add_noqa, baseline=baseline, write_baseline=write_baseline, stdin=stdin,
    )  # fmt: skip
    if stdin:
        from memlint.integrations.stdin import check_stdin  # editors only

        raise click.exceptions.Exit(check_stdin(
            paths, stdin_filename, selection=selection, config=config, unsafe_fixes=unsafe_fixes, fix=fix, diff=diff,
            output_format=output_format, exit_zero=exit_zero, exit_non_zero_on_fix=exit_non_zero_on_fix,
        ))  # fmt: skip
    paths = paths or (Path("."),)
    fixes = Selection(rule_codes(fixable) or None, rule_codes(extend_fixable), rule_codes(unfixable))
    settings = load_settings(paths, config, selection, unsafe_fixes, fixes)
    tree = ConfigTree(settings)  # a file follows its closest configuration file
    if show_settings:  # as Ruff's --show-settings: the settings that apply, then exit
        import json

        target = paths[0] if len(paths) == 1 and Path(paths[0]).is_file() else None
        shown = settings if target is None else configured(lambda: tree.settings_for_directory(target.absolute().parent))
        click.echo(json.dumps(shown.describe(None if target is None else str(target)), indent=2, default=str))
        raise click.exceptions.Exit(0)
    discovery = configured(lambda: discover_files(
        paths, settings, force_exclude=force_exclude, respect_gitignore=respect_gitignore,
        settings_of=tree.settings_for_directory,
    ))  # fmt: skip
    settings = configured(lambda: tree.settings_for_files(discovery.files))
    for problem in discovery.problems:
        click.echo(f"memlint: warning: {problem}", err=True)
    discovery.files = _one_name_per_file(discovery.files)
    if show_files:
        for file in discovery.files:
            click.echo(file.as_posix())
        raise click.exceptions.Exit(0)
    # Fixes are written only inside the paths named (a symlink out of them is refused, docs/reliability.md).
    roots = tuple(os.path.realpath(p) for p in paths) if (fix and not diff) or add_noqa else None
    mode = Mode(fix=fix or diff, write=fix and not diff, unsafe=settings.unsafe_fixes, roots=roots)
    if mode.write and discovery.temporaries:
        from memlint.pipeline.tempfiles import remove_stale  # left by a `--fix` that was killed while writing

        remove_stale(discovery.temporaries)
    cache = None
    if not no_cache:
        from memlint.pipeline.cache import open_cache  # not needed with --no-cache

        cache = open_cache(cache_dir, settings, warn=lambda message: click.echo(f"memlint: warning: {message}", err=True))
    with progress_for(len(discovery.files), output_format) as advance:
        context = _context_files(discovery.files, settings, project_context)
        results = run(discovery.files, settings, mode, jobs=jobs, cache=cache, progress=advance, context=context)
    for result in results:
        if result.error:  # a fix that was not written is an error; an unreadable file a warning
            click.echo(f"memlint: {'error' if result.unwritten else 'warning'}: {result.error}", err=True)
        for dropped in result.dropped:
            click.echo(
                f"memlint: warning: {dropped.filename}:{dropped.location.row}:{dropped.location.column}: "
                f"the {dropped.code} fix was not applied: it would produce code that does not parse",
                err=True,
            )
    diagnostics = sorted((d for r in results for d in r.diagnostics), key=Diagnostic.sort_key)
    if add_noqa or baseline is not None:
        diagnostics = adopt(diagnostics, add_noqa=add_noqa, baseline=baseline, write_baseline=write_baseline, roots=roots)
    fixed_total = fixed_count(results)
    colored = use_color(color, None if output_file is not None else sys.stdout)
    options = ReportOptions(
        format=output_format,
        unsafe_fixes=settings.unsafe_fixes,
        show_fixes=show_fixes,
        color=colored,
    )
    if diff:
        _emit([unified_diffs(results)], output_file, colored, silent)
        if not (quiet or silent):
            click.echo(would_fix(fixed_total), err=True)
        raise click.exceptions.Exit(1 if fixed_total else 0)
    pieces = [statistics_of(diagnostics, options) if statistics else reporter_for(output_format).render(diagnostics, options)]
    if output_format in ("full", "concise") and not quiet:
        if show_fixes and fixed_total:
            pieces.append(fix_listing(results))
        pieces.append(summary(diagnostics, fixed_total, options))
    _emit(pieces, output_file, colored, silent)
    unwritten = any(r.unwritten for r in results)
    raise click.exceptions.Exit(exit_code(diagnostics, fixed_total, exit_zero, exit_non_zero_on_fix, unwritten=unwritten))


def _emit(pieces: list[str], output_file: Optional[Path], colored: bool, silent: bool) -> None:
    """The report on standard output, or in `output_file` (`-o`); nothing with --silent."""
    if silent:
        return
    text = "".join(pieces)
    if output_file is None:
        click.echo(text, nl=False, color=colored)  # click strips ANSI codes off a terminal unless told
        return
    from memlint.pipeline.writing import write_output  # atomically, never through a symlink

    try:
        write_output(output_file, text.encode("utf-8"))
    except OSError as error:
        raise fail(f"cannot write the report to {output_file}: {error.strerror or error}") from None


def _one_name_per_file(files: list[Path]) -> list[Path]:
    """A file found under two names (a symlink beside the file it names, a hard link) is checked and
    fixed once, so that its findings are not counted twice and two writes to it cannot race. The name
    kept is the first that is not a symlink."""
    chosen: dict[object, Path] = {}
    for path in files:
        try:
            info = os.stat(path)
            key: object = (info.st_dev, info.st_ino)
        except OSError:
            key = os.fspath(path)  # reported when it is read
        if key not in chosen or (os.path.islink(chosen[key]) and not os.path.islink(path)):
            chosen[key] = path
    kept = {id(path) for path in chosen.values()}
    return [path for path in files if id(path) in kept]


def _context_files(linted: list[Path], settings, option: Optional[bool]) -> list[Path]:
    """With `project-context` (or --project-context): the Python files under the project root that
    are not linted, for their summaries only (the project pass, docs/architecture.md)."""
    if not (settings.project_context if option is None else option):
        return []
    seen = {os.path.realpath(path) for path in linted}
    found = discover_files([settings.root], settings).files
    return [path for path in found if path.suffix == ".py" and os.path.realpath(path) not in seen]
