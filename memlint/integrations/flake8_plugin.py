"""A flake8 plugin (entry point `ML` in the `flake8.extension` group): `flake8 --select ML` reports
memlint's findings, lint only, at the same rows and columns as `memlint check`.

flake8 expects 0-based columns from plugins and shows them 1-based, so memlint's 1-based column is
passed minus one. The rules and options that apply come from the `[tool.memlint]` configuration
found from the file's directory, as with `memlint check`.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Iterator, Sequence

from memlint import __version__
from memlint.config import ConfigError, Selection, build_settings, discover
from memlint.pipeline import registry
from memlint.pipeline.engine import lint_text


@functools.lru_cache(maxsize=64)
def _settings(directory: str):
    return build_settings(discover(Path(directory)), Selection())


class MemlintChecker:
    name = "memlint"
    version = __version__

    def __init__(self, tree, filename: str, lines: Sequence[str]) -> None:
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        directory = os.path.dirname(os.path.abspath(self.filename)) if self.filename not in ("-", "stdin") else os.getcwd()
        try:
            settings = _settings(directory)
        except (ConfigError, registry.RegistryError) as error:
            yield 1, 0, f"{registry.INTERNAL_ERROR[0]} memlint configuration error: {error}", type(self)
            return
        # flake8 reports syntax errors itself (E999) and does not run plugins on such files.
        for d in lint_text("".join(self.lines), self.filename, settings):
            if d.code != registry.SYNTAX_ERROR[0]:
                yield d.location.row, d.location.column - 1, f"{d.code} {d.message}", type(self)
