"""The command line: `memlint [check] [PATHS]`, `memlint rule CODE`, `memlint rules`."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Optional, Sequence

import click

from memlint import __version__
from memlint.config import ConfigError, Selection, build_settings, discover, load_config_file
from memlint.diagnostics import Diagnostic
from memlint.integrations.adoption import adopt, check_adoption_options  # light: baseline/noqa load when used
from memlint.pipeline import registry
from memlint.pipeline.files import discover_files, path_argument
from memlint.pipeline.runner import FileResult, Mode, fixed_count, run
from memlint.report import FORMATS, ReportOptions, is_applicable, reporter_for
from memlint.report.progress import progress_for

# Subcommands that checking does not need, imported only when one of them runs (or `--help` lists
# them): `memlint check f.py` on every commit must not pay for git, torch-probing or cache-cleaning
# code.  A new subcommand in a module of its own is one line here.
LAZY_COMMANDS = {
    "clean": ("memlint.commands.clean", "clean_command"),
    "confirm": ("memlint.confirm.command", "confirm_command"),  # torch-free; torch loads in its children
    "estimate": ("memlint.estimate.command", "estimate_command"),  # torch loads only when it runs
    "review": ("memlint.integrations.review", "review_command"),
}
STDIN = Path("-")  # the path that means standard input (memlint/integrations/stdin.py)


class MemlintGroup(click.Group):
    """The `memlint` group: commands in LAZY_COMMANDS are imported on first use, and a command line
    that does not start with a command name is a check (`memlint --fix src/` means
    `memlint check --fix src/`, as with Ruff)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, name: str) -> Optional[click.Command]:
        if name not in self.commands and name in LAZY_COMMANDS:
            module, attribute = LAZY_COMMANDS[name]
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return self.commands.get(name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in (*self.commands, *LAZY_COMMANDS, "--help", "-h", "--version"):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def main(self, *args, **kwargs):
        """Click's main, with a bug in memlint reported as one line and exit 2: an uncaught exception
        would otherwise print a traceback and exit 1, which means "findings left" to CI."""
        try:
            return super().main(*args, **kwargs)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort, BrokenPipeError):
            raise  # click's own exits (only reach here outside standalone mode) and a closed pipe
        except Exception as error:
            report_internal_error(error)
            sys.exit(2)


@click.group(cls=MemlintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="memlint")
def main() -> None:
    """memlint: find, fix and measure GPU-memory anti-patterns in PyTorch code."""


def _codes(values: Sequence[str]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


TRACEBACK_VARIABLE = "MEMLINT_TRACEBACK"  # set to 1 to see the traceback of an internal error


def report_internal_error(error: Exception) -> None:
    message = " ".join(str(error).split())  # one line, whatever the exception's text holds
    click.echo(f"memlint: error: internal error: {type(error).__name__}: {message}", err=True)
    hint = f" (set {TRACEBACK_VARIABLE}=1 to print the traceback)"
    if os.environ.get(TRACEBACK_VARIABLE):
        import traceback

        traceback.print_exception(error, file=sys.stderr)
        hint = ""
    click.echo(f"memlint: this is a bug in memlint {__version__}; please report it with the command that caused it{hint}", err=True)


def wants_stdin(paths: Sequence[Path], stdin_filename: Optional[Path]) -> bool:
    return STDIN in paths or (stdin_filename is not None and not paths)


def fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def load_settings(paths: Sequence[Path], config: Optional[Path], cli: Selection, unsafe_fixes: Optional[bool]):
    """Settings for a run, or exit 2 with the problem named."""
    try:
        if config is not None:
            config_file = load_config_file(config)
        else:
            existing = [Path(os.path.abspath(p)) for p in paths if os.path.exists(p)]
            start = Path(os.path.commonpath(existing)) if existing else Path.cwd()
            config_file = discover(start)
        return build_settings(config_file, cli, unsafe_fixes=unsafe_fixes)
    except ConfigError as error:
        raise fail(str(error)) from None
    except registry.RegistryError as error:
        raise fail(f"cannot load rules: {error}") from None


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(), callback=lambda _, __, values: tuple(map(path_argument, values)))
@click.option("--fix", is_flag=True, help="Apply fixes (safe ones; add --unsafe-fixes for the rest).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply (and show) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (replaces the default set).")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--output-format", type=click.Choice(sorted(FORMATS)), default="full", show_default=True)
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when fixes were applied, even if none remain.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Use this config file.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="MEMLINT_CACHE_DIR", help="Where to keep the result cache [default: .memlint_cache in the project root].")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes [default: number of cores].")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too.")
@click.option("--project-context/--no-project-context", default=None, help="Let the other Python files under the project root inform the findings (their summaries), not only the files linted.")
@click.option("--stdin-filename", type=click.Path(path_type=Path), help="Read the source from standard input (path `-`) and show, configure and exclude it as this file.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` comments for the current findings.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", is_flag=True, help="Record the current findings in the --baseline file.")
def check(
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
) -> None:
    """Check PATHS (files or directories, default ".") and optionally fix what was found."""
    selection = Selection(_codes(select) or None, _codes(extend_select), _codes(ignore))
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
    settings = load_settings(paths, config, selection, unsafe_fixes)
    discovery = discover_files(paths, settings, force_exclude=force_exclude)
    for problem in discovery.problems:
        click.echo(f"memlint: warning: {problem}", err=True)
    discovery.files = _one_name_per_file(discovery.files)
    # Fixes are written only inside the paths named (a symlink out of them is refused, docs/reliability.md).
    roots = tuple(os.path.realpath(p) for p in paths) if fix and not diff else None
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
        diagnostics = adopt(diagnostics, add_noqa=add_noqa, baseline=baseline, write_baseline=write_baseline)
    fixed_total = fixed_count(results)
    options = ReportOptions(
        format=output_format,
        unsafe_fixes=settings.unsafe_fixes,
        show_fixes=show_fixes,
        color=sys.stdout.isatty() and "NO_COLOR" not in os.environ,
    )
    if diff:
        _print_diffs(results)
        click.echo(f"Would fix {fixed_total} error{'s' if fixed_total != 1 else ''}.", err=True)
        raise click.exceptions.Exit(1 if fixed_total else 0)
    if statistics:
        click.echo(_statistics(diagnostics, options), nl=False)
    else:
        click.echo(reporter_for(output_format).render(diagnostics, options), nl=False)
    if output_format in ("full", "concise"):
        if show_fixes and fixed_total:
            click.echo(_fix_listing(results), nl=False)
        click.echo(_summary(diagnostics, fixed_total, options), nl=False)
    unwritten = any(r.unwritten for r in results)
    raise click.exceptions.Exit(_exit_code(diagnostics, fixed_total, exit_zero, exit_non_zero_on_fix, unwritten=unwritten))


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


