"""The command line: `memlint [check] [PATHS]`, `memlint rule CODE`, `memlint rules`."""

from __future__ import annotations

import difflib
import importlib
import os
import sys
from pathlib import Path
from typing import Optional

import click

from memlint import __version__
from memlint.pipeline.files import path_argument
from memlint.pipeline.workers import INTERRUPTED
from memlint.report import FAIL_LEVELS, FORMATS

# Subcommands that checking does not need, imported only when one of them runs (or `--help` lists
# them): `memlint check f.py` on every commit must not pay for git, torch-probing or cache-cleaning
# code.  A new subcommand in a module of its own is one line here.
LAZY_COMMANDS = {
    "clean": ("memlint.commands.clean", "clean_command"),
    "confirm": ("memlint.confirm.command", "confirm_command"),  # torch-free; torch loads in its children
    "estimate": ("memlint.estimate.command", "estimate_command"),  # torch loads only when it runs
    "review": ("memlint.integrations.review", "review_command"),
    "server": ("memlint.server.command", "server_command"),  # pygls (the server extra) loads only when it runs
}


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
            self._refuse_mistyped_command(args[0] if args else "-")
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def _refuse_mistyped_command(self, word: str) -> None:
        """`memlint confim x.py` is a typo of a command, not a check of the path `confim`: a first word
        that is close to a command's name and is no existing path stops the run (exit 2), as an unknown
        command does in Ruff. An existing file or directory of that name is still checked."""
        if word.startswith("-") or os.path.lexists(word):
            return
        close = difflib.get_close_matches(word, self.list_commands(click.Context(self)), n=1)
        if close:
            click.echo(f"memlint: error: unknown command '{word}' (did you mean '{close[0]}'?)", err=True)
            raise click.exceptions.Exit(2)

    def invoke(self, ctx: click.Context):
        """Ctrl-C exits 130 with one line, as Ruff does (click would print "Aborted!" and exit 1,
        the code for "findings left"); a file being written is left whole (pipeline/writing.py)
        and worker processes are stopped on the way out (pipeline/workers.py)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("memlint: interrupted", err=True)
            ctx.exit(INTERRUPTED)

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


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(), callback=lambda _, __, values: tuple(map(path_argument, values)))
@click.option("--fix", is_flag=True, help="Apply fixes (safe ones; add --unsafe-fixes for the rest).")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also apply (and show) unsafe fixes.")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff instead of writing them.")
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (replaces the default set).")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--output-format", type=click.Choice(sorted(FORMATS)), default="full", show_default=True, envvar="MEMLINT_OUTPUT_FORMAT", help="How findings are reported [env: MEMLINT_OUTPUT_FORMAT].")
@click.option("--statistics", is_flag=True, help="Count findings per rule instead of listing them.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when findings remain.")
@click.option("--exit-non-zero-on-fix", is_flag=True, help="Exit 1 when fixes were applied, even if none remain.")
@click.option("--show-fixes", is_flag=True, help="List the fixes applied, per file.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Use this config file.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), envvar="MEMLINT_CACHE_DIR", help="Where to keep the result cache [default: .memlint_cache in the project root].")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Worker processes [default: number of cores].")
@click.option("--force-exclude", is_flag=True, help="Apply excludes to files named on the command line too.")
@click.option("--respect-gitignore/--no-respect-gitignore", default=None, help="Skip files git ignores when walking directories [default: on, or `respect-gitignore` in the configuration].")
@click.option("--project-context/--no-project-context", default=None, help="Let the other Python files under the project root inform the findings (their summaries), not only the files linted.")
@click.option("--stdin-filename", type=click.Path(path_type=Path), help="Read the source from standard input (path `-`) and show, configure and exclude it as this file.")
@click.option("--add-noqa", is_flag=True, help="Add `# noqa: CODE` comments for the current findings.")
@click.option("--baseline", type=click.Path(dir_okay=False, path_type=Path), help="Report only findings not recorded in this baseline file.")
@click.option("--write-baseline", is_flag=True, help="Record the current findings in the --baseline file.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True, help="Colour the report (auto: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it).")
@click.option("--quiet", "-q", is_flag=True, help="Print the findings only, without the summary.")
@click.option("--silent", "-s", is_flag=True, help="Print nothing; the exit code still says whether findings remain.")
@click.option("--show-settings", is_flag=True, help="Print the effective settings (for the first path) as JSON and exit.")
@click.option("--show-files", is_flag=True, help="Print the files that would be checked and exit.")
@click.option("--fixable", multiple=True, help="Rule codes or prefixes whose fixes may be applied (replaces `fixable`).")
@click.option("--extend-fixable", multiple=True, help="Rule codes or prefixes whose fixes may be applied, on top of `fixable`.")
@click.option("--unfixable", multiple=True, help="Rule codes or prefixes whose fixes are never applied nor shown.")
@click.option("--output-file", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write the report to this file instead of standard output.")
# Issue 29's options (what Ruff users reach for, and the Action's severity threshold).
@click.option("--fail-level", type=click.Choice(FAIL_LEVELS), default="info", show_default=True, help="The lowest severity of a remaining finding that makes the exit code 1 (none: findings never do).")
@click.option("--fix-only", is_flag=True, help="Apply fixes, and neither report nor exit 1 for the findings left (implies --fix).")
@click.option("--ignore-noqa", is_flag=True, help="Ignore `# noqa` and `# memlint: ignore` comments.")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file: the defaults and the command line only.")
@click.option("--exclude", multiple=True, help="Path patterns to exclude (comma-separated), replacing `exclude` and its defaults.")
@click.option("--extend-exclude", multiple=True, help="Path patterns to exclude (comma-separated), on top of `exclude`.")
@click.option("--per-file-ignores", multiple=True, help="PATTERN:CODE pairs (comma-separated), replacing `per-file-ignores`.")
@click.option("--extend-per-file-ignores", multiple=True, help="PATTERN:CODE pairs (comma-separated), on top of `per-file-ignores`.")
@click.option("--watch", "-w", is_flag=True, help="Check again whenever a file changes (concise output, no fixes).")
def check(**options) -> None:
    """Check PATHS (files or directories, default ".") and optionally fix what was found."""
    from memlint.commands.check import run_check  # its parameters are the options above

    if options.pop("watch"):
        from memlint.commands.watch import watch

        watch(run_check, options)
    run_check(**options)


@main.command("rule")
@click.argument("code")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rule_command(code: str, output_format: str) -> None:
    """Show the documentation of one rule (by code or name)."""
    from memlint.commands.rules import show_rule

    show_rule(code, output_format)


@main.command("rules")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules_command(output_format: str) -> None:
    """List every rule."""
    from memlint.commands.rules import list_rules

    list_rules(output_format)


def run_main() -> None:  # console-script entry point
    main()
