"""Which lines changed since a git ref, from `git diff --unified=0`.

Reading a diff must never run a command that the repository under review can select: every git call
goes through `_run_git`, which runs git without external diff drivers, textconv, clean/smudge filters
(a `.gitattributes` in a pull request can pick any filter driver configured on the machine, git-lfs's
included), fsmonitor hooks, hooks, a pager, and without any transport: a partial clone lacking an
object of the base would otherwise fetch it from its promisor remote, running the `uploadpack`
command, `sshCommand` or remote helper its `.git/config` names. A missing object is then an error
that names it. Untracked files are read by memlint itself: regular files only, never through a symlink.

Only the files `review` lints are diffed (`suffixes`): the names come first (`--name-only` compares
object ids, reading no content), then the diff of those names alone, so a large data file in the
change costs nothing.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
# Lines of a hunk's context GitHub shows around each change: review comments may sit on them too.
GITHUB_CONTEXT = 3


class GitError(Exception):
    """git failed; the message is git's own."""


@dataclass
class ChangedLines:
    root: Path  # the repository's top level; the paths below are relative to it (POSIX)
    lines: dict[str, set[int]] = field(default_factory=dict)

    def changed(self, path: str, first: int, last: int) -> bool:
        rows = self.lines.get(path, ())
        return any(first <= row <= last for row in rows)

    def commentable(self, path: str, row: int) -> bool:
        """Whether GitHub shows this line in the pull request's diff (a change or its context)."""
        return any(abs(row - changed) <= GITHUB_CONTEXT for changed in self.lines.get(path, ()))


# Settings that keep git from running configured commands: fsmonitor hooks, hooks, a pager.
# Diff drivers and textconv are turned off by --no-ext-diff / --no-textconv on the diff itself.
_SAFE_CONFIG = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", os.devnull),
    ("core.pager", "cat"),
    ("core.quotePath", "false"),
    ("diff.external", ""),
    ("diff.relative", "false"),  # names from the top level (a config key older git ignores, unlike --no-relative)
)
# git's words for an object it would have fetched: "could not fetch <id> from promisor remote" (the
# transport refused), "lazy fetching disabled" (GIT_NO_LAZY_FETCH).
_MISSING_OBJECT = re.compile(r"promisor remote|lazy fetch")
_FILTER_KEY = re.compile(r"^filter\.(.+)\.(?:clean|smudge|process|required)$", re.DOTALL)


# Variables that keep git from reaching any remote. GIT_ALLOW_PROTOCOL set (even empty) is a list of
# the transports allowed, overriding every protocol.*.allow the repository's config may set: empty
# allows none (file, ssh, http, ext, remote helpers), so a lazy fetch fails before it connects on any
# git version. GIT_NO_LAZY_FETCH (git >= 2.44) stops the lazy fetch itself, with a clearer error.
_SAFE_ENVIRONMENT = {
    "GIT_ALLOW_PROTOCOL": "",
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_TERMINAL_PROMPT": "0",  # never wait for a password
    "GIT_OPTIONAL_LOCKS": "0",  # reading must not rewrite the index
}
_UNSAFE_VARIABLES = ("GIT_EXTERNAL_DIFF", "GIT_PAGER")


