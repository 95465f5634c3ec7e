"""What the commands share: the path that means standard input, failing with exit 2 and a message,
settings for a run, and rule codes given as options."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional, Sequence, TypeVar

import click

from memlint.config import ConfigError, Selection, build_settings, discover, load_config_file
from memlint.pipeline import registry

STDIN = Path("-")  # the path that means standard input (memlint/integrations/stdin.py)


def wants_stdin(paths: Sequence[Path], stdin_filename: Optional[Path]) -> bool:
    return STDIN in paths or (stdin_filename is not None and not paths)


def rule_codes(values: Sequence[str]) -> list[str]:
    """`--select ML001,ML002 --select ML003` -> ["ML001", "ML002", "ML003"]."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


def load_settings(
    paths: Sequence[Path], config: Optional[Path], cli: Selection, unsafe_fixes: Optional[bool], fixes: Selection = Selection()
):  # fmt: skip
    """The run's settings (those of the configuration closest to the paths, or of --config), or exit 2
    with the problem named."""

    def load():
        if config is not None:
            return build_settings(load_config_file(config), cli, unsafe_fixes=unsafe_fixes, fixes=fixes, lock=True)
        existing = [Path(os.path.abspath(p)) for p in paths if os.path.exists(p)]
        start = Path(os.path.commonpath(existing)) if existing else Path.cwd()
        return build_settings(discover(start), cli, unsafe_fixes=unsafe_fixes, fixes=fixes)

    return configured(load)


T = TypeVar("T")


def configured(step: Callable[[], T]) -> T:
    """`step()`, which reads configuration files; a bad one is exit 2 with the problem named."""
    try:
        return step()
    except ConfigError as error:
        raise fail(str(error)) from None
    except registry.RegistryError as error:
        raise fail(f"cannot load rules: {error}") from None
