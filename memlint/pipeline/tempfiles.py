"""The temporary files `--fix` writes beside a file before renaming them over it.

They are named `.<file name>.<pid>.<random>.memlint-tmp`: hidden, never a source suffix (so discovery
never lints one), and carrying the id of the process that wrote it, so that one left behind by a
killed run (`kill -9` between writing and renaming) is recognised as stale and removed by the next
`--fix`. This module imports nothing heavy: discovery uses it to spot them.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Iterable

SUFFIX = ".memlint-tmp"
# The file's own name is cut to this many bytes in the temporary name, so that a file named at the
# length limit of its filesystem (NAME_MAX, usually 255 bytes) can still be fixed.
NAME_BYTES = 100
_NAME = re.compile(r"^\.(?P<name>.*)\.(?P<pid>[0-9]+)\.[A-Za-z0-9_]+" + re.escape(SUFFIX) + r"$", re.DOTALL)
# A temporary file without a process id (written by memlint 0.x before this naming) is stale after this.
_OLD_FORMAT_AGE_S = 3600.0


def prefix_for(name: str) -> str:
    """The start of the temporary names for the file `name` (mkstemp adds `<random>` and SUFFIX)."""
    short = name
    while len(os.fsencode(short)) > NAME_BYTES:
        short = short[:-1]
    return f".{short}.{os.getpid()}."


def is_temporary(name: str) -> bool:
    return name.startswith(".") and name.endswith(SUFFIX)


def is_stale(path: Path) -> bool:
    """Was this temporary file left by a process that no longer runs?"""
    match = _NAME.match(path.name)
    if match is None or os.name != "posix":  # os.kill(pid, 0) means something else on Windows
        try:
            return time.time() - os.lstat(path).st_mtime > _OLD_FORMAT_AGE_S
        except OSError:
            return False
    pid = int(match["pid"])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError, OSError):
        return False  # a process of another user, or a pid we cannot ask about: leave it
    return False


def remove_stale(paths: Iterable[Path]) -> list[Path]:
    """Remove the stale temporary files among `paths`; returns those removed."""
    removed = []
    for path in paths:
        if is_temporary(path.name) and is_stale(path):
            try:
                if os.path.isfile(path) and not os.path.islink(path):
                    os.unlink(path)
                    removed.append(path)
            except OSError:
                pass  # a read-only directory: it stays, and discovery keeps ignoring it
    return removed


def stale_beside(target: Path) -> list[Path]:
    """Temporary files of `target` (and of files whose names share its first NAME_BYTES bytes) in its
    directory."""
    start = prefix_for(target.name).rsplit(".", 2)[0] + "."  # without this process's id
    try:
        with os.scandir(target.parent) as entries:
            return [Path(entry.path) for entry in entries if entry.name.startswith(start) and is_temporary(entry.name)]
    except OSError:
        return []
