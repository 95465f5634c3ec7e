"""What the commands share: whether a run reads standard input, failing with exit 2 and a message,
reading configuration with its errors as messages, and rule codes given as options."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Sequence, TypeVar

import click

from memlint.config import CommandLine, ConfigError
from memlint.pipeline import registry
from memlint.pipeline.files import STDIN  # not memlint.run: `memlint rules` stays light


def wants_stdin(paths: Sequence[Path], stdin_filename: Optional[Path]) -> bool:
    return STDIN in paths or (stdin_filename is not None and not paths)


def rule_codes(values: Sequence[str]) -> list[str]:
    """`--select ML001,ML002 --select ML003` -> ["ML001", "ML002", "ML003"]."""
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


def command_line(
    exclude: Sequence[str] = (), extend_exclude: Sequence[str] = (), per_file_ignores: Sequence[str] = (),
    extend_per_file_ignores: Sequence[str] = (), ignore_noqa: bool = False,
) -> CommandLine:  # fmt: skip
    """--exclude, --extend-exclude (comma-separated patterns), --per-file-ignores,
    --extend-per-file-ignores (comma-separated `PATTERN:CODE` pairs, as Ruff takes them) and
    --ignore-noqa as the settings laid over every configuration file; patterns are taken relative to
    the working directory. A malformed pair or an unknown code is exit 2."""
    from memlint.config import check_selectors, command_line_patterns

    cwd = Path.cwd()

    def patterns(values: Sequence[str]) -> tuple[str, ...]:
        return command_line_patterns(rule_codes(values), cwd)  # split on commas like codes

    def pairs(option: str, values: Sequence[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
        grouped: dict[str, list[str]] = {}
        for pair in rule_codes(values):
            pattern, colon, code = pair.rpartition(":")
            if not colon or not pattern.strip() or not code.strip():
                raise fail(f"{option}: expected PATTERN:CODE, got '{pair}'")
            configured(lambda: check_selectors([code.strip()], f"command line: {option} '{pair}'"))
            grouped.setdefault(command_line_patterns([pattern.strip()], cwd)[0], []).append(code.strip())
        return tuple((pattern, tuple(codes)) for pattern, codes in grouped.items())

    return CommandLine(
        exclude=patterns(exclude) if exclude else None,
        extend_exclude=patterns(extend_exclude),
        per_file_ignores=pairs("--per-file-ignores", per_file_ignores) if per_file_ignores else None,
        extend_per_file_ignores=pairs("--extend-per-file-ignores", extend_per_file_ignores),
        ignore_noqa=ignore_noqa,
    )


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
