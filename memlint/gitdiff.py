"""Which lines changed since a git ref, from `git diff --unified=0` (no external diff drivers, no
textconv filters: reading a diff must never run code from the repository under review)."""

from __future__ import annotations

import re
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


def _git(args: Sequence[str], cwd: Path) -> str:
    command = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotePath=false", *args]
    try:
        completed = subprocess.run(command, cwd=cwd, capture_output=True, timeout=300)
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip() or f"exit status {completed.returncode}"
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


def changed_lines(base: str, paths: Sequence[Path], cwd: Path) -> ChangedLines:
    """Lines added or changed between `base` and the working tree (untracked files included), under
    `paths` (relative to cwd)."""
    root = Path(_git(["rev-parse", "--show-toplevel"], cwd).strip())
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{base}^{{commit}}"], cwd)
    except GitError:
        raise GitError(f"'{base}' is not a commit in this repository") from None
    diff = _git(
        ["diff", "--unified=0", "--no-color", "--no-ext-diff", "--no-textconv", "--find-renames",
         "--src-prefix=a/", "--dst-prefix=b/", base, "--", *[str(p) for p in paths]],
        cwd,
    )  # fmt: skip
    lines = parse_diff(diff)
    # Files not yet added to git are new in the working tree: every line of them is a change.
    untracked = _git(["ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", *[str(p) for p in paths]], cwd)
    for name in filter(None, untracked.split("\0")):
        try:
            count = (root / name).read_bytes().count(b"\n") + 1
        except OSError:
            continue
        lines[name] = set(range(1, count + 1))
    return ChangedLines(root, lines)


def text_at(base: str, path: str, root: Path) -> Optional[str]:
    """The file's text at `base` (raw blob, no filters), or None when it did not exist there."""
    try:
        return _git(["cat-file", "blob", f"{base}:{path}"], root)
    except GitError:
        return None
