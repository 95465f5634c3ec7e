"""Worker processes: none outlives memlint, however it dies, and --jobs never starts more than needed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import memlint_subprocess, write

from memlint.pipeline.workers import worker_count

# memlint as users start it, except that checking `slow.py` takes ten minutes: its worker is busy
# and the other worker idle (waiting for a task) when the test kills memlint.  The patch reaches
# the workers because they are forked from this process.
SLOW_RUN = """
import sys, time
from pathlib import Path
import memlint.pipeline.runner as runner
import memlint.pipeline.workers as workers

checked = runner._process_chunk
def process_chunk(paths, *args):
    if any(Path(path).name == "slow.py" for path in paths):
        Path(sys.argv[1]).write_text("started")
        time.sleep(600)
    return checked(paths, *args)
runner._process_chunk = process_chunk
if sys.argv[2] == "no-prctl":  # the portable fallback: a thread in each worker watches its parent
    workers._parent_death_signal = lambda: False
from memlint.cli import main
main(sys.argv[3:], prog_name="memlint")
"""


def _stat(pid: int) -> list[str] | None:
    """Fields 3.. of /proc/PID/stat (state, ppid, ...), or None once the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _children(parent: int) -> dict[int, str]:
    """The processes whose parent is `parent`, with their start times (to tell a reused pid)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and int(fields[1]) == parent:
                found[int(entry)] = fields[19]
    return found


def _running(pid: int, started: str) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[19] == started and fields[0] != "Z"  # a zombie has ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes through /proc")
@pytest.mark.parametrize("watch", ["prctl", "no-prctl"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_no_worker_outlives_a_killed_memlint(tmp_path, signum, watch):
    project = tmp_path / "project"
    # Files the screens let through, so that each is linted by a worker (phase two of a run).
    loop = "import torch\ntotal = 0\nfor x in loader:\n    total += model(x)\n"
    write(project / "slow.py", loop + "x = torch.zeros(1)\n" * 200)  # largest: checked first
    for index in range(15):
        write(project / f"m{index:02d}.py", f"{loop}x{index} = torch.zeros(1)\n")
    script = write(tmp_path / "slow_memlint.py", SLOW_RUN)
    started = tmp_path / "started"
    command = [sys.executable, str(script), str(started), watch, "check", "--no-cache", "--jobs", "2", "."]
    memlint = subprocess.Popen(command, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    workers: dict[int, str] = {}
    try:
        deadline = time.monotonic() + 120
        while not (started.exists() and len(workers) >= 2):
            assert memlint.poll() is None, memlint.stderr.read().decode()
            assert time.monotonic() < deadline, "the workers did not start"
            workers = _children(memlint.pid)
            time.sleep(0.05)
        assert len(workers) == 2
        os.kill(memlint.pid, signum)
        memlint.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(_running(pid, start) for pid, start in workers.items()) and time.monotonic() < deadline:
            time.sleep(0.05)
        survivors = [pid for pid, start in workers.items() if _running(pid, start)]
        assert not survivors, f"workers {survivors} outlived memlint ({signal.Signals(signum).name}, {watch})"
    finally:
        if memlint.poll() is None:
            memlint.kill()
            memlint.wait()
        for pid, start in workers.items():  # a failed run must not leave its sleepers behind
            if _running(pid, start):
                os.kill(pid, signal.SIGKILL)
        memlint.stderr.close()


# memlint as users start it, counting the processes it starts.
COUNTING_RUN = """
import atexit, sys
import multiprocessing.process

started = []
start = multiprocessing.process.BaseProcess.start
def counting_start(self):
    started.append(self)
    return start(self)
multiprocessing.process.BaseProcess.start = counting_start
atexit.register(lambda: print(f"processes started: {len(started)}", file=sys.stderr))
from memlint.cli import main
main(sys.argv[1:], prog_name="memlint")
"""


def test_jobs_never_start_more_workers_than_files(tmp_path):
    project = tmp_path / "project"
    for index in range(10):
        write(project / f"m{index:02d}.py", f"import torch\nx{index} = torch.zeros(1)\ntotal = 0\nfor x in loader:\n    total += model(x)\n")
    script = write(tmp_path / "counting_memlint.py", COUNTING_RUN)
    runs = {}
    for jobs in ("1", "1500"):
        run = subprocess.run(
            [sys.executable, str(script), "check", "--no-cache", "--jobs", jobs, "--output-format", "json", "."],
            cwd=project, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert run.returncode in (0, 1), run.stderr
        runs[jobs] = run
    counts = {jobs: int(run.stderr.rsplit("processes started: ", 1)[1].split()[0]) for jobs, run in runs.items()}
    assert counts["1"] == 0  # one job: checked in this process
    assert 1 <= counts["1500"] <= 10
    assert runs["1500"].stdout == runs["1"].stdout  # the same findings, whatever the number of workers


def test_worker_count():
    assert worker_count(1500, 10, cores=64) == 10  # never more workers than files
    assert worker_count(1500, 10_000, cores=2) == 8  # nor more than four per core
    assert worker_count(3, 100, cores=2) == 3
    assert worker_count(4, 0, cores=2) == 1


def test_many_jobs_on_few_files_as_users_run_it(project):
    for index in range(10):
        write(project / f"m{index:02d}.py", f"import torch\nx{index} = torch.zeros(1)\n")
    result = memlint_subprocess("check", "--no-cache", "--jobs", "1500", ".", cwd=project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All checks passed!\n" and result.stderr == ""
