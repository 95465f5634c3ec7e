"""Reading a file without being led astray by what is on disk: only a regular file is opened, and
only so many bytes are read.

A named pipe (FIFO) opened for reading waits for a writer forever, and `/dev/zero` or a multi-GB file
read whole grows until memory runs out, so a repository could hang or kill memlint by putting one
where a configuration, ignore or baseline file is expected. `read_regular` checks what the name is
before opening it, opens without blocking (in case the name was replaced in between) and checks
again what it opened (docs/reliability.md, "What memlint reads and writes").
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional, Union

# Configuration files (memlint.toml, pyproject.toml and the files they `extend`) and git's ignore
# files are small; a few MiB is far more than any real one and little enough to parse.
CONFIG_LIMIT = 4 * 2**20
# A baseline holds one entry (about 300 bytes) per finding it records: this is some 200,000 findings.
BASELINE_LIMIT = 64 * 2**20


class ReadRefused(OSError):
    """memlint will not read this file: it is not a regular file, or it is larger than the limit.
    The message does not name the file: callers put its name first, as they do for other OSErrors."""


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def size_text(size: int) -> str:
    return f"{size // 2**20} MiB" if size % 2**20 == 0 else f"{size} bytes"


def read_regular(path: Union[str, Path], limit: Optional[int], *, what: str = "a file", follow_links: bool = True) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes (None: no limit).

    Raises ReadRefused when it is anything else (a FIFO, a device, a socket, a directory; a symbolic
    link when `follow_links` is False) or larger than `limit` (`what` names the kind of file in that
    message), and OSError as `open` does (FileNotFoundError when it is absent)."""
    status = os.stat(path) if follow_links else os.lstat(path)
    if not stat.S_ISREG(status.st_mode):
        raise ReadRefused(f"not a regular file: it is {kind_of(status.st_mode)}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_links:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(path, flags)
    try:
        status = os.fstat(handle)  # what was opened, should the name have been replaced since the stat
        if not stat.S_ISREG(status.st_mode):
            raise ReadRefused(f"not a regular file: it is {kind_of(status.st_mode)}")
        too_large = ReadRefused(f"larger than {size_text(limit or 0)}, the most memlint reads from {what}")
        if limit is not None and status.st_size > limit:
            raise too_large
        chunks, size = [], 0
        while True:  # to the end, which may differ from st_size if the file is being written
            want = 1 << 20 if limit is None else min(1 << 20, limit + 1 - size)
            chunk = os.read(handle, want)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if limit is not None and size > limit:
                raise too_large
        return b"".join(chunks)
    finally:
        os.close(handle)
