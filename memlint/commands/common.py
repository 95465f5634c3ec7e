"""What the commands share: whether a run reads standard input, failing with exit 2 and a message,
reading configuration with its errors as messages, and rule codes given as options."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Sequence, TypeVar

import click

from memlint.config import ConfigError
from memlint.pipeline import registry
from memlint.pipeline.files import STDIN  # not memlint.run: `memlint rules` stays light


def wants_stdin(paths: Sequence[Path], stdin_filename: Optional[Path]) -> bool:
    return STDIN in paths or (stdin_filename is not None and not paths)


def rule_codes(values: Sequence[str]) -> list[str]:
    """`--select ML001,ML002 --select ML003` -> ["ML001", "ML002", "ML003"]."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def fail(message: str) -> "click.exceptions.Exit":
    click.echo(f"memlint: error: {message}", err=True)
    return click.exceptions.Exit(2)


T = TypeVar("T")


def configured(step: Callable[[], T]) -> T:
    """`step()`, which reads configuration files; a bad one is exit 2 with the problem named."""
    try:
        return step()
    except ConfigError as error:
        raise fail(str(error)) from None
    except registry.RegistryError as error:
        raise fail(f"cannot load rules: {error}") from None
