"""Which files git ignores, for the directory walk (`respect-gitignore`, on by default as in Ruff).

The rules are git's, read with pathspec (gitwildmatch): every `.gitignore` from the top of the work
tree down to a file's directory, and `.git/info/exclude`; a deeper file's rule, and a later line,
wins, and `!pattern` re-includes. Only inside a git work tree (a `.git` directory or file above the
walk): elsewhere a `.gitignore` is just a file. A directory named on the command line is walked even
when git ignores it (its own `.gitignore` rules and those inside it still apply below it), as Ruff
does; the user's global excludes file (`core.excludesFile`) is not read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional

import pathspec

from memlint.config import ConfigError
from memlint.pipeline.reading import CONFIG_LIMIT, ReadRefused, read_regular


def work_tree_of(path: Path) -> Optional[Path]:
    """The top of the git work tree `path` is in, or None."""
    current = Path(os.path.abspath(path))
    for directory in (current, *current.parents):
        if (directory / ".git").exists():
            return directory
    return None


class GitIgnore:
    """The ignore rules of one work tree, read once per directory."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self._specs: dict[Path, Optional[pathspec.GitIgnoreSpec]] = {}

    def _spec(self, directory: Path) -> Optional[pathspec.GitIgnoreSpec]:
        if directory not in self._specs:
            lines: list[str] = []
            sources = [directory / ".gitignore"]
            if directory == self.top:
                sources.insert(0, directory / ".git" / "info" / "exclude")
            for source in sources:
                try:
                    data = read_regular(source, CONFIG_LIMIT, what="an ignore file")
                except ReadRefused as error:  # a FIFO, a device, or too large: never skipped silently
                    raise ConfigError(f"{source}: cannot read: {error}") from None
                except OSError:  # absent or unreadable: no rules from it
                    continue
                lines.extend(data.decode("utf-8", "replace").splitlines())
            self._specs[directory] = pathspec.GitIgnoreSpec.from_lines(lines) if lines else None
        return self._specs[directory]

    def walker(self, root: Path) -> "WalkMatcher":
        return WalkMatcher(self, Path(os.path.abspath(root)))


class WalkMatcher:
    """`ignored(path, is_dir)` for the entries of one walk below `root`."""

    def __init__(self, rules: GitIgnore, root: Path) -> None:
        self.rules = rules
        self.root = root
        # Rule files above the root whose rules ignore the root itself are left out: the directory
        # was named, so it is walked (their other rules go too; a rare loss, and a safe one).
        self._skipped: set[Path] = set()
        for directory in self._directories_to(root)[:-1]:
            spec = rules._spec(directory)
            if spec is not None and _verdict(spec, directory, root, is_dir=True):
                self._skipped.add(directory)

    def _directories_to(self, directory: Path) -> list[Path]:
        """The work-tree top, then each directory down to `directory` (included)."""
        relative = directory.relative_to(self.rules.top).parts
        return [self.rules.top.joinpath(*relative[:depth]) for depth in range(len(relative) + 1)]

    def ignored(self, path: Path, is_dir: bool) -> bool:
        path = Path(os.path.abspath(path))
        decision: Optional[bool] = None
        for directory in self._directories_to(path.parent):
            if directory in self._skipped:
                continue
            spec = self.rules._spec(directory)
            if spec is None:
                continue
            verdict = _verdict(spec, directory, path, is_dir=is_dir)
            if verdict is not None:
                decision = verdict
        return bool(decision)


def _verdict(spec: pathspec.GitIgnoreSpec, directory: Path, path: Path, *, is_dir: bool) -> Optional[bool]:
    """True: ignored; False: re-included by a `!` rule; None: no rule of `spec` says."""
    relative = path.relative_to(directory).as_posix() + ("/" if is_dir else "")
    return spec.check_file(relative).include