def _environment(config: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The environment with the guards above, and `config` added as GIT_CONFIG_KEY_n/VALUE_n after any
    the user set (unlike `-c key=value`, these take names containing `=` as they are)."""
    environment = {name: value for name, value in os.environ.items() if name not in _UNSAFE_VARIABLES}
    environment.update(_SAFE_ENVIRONMENT)
    try:
        count = int(environment.get("GIT_CONFIG_COUNT", "0"))
    except ValueError:
        count = 0
    for index, (key, value) in enumerate(config, start=count):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    environment["GIT_CONFIG_COUNT"] = str(count + len(config))
    return environment


def _filter_drivers(cwd: Path) -> list[str]:
    """Names of the filter drivers configured for this repository (any config file git reads)."""
    listing = _run_git(["config", "--null", "--get-regexp", r"^filter\."], cwd, allow=(1,))
    names = []
    for entry in filter(None, listing.split("\0")):
        match = _FILTER_KEY.match(entry.split("\n", 1)[0])
        if match and match.group(1) not in names:
            names.append(match.group(1))
    return names


def _without_filters(drivers: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """Config that empties every driver's commands: git then compares the file's bytes as they are."""
    return tuple(
        (f"filter.{name}.{key}", value)
        for name in drivers
        for key, value in (("clean", ""), ("smudge", ""), ("process", ""), ("required", "false"))
    )


def _git(args: Sequence[str], cwd: Path) -> str:
    return _run_git(args, cwd, _without_filters(_filter_drivers(cwd)))


def _run_git(args: Sequence[str], cwd: Path, config: Sequence[tuple[str, str]] = (), allow: Sequence[int] = ()) -> str:
    """Every git command memlint runs goes through here, with the guards of _SAFE_CONFIG and
    _SAFE_ENVIRONMENT (and `config` after them)."""
    command = ["git", "--no-pager", *args]
    try:
        completed = subprocess.run(command, cwd=cwd, capture_output=True, timeout=300, env=_environment((*_SAFE_CONFIG, *config)))
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if completed.returncode in allow:
        return completed.stdout.decode("utf-8", "surrogateescape")
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip() or f"exit status {completed.returncode}"
        if _MISSING_OBJECT.search(message):
            message += (
                "\n(an object is missing from this partial clone: memlint never fetches, as that would run commands"
                " the repository's configuration chooses; fetch it yourself first, e.g. with `git diff --stat BASE`,"
                " if you trust this repository)"
            )
        raise GitError(message)
    return completed.stdout.decode("utf-8", "surrogateescape")


def _unquote(path: str) -> str:
    """git writes names with unusual characters as C-style quoted strings."""
    if not (path.startswith('"') and path.endswith('"')):
        return path
    raw = path[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "surrogateescape").decode("utf-8", "surrogateescape")


def parse_diff(text: str) -> dict[str, set[int]]:
    """New-side line numbers of added or changed lines, per file (deleted files are left out)."""
    lines: dict[str, set[int]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("+++ "):
            name = _unquote(line[4:].rstrip("\t"))
            current = None if name == "/dev/null" else name[2:] if name.startswith("b/") else name
            if current is not None:
                lines.setdefault(current, set())
            continue
        match = _HUNK.match(line)
        if match and current is not None:
            start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
            lines[current].update(range(start, start + count))
    return lines


# Options of every diff: no configured diff program, no text conversion, no submodule status (that
# runs git in each submodule, with the submodule's own filter drivers).
_DIFF_OPTIONS = ("--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--no-color")
# Names per `git diff` call when diffing a list of files: far below any command-line limit.
_NAMES_PER_CALL = 500


def _literal(name: str) -> str:
    """A pathspec matching exactly this name, relative to the repository's top level."""
    return f":(top,literal){name}"


def changed_lines(base: str, paths: Sequence[Path], cwd: Path, suffixes: Optional[tuple[str, ...]] = None) -> ChangedLines:
    """Lines added or changed between `base` and the working tree (untracked files included), under
    `paths` (relative to cwd), of the files whose names end with one of `suffixes` (all without)."""
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], cwd)
    except GitError:
        raise GitError(f"'{base}' is not a commit in this repository") from None
    pathspecs = [str(p) for p in paths]

    def wanted(name: str) -> bool:
        return suffixes is None or name.endswith(suffixes)

    # The names first (no content is read: git compares object ids and the index's file stats), then
    # the diff of the wanted ones, with their old names too so that a renamed file is found renamed.
    names = _git(["diff", "--name-only", "-z", "--no-renames", *_DIFF_OPTIONS, base, "--", *pathspecs], cwd)
    wanted_names = [name for name in filter(None, names.split("\0")) if wanted(name)]
    lines: dict[str, set[int]] = {}
    for start in range(0, len(wanted_names), _NAMES_PER_CALL):
        batch = wanted_names[start : start + _NAMES_PER_CALL]
        diff = _git(
            ["diff", "--unified=0", "--find-renames", "--src-prefix=a/", "--dst-prefix=b/", *_DIFF_OPTIONS, base,
             "--", *map(_literal, batch)],
            cwd,
        )  # fmt: skip
        lines.update(parse_diff(diff))
    # Files not yet added to git are new in the working tree: every line of them is a change.
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", *pathspecs], cwd)
    for name in filter(None, untracked.split("\0")):
        count = _line_count(root, name) if wanted(name) else None
        if count is not None:
            lines[name] = set(range(1, count + 1))
    return ChangedLines(root, lines)


def regular_file_in(root: Path, name: str) -> bool:
    """Whether `name` (relative to the repository's top level) is a regular file inside it, reached
    without a symlink: a symlink may point at /dev/zero, a FIFO or a file outside the repository."""
    path = root / name
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        return os.path.commonpath([os.path.realpath(path), os.path.realpath(root)]) == os.path.realpath(root)
    except (OSError, ValueError):
        return False


def _line_count(root: Path, name: str) -> Optional[int]:
    """Lines of an untracked regular file, read in blocks (a large file costs no memory)."""
    if not regular_file_in(root, name):
        return None
    count = 1
    try:
        with open(root / name, "rb") as stream:
            if not stat.S_ISREG(os.fstat(stream.fileno()).st_mode):
                return None  # replaced since the check
            for block in iter(lambda: stream.read(1 << 20), b""):
                count += block.count(b"\n")
    except OSError:
        return None
    return count


def text_at(base: str, path: str, root: Path) -> Optional[str]:
    """The file's text at `base` (raw blob, no filters), or None when it did not exist there; GitError
    when it did but git cannot read it (an object missing from a partial clone)."""
    try:
        blob = _git(["rev-parse", "--verify", "--quiet", f"{base}:{path}"], root).strip()
    except GitError:
        return None
    return _git(["cat-file", "blob", blob], root)
