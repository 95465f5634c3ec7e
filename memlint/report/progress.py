"""A progress bar on stderr for long runs, only where a person is watching: stderr is a terminal
and the output is meant for people (not json, sarif, ... which tools read)."""

from __future__ import annotations

import contextlib
import sys
from typing import Callable, Iterator, Optional

from memlint.report import HUMAN_FORMATS
# Fewer files than this finish before a bar would be worth reading.
MIN_FILES = 100


def wanted(total: int, output_format: str, stream=None) -> bool:
    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    return total >= MIN_FILES and output_format in HUMAN_FORMATS and bool(isatty and isatty())


@contextlib.contextmanager
def progress_for(total: int, output_format: str) -> Iterator[Optional[Callable[[int], None]]]:
    """Yields `advance(n)` when a bar is shown, else None."""
    if not wanted(total, output_format):
        yield None
        return
    import click

    with click.progressbar(length=total, label="Checking", file=sys.stderr, show_pos=True, width=30) as bar:
        yield bar.update


class StatusLine:
    """One line on stderr, rewritten in place, for runs made of a few long stages (`confirm` per
    fixture, `estimate` per simulation): shown only where a person is watching (stderr is a
    terminal and the output is not for tools), and erased when the run ends."""

    def __init__(self, show: bool, stream=None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._show = show
        self._shown = False

    @classmethod
    def for_format(cls, output_format: str, formats: tuple = ("text", "markdown")) -> "StatusLine":
        isatty = getattr(sys.stderr, "isatty", None)
        return cls(output_format in formats and bool(isatty and isatty()))

    def __call__(self, message: str) -> None:
        if self._show:
            self._stream.write(f"\r\x1b[Kmemlint: {message}")
            self._stream.flush()
            self._shown = True

    def close(self) -> None:
        if self._shown:
            self._stream.write("\r\x1b[K")
            self._stream.flush()
            self._shown = False
