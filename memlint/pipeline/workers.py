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
import signal
import sys
from contextlib import contextmanager
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


# The exit status after Ctrl-C: 128 + SIGINT, as a shell reports a process the signal ended, and as Ruff exits.
INTERRUPTED = 130


def new_pool(workers: int):
    """A process pool whose workers end when memlint does, and that `stop()` ends at once."""
    from concurrent.futures import ProcessPoolExecutor

    class Pool(ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):
            # submit() is where the pool forks its workers: each starts with SIGINT held (see
            # _interrupts_held) and lets it through once its own handler is in place.
            with _interrupts_held():
                return super().submit(_interruptible, fn, *args, **kwargs)

        def stop(self) -> None:
            """After Ctrl-C (or any exception in memlint): drop the queued tasks, interrupt the
            running ones (each leaves the file it was writing whole, without a temporary file) and
            wait until every worker has ended.  A plain shutdown would run the queued tasks first."""
            processes = list((getattr(self, "_processes", None) or {}).values())
            # The first shutdown forgets the pool's manager thread, so the second cannot join it: joined
            # here, it cannot outlive memlint's exit and race concurrent.futures' exit hook, which
            # wakes it through a pipe the thread closes as it ends (a "Bad file descriptor" traceback).
            manager = getattr(self, "_executor_manager_thread", None)
            # A second SIGINT (from a terminal it reaches memlint as well as its workers, and either
            # may come first) must not cut the wait short: the pool's thread would outlive the wait
            # and race the interpreter's exit.
            ignored = _ignore_interrupts()
            try:
                self.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    try:
                        os.kill(process.pid, signal.SIGINT)
                    except (OSError, TypeError):  # ended already, or not started (no pid yet)
                        pass
                self.shutdown(wait=True)
                if manager is not None:
                    manager.join()
            finally:
                if ignored is not None:
                    signal.signal(signal.SIGINT, ignored)

    return Pool(max_workers=workers, initializer=_start_worker, initargs=(os.getpid(),))


def _ignore_interrupts():
    """Ignore SIGINT from now on; the handler it had, or None where it cannot be changed (a thread
    other than the main one: memlint used as a library)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.SIG_IGN)


@contextmanager
def _interrupts_held():
    """Hold SIGINT back from the calling thread for the duration; a process forked meanwhile starts
    with it held too.  Between the fork and its initializer a worker still has memlint's handler:
    SIGINT there (Ctrl-C just as the pool starts, or `Pool.stop`) would raise KeyboardInterrupt in the
    child's copy of memlint's own stack, outside multiprocessing's code, and that copy would go on to
    run memlint's own clean-up and messages (seen in CI: a worker of the test suite's pool unwound
    the copy of pytest it was forked from, which reported the run as interrupted and hung it).  A
    signal that arrives while held waits, and is handled as soon as it is let through."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: workers are spawned, not forked
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _start_worker(creator: int) -> None:
    watch_parent(creator)
    signal.signal(signal.SIGINT, _on_interrupt)
    if hasattr(signal, "pthread_sigmask"):  # a SIGINT held since the fork is handled now, by _on_interrupt
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


# In a worker: whether a task is running, and whether SIGINT was received.
_busy = False
_interrupted = False


def _interruptible(function, *args, **kwargs):
    """What the pool runs for each task: `function`, which SIGINT unwinds by KeyboardInterrupt (the
    file being written is left whole, its temporary file removed: memlint/pipeline/writing.py).
    Once interrupted, a worker skips the tasks still queued for it, so that it ends as soon as the
    pool sends it the signal to stop; the exception goes back to memlint, which prints no traceback."""
    global _busy
    _busy = True
    try:
        if _interrupted:
            raise KeyboardInterrupt
        return function(*args, **kwargs)
    finally:
        _busy = False


def _on_interrupt(signum, frame) -> None:
    """SIGINT in a worker: Ctrl-C reaches every process of the terminal's process group, and memlint
    sends it to its workers when it is interrupted itself (`Pool.stop`).  A busy worker unwinds its
    task; an idle one only remembers it (Python's own handler would raise in the pool's queue and
    print a traceback, and a worker that ended there would make the pool "broken" and have the
    others killed while they clean up).  memlint itself reports the interruption, once."""
    global _interrupted
    if _interrupted:
        return  # the first signal is still unwinding the task: let it finish cleaning up
    _interrupted = True
    if _busy:
        raise KeyboardInterrupt


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