def _exit_code(
    diagnostics: list[Diagnostic], fixed: int, exit_zero: bool, exit_non_zero_on_fix: bool, *, unwritten: bool = False
) -> int:
    if unwritten or any(d.code == registry.INTERNAL_ERROR[0] for d in diagnostics):
        return 2
    if exit_non_zero_on_fix and fixed:
        return 1
    if diagnostics and not exit_zero:
        return 1
    return 0


def _plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("x", "s")) else f"{count} {word}s"


def _summary(diagnostics: list[Diagnostic], fixed: int, options: ReportOptions) -> str:
    applicable = sum(is_applicable(d, options.unsafe_fixes) for d in diagnostics)
    hidden = sum(d.fix is not None and not d.fix.is_safe for d in diagnostics) if not options.unsafe_fixes else 0
    if not diagnostics:
        return f"Fixed {_plural(fixed, 'error')}.\n" if fixed else "All checks passed!\n"
    lines = []
    if fixed:
        lines.append(f"Found {_plural(len(diagnostics) + fixed, 'error')} ({fixed} fixed, {len(diagnostics)} remaining).")
    else:
        lines.append(f"Found {_plural(len(diagnostics), 'error')}.")
    if applicable:
        extra = f" ({_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option)" if hidden else ""
        lines.append(f"[*] {applicable} fixable with the `--fix` option{extra}.")
    elif hidden:
        lines.append(f"No fixes available ({_plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option).")
    return "\n".join(lines) + "\n"


def _statistics(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if is_applicable(d, options.unsafe_fixes)}
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    if options.format in ("json", "json-lines"):
        rows = [{"code": c, "name": names[c], "count": counts[c], "fixable": c in fixable} for c in ordered]
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{counts[c]:>{width}}\t{c}\t{'[*]' if c in fixable else '[ ]'} {names[c]}\n" for c in ordered
    )


def _fix_listing(results: list[FileResult]) -> str:
    total = fixed_count(results)
    lines = [f"Fixed {_plural(total, 'error')}:"]
    names = {rule.code: rule.name for rule in registry.all_rules()}
    for result in results:
        if result.fixed:
            lines.append(f"- {result.filename}:")
            for code, count in sorted(result.fixed.items()):
                lines.append(f"    {count} × {code} ({names.get(code, '')})")
    return "\n".join(lines) + "\n\n"


def _print_diffs(results: list[FileResult]) -> None:
    import difflib  # only for --diff

    for result in results:
        if result.fixed_text is None or result.original is None:
            continue
        diff = difflib.unified_diff(
            result.original.splitlines(keepends=True),
            result.fixed_text.splitlines(keepends=True),
            fromfile=f"a/{result.filename}",
            tofile=f"b/{result.filename}",
        )
        for line in diff:
            click.echo(line if line.endswith(("\n", "\r")) else line + "\n", nl=False)


@main.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rule_command(code: str, output_format: str) -> None:
    """Show the documentation of one rule (by code or name)."""
    rule = registry.find_rule(code)
    if rule is None:
        raise fail(f"unknown rule '{code}' (see `memlint rules`)")
    if output_format == "json":
        click.echo(json.dumps(_rule_json(rule), indent=2))
        return
    click.echo(f"# {rule.name} ({rule.code})\n")
    default = "enabled by default" if rule.default_enabled else "off by default (select it to enable)"
    click.echo(f"Severity: {rule.severity.value} · Fix: {rule.fix_safety} · {default}\n")
    click.echo(rule.documentation())


def _rule_json(rule) -> dict:
    return {
        "code": rule.code,
        "name": rule.name,
        "severity": rule.severity.value,
        "default_enabled": rule.default_enabled,
        "fix": rule.fix_safety,
        "summary": rule.summary(),
        "explanation": rule.documentation(),
    }


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule."""
    rules = registry.all_rules()
    if output_format == "json":
        click.echo(json.dumps([_rule_json(r) for r in rules], indent=2))
        return
    name_width = max(len(r.name) for r in rules)
    for r in rules:
        default = "" if r.default_enabled else " (off by default)"
        click.echo(f"{r.code}  {r.name:<{name_width}}  {r.severity.value:<7}  fix: {r.fix_safety:<6}  {r.summary()}{default}")


def run_main() -> None:  # console-script entry point
    main()
