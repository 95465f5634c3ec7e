"""Which files git ignores, for the directory walk (`respect-gitignore`, on by default as in Ruff).

The rules are git's, read with pathspec (gitwildmatch): every `.gitignore` from the top of the work
tree down to a file's directory, `.git/info/exclude`, and the user's global excludes file
(`core.excludesFile`, found as Ruff finds it: below); a deeper file's rule, and a later line, wins,
and `!pattern` re-includes. Only inside a git work tree (a `.git` directory or file above the
walk): elsewhere a `.gitignore` is just a file. A directory named on the command line is walked even
when git ignores it (its own `.gitignore` rules and those inside it still apply below it), as Ruff
does.
"""

from __future__ import annotations

import os
import re
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


def _home() -> Optional[Path]:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    return Path(home) if home and home != "~" else None


def _config_home() -> Optional[Path]:
    """$XDG_CONFIG_HOME, or ~/.config when it is unset or empty (as git reads it)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    if xdg:
        return Path(xdg)
    home = _home()
    return home / ".config" if home else None


_SECTION = re.compile(r"^\s*\[\s*([^\]\s\"]+)\s*(\"[^\]]*\")?\s*\]")
_EXCLUDES_FILE = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.IGNORECASE)


def _excludes_file_setting(config: Path) -> Optional[str]:
    """`excludesFile` of the `[core]` section of one git config file (the last one wins), or None."""
    try:  # a git config file is small; a FIFO there must not block the walk
        text = read_regular(config, CONFIG_LIMIT, what="a git config file").decode("utf-8", "replace")
    except OSError:  # absent, unreadable, not a regular file or too large: no setting from it
        return None
    found, in_core = None, False
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section:
            in_core = section.group(1).lower() == "core" and section.group(2) is None
            line = line[section.end():]  # `[core] excludesFile = x` on one line is valid
        setting = _EXCLUDES_FILE.match(line) if in_core else None
        if setting:
            value = setting.group(1)
            if value.startswith('"'):
                value = value[1 : value.find('"', 1)] if value.find('"', 1) > 0 else value[1:]
            else:
                value = re.split(r"\s[#;]", value, maxsplit=1)[0].strip()
            found = value or None
    return found


def global_excludes_file() -> Optional[Path]:
    """The user's global excludes file, found as Ruff (the `ignore` crate) finds it: `core.excludesFile`
    from ~/.gitconfig, else from $XDG_CONFIG_HOME/git/config, else $XDG_CONFIG_HOME/git/ignore
    (~/.config when XDG_CONFIG_HOME is unset).  `~/` is expanded; git itself is not run.  As git
    (not Ruff) does, GIT_CONFIG_GLOBAL names the one global config file to read instead, so that an
    environment that hides the user's git configuration from git (memlint's test suite does) hides it
    from memlint too."""
    home, config_home = _home(), _config_home()
    configs = [home / ".gitconfig" if home else None, config_home / "git" / "config" if config_home else None]
    if os.environ.get("GIT_CONFIG_GLOBAL"):
        configs = [Path(os.environ["GIT_CONFIG_GLOBAL"])]
    for config in configs:
        setting = _excludes_file_setting(config) if config else None
        if setting:
            if setting.startswith("~/") and home:
                return home / setting[2:]
            return Path(setting)
    return config_home / "git" / "ignore" if config_home else None


class GitIgnore:
    """The ignore rules of one work tree, read once per directory."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self._specs: dict[Path, Optional[pathspec.GitIgnoreSpec]] = {}
        self._global = global_excludes_file()

    def _spec(self, directory: Path) -> Optional[pathspec.GitIgnoreSpec]:
        if directory not in self._specs:
            lines: list[str] = []
            sources = [directory / ".gitignore"]
            if directory == self.top:
                # Lowest precedence first: the global excludes file, then .git/info/exclude.
                sources[:0] = [source for source in (self._global, directory / ".git" / "info" / "exclude") if source]
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
