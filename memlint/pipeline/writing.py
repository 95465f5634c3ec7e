"""Writing a file without ever losing what it held: `--fix`, `--add-noqa`, and the files memlint
produces (a baseline, a report, plots).

The policy (docs/reliability.md, "How `--fix` writes a file" and "What memlint reads and writes"):
a temporary file beside the file and a rename, so that a crash or Ctrl-C leaves the old file or the
new one; the file's mode, owner, group and hard links kept; read-only files and files changed on
disk since they were read refused.  Code is written through a symlink to the file it names (links
stay links); a file memlint produces is never written through a symlink.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path
from typing import Optional, Sequence

from memlint.pipeline.reading import kind_of, read_regular

class FileChangedError(Exception):
    """The file on disk changed after memlint read it; it was not overwritten."""


class WriteRefused(OSError):
    """memlint will not write this file (read-only, not a regular file, a link out of the paths being
    checked, or a link where memlint writes no link)."""


def within(path: str, roots: Sequence[str]) -> bool:
    """Is the real path `path` one of `roots` (real paths) or inside one of them?"""
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _read_only(path: Path, info: os.stat_result) -> bool:
    """No write bit at all (which root ignores), or not writable by this user."""
    effective = os.access in os.supports_effective_ids
    return not info.st_mode & 0o222 or not os.access(path, os.W_OK, effective_ids=effective)


def write_atomically(
    path: Path,
    data: bytes,
    *,
    expected: Optional[bytes] = None,
    roots: Optional[Sequence[str]] = None,
    follow_links: bool = True,
    create: bool = False,
) -> None:
    """Write `data` to `path` without ever leaving it half written, and keep what it is:

    - refuse (WriteRefused) a read-only file, anything but a regular file, and with `roots`, a file
      whose real path (through symlinks) is outside them: a symlink found in a linted directory that
      points elsewhere;
    - a symlink keeps pointing where it did: the file it names is written; with `follow_links`
      False, a symlink is refused instead (a file memlint produces is never written through one);
    - normally a temporary file beside the file (named by memlint.pipeline.tempfiles), fsync, the same mode,
      owner and group, then a rename over the file: a crash leaves the old or the new file;
    - in place, when a rename would change what the file is: it has other hard links (a rename would
      split them), its owner or group cannot be given to a new file (another user's file we may
      write), or its directory is not writable;
    - with `expected`, refuse (FileChangedError) when the file no longer holds those bytes;
    - with `create`, a file that does not exist is created (by the same rename), with the mode a new
      file gets (0666 less the umask); otherwise its absence is FileNotFoundError.
    """
    path = Path(path)
    if not follow_links and os.path.islink(path):
        raise WriteRefused(
            f"it is a symbolic link (to {os.readlink(path)}); memlint does not write through a link here: "
            "remove the link or name another file"
        )
    target = Path(os.path.realpath(path))
    if roots is not None and not within(str(target), roots):
        raise WriteRefused(
            f"it is a symlink to {target}, outside the paths being checked (name that file to fix it)"
        )
    try:
        info: Optional[os.stat_result] = os.stat(target)
    except FileNotFoundError:
        if not create:
            raise
        info = None
    if info is not None:
        if not stat.S_ISREG(info.st_mode):
            raise WriteRefused(f"not a regular file: it is {kind_of(info.st_mode)}")
        if expected is not None and read_regular(target, None) != expected:
            raise FileChangedError(f"{path} changed on disk since it was read; not overwritten")
        if _read_only(target, info):
            raise WriteRefused(f"the file is read-only (mode {stat.S_IMODE(info.st_mode):04o})")
        if info.st_nlink > 1:
            _write_in_place(target, data, expected)
            return
    from memlint.pipeline.tempfiles import SUFFIX, prefix_for, remove_stale, stale_beside

    try:
        descriptor, temporary = tempfile.mkstemp(prefix=prefix_for(target.name), suffix=SUFFIX, dir=target.parent)
    except PermissionError:  # a directory we may not add to, holding a file we may write
        if info is None:
            raise
        _write_in_place(target, data, expected)
        return
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
            new = os.fstat(handle.fileno())
        owner_kept = info is None or _give_owner(temporary, new, info)
        if owner_kept:
            # after chown, which may clear set-id bits; mkstemp made the file 0600
            os.chmod(temporary, _new_file_mode() if info is None else stat.S_IMODE(info.st_mode))
            os.replace(temporary, target)
    except BaseException:
        _unlink(temporary)
        raise
    if not owner_kept:
        _unlink(temporary)
        _write_in_place(target, data, expected)
        return
    remove_stale(stale_beside(target))  # left by a run that was killed while writing this file


def write_output(path: Path, data: bytes) -> None:
    """Write a file memlint produces at the name the user gave (a baseline, a report, a plot): a new
    file, or a regular file replaced as `write_atomically` replaces one; never through a symbolic
    link, never into a FIFO or a device (WriteRefused)."""
    write_atomically(path, data, follow_links=False, create=True)


def _new_file_mode() -> int:
    """The mode `open` gives a new file: 0666 less the umask.  Python reads the umask only by setting
    it, so it is set and put back at once (memlint writes these files from its main thread)."""
    mask = os.umask(0o077)
    os.umask(mask)
    return 0o666 & ~mask


def _give_owner(temporary: str, new: os.stat_result, old: os.stat_result) -> bool:
    """Give the temporary file the owner and group of the file it replaces; False when not allowed."""
    if (new.st_uid, new.st_gid) == (old.st_uid, old.st_gid):
        return True
    try:
        os.chown(temporary, old.st_uid, old.st_gid)
    except (PermissionError, AttributeError):  # not root (or not in the group); no chown on Windows
        return False
    return True


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _write_in_place(target: Path, data: bytes, expected: Optional[bytes]) -> None:
    """Overwrite the file's own bytes, keeping its inode (links, owner, ACLs). Not atomic: the space
    is reserved first (so a full disk fails before a byte changes) and any failure while writing puts
    the original bytes back; only a kill during the write itself can leave a partial file."""
    with open(target, "r+b") as handle:
        original = handle.read()
        if expected is not None and original != expected:
            raise FileChangedError(f"{target} changed on disk since it was read; not overwritten")
        descriptor = handle.fileno()
        if len(data) > len(original) and hasattr(os, "posix_fallocate"):
            try:
                os.posix_fallocate(descriptor, 0, len(data))
            except OSError as error:
                if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                    os.ftruncate(descriptor, len(original))  # in case the size grew before it failed
                    raise
        try:
            handle.seek(0)
            handle.write(data)
            handle.truncate()
            handle.flush()
            os.fsync(descriptor)
        except BaseException as error:
            try:
                handle.seek(0)
                handle.write(original)
                handle.truncate()
                handle.flush()
                os.fsync(descriptor)
            except OSError as restoring:
                raise OSError(
                    f"writing failed ({error}) and so did putting the original back ({restoring}): the file may be damaged"
                ) from error
            raise
