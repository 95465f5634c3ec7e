"""Worker processes for runs over many files: how many, and making sure none outlives memlint.

A pool worker waits for its next task on a pipe.  Under the fork start method it inherited both
ends of that pipe, so when memlint dies without shutting the pool down (SIGKILL, or SIGTERM's
default action) the worker never sees end-of-file and waits forever, holding its memory.  Each
worker therefore watches the process that started it:

- on Linux, prctl(PR_SET_PDEATHSIG, SIGKILL) has the kernel kill the worker the moment its parent
  dies (checked once after the call, in case the parent died before it);
- elsewhere (or when prctl is not available), a daemon thread checks once a second whether the
  worker's parent is still the process that started it (a process whose parent dies is given to
  another one, so os.getppid() changes) and ends the worker when it is not.

Nothing is done in the parent: however it dies, its workers follow.  (Windows workers see their
pipes close when the parent dies and end by themselves.)
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Optional

# More worker processes than this many per core only add memory (each imports libcst and the rules)
# and start-up time; CPU-bound work gains nothing from them.
WORKERS_PER_CORE = 4
WINDOWS_LIMIT = 61  # ProcessPoolExecutor refuses more workers on Windows
WATCH_INTERVAL = 1.0  # seconds between two looks at the parent, where prctl is not available
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def worker_count(jobs: int, files: int, cores: Optional[int] = None) -> int:
    """How many workers to start for `files` files when --jobs asked for `jobs`: never more than
    there are files, nor more than WORKERS_PER_CORE per core (`--jobs 1500` on 10 files starts at
    most 10)."""
    cores = cores or os.cpu_count() or 1
    limit = cores * WORKERS_PER_CORE
    if sys.platform == "win32":
        limit = min(limit, WINDOWS_LIMIT)
    return max(1, min(jobs, files, limit))


# The collector's first threshold in memlint's processes.  What memlint allocates is trees (CPython's
# AST, libcst's nodes, summaries) that reference counting frees; at Python's default (700 new
# objects) the collector walks them over and over while they are built, and walks every summary the
# project pass keeps: on timm, in one process, 10,000 took a cold run from 8.3-9.7 s to 7.8-8.2 s of CPU.
GC_THRESHOLD = 10_000


def fewer_collections() -> tuple[int, int, int]:
    """Raise the collector's first threshold to GC_THRESHOLD (never lower it); the old thresholds."""
    old = gc.get_threshold()
    if old[0] < GC_THRESHOLD:
        gc.set_threshold(GC_THRESHOLD, *old[1:])
    return old


def new_pool(workers: int):
    """A process pool whose workers end when memlint does."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(max_workers=workers, initializer=watch_parent, initargs=(os.getpid(),))


def watch_parent(creator: int) -> None:
    """Runs first in each worker: end this process when the one that started it is gone.  `creator`
    is memlint's process id; the worker's parent is memlint itself (fork, spawn) or the start
    method's server process (forkserver), which ends with memlint."""
    if os.name != "posix":
        return
    parent = os.getppid()
    if parent != creator and (parent == 1 or not _alive(creator)):  # memlint died before this worker got here
        os._exit(1)
    if _parent_death_signal():
        if os.getppid() != parent:  # the parent died between getppid() and prctl()
            os._exit(1)
        return
    import threading

    threading.Thread(target=_watch, args=(parent,), name="memlint-watch-parent", daemon=True).start()


def _parent_death_signal() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):  # no C library to load, or no prctl in it
        return False


def _watch(parent: int) -> None:
    import time

    while os.getppid() == parent:
        time.sleep(WATCH_INTERVAL)
    os._exit(1)  # orphaned: nobody is waiting for this worker's results


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # POSIX only: signal 0 checks that the process exists
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to someone else
        return True
    return True
