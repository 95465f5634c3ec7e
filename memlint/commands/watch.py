"""`memlint check --watch`: check, then check again whenever a watched file changes, as Ruff's
`--watch` does: the findings in the concise format, and no fixes (a watch that rewrote files would
race the editor writing them).

The watch polls: every half second it compares the size and modification time of the Python files,
notebooks and configuration files under the paths (skipping the directories excluded by default)
with those of the last run.  Polling needs no dependency and no OS-specific notification API; a
check is started at most once per change, and a change made while a check runs starts another.
"""

from __future__ import annotations

import fnmatch
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import click

from memlint.config import DEFAULT_EXCLUDE

INTERVAL = 0.5  # seconds between two looks at the files
WATCHED_NAMES = ("pyproject.toml", "memlint.toml", ".gitignore")
WATCHED_SUFFIXES = (".py", ".ipynb")
# Options that write files or change what a run is: a watch only reports.
NOT_IN_WATCH_MODE = {
    "fix": "--fix", "fix_only": "--fix-only", "diff": "--diff", "add_noqa": "--add-noqa",
    "write_baseline": "--write-baseline", "statistics": "--statistics", "show_settings": "--show-settings",
    "show_files": "--show-files",
}  # fmt: skip


def snapshot(paths: Sequence[Path]) -> dict[str, tuple[int, int]]:
    """Size and modification time of each watched file under `paths`."""
    found: dict[str, tuple[int, int]] = {}

    def note(path: str) -> None:
        try:
            info = os.stat(path)
        except OSError:  # removed meanwhile: its absence is the change
            return
        found[path] = (info.st_size, info.st_mtime_ns)

    for root in paths:
        if not os.path.isdir(root):
            note(os.fspath(root))
            continue
        for directory, subdirectories, files in os.walk(root):
            subdirectories[:] = [d for d in subdirectories if not any(fnmatch.fnmatchcase(d, p) for p in DEFAULT_EXCLUDE)]
            for name in files:
                if name.endswith(WATCHED_SUFFIXES) or name in WATCHED_NAMES:
                    note(os.path.join(directory, name))
    return found


def watch(run_check: Callable[..., None], options: dict[str, Any], interval: float = INTERVAL) -> None:
    """Run `run_check(**options)` now and after each change, until interrupted (exit 0)."""
    for key, option in NOT_IN_WATCH_MODE.items():
        if options.get(key):
            click.echo(f"memlint: warning: {option} is not supported in watch mode: ignored", err=True)
            options[key] = False
    if options.get("output_format") not in (None, "concise", "full"):
        click.echo("memlint: warning: watch mode always uses the `concise` output format", err=True)
    if options.get("stdin_filename") is not None or any(os.fspath(p) == "-" for p in options.get("paths", ())):
        click.echo("memlint: error: watch mode cannot read standard input", err=True)
        raise click.exceptions.Exit(2)
    options.update(output_format="concise", output_file=None)
    paths = options.get("paths") or (Path("."),)
    click.echo("Starting memlint in watch mode...", err=True)
    seen = None
    try:
        while True:
            current = snapshot(paths)
            if current != seen:
                if seen is not None:
                    if sys.stdout.isatty():
                        click.clear()
                    click.echo("File change detected...", err=True)
                seen = current
                try:
                    run_check(**options)
                except click.exceptions.Exit:  # the run's exit code: the watch goes on
                    pass
                click.echo(f"[{time.strftime('%H:%M:%S')}] Watching for file changes.")
                sys.stdout.flush()
            time.sleep(interval)
    except KeyboardInterrupt:
        raise click.exceptions.Exit(0) from None
