"""The whole test suite, run the way that shows whether it depends on the machine (`make determinism`).

    python bench/determinism.py [--threads 1,2,4] [--rounds 2] [--keep] [-- PYTEST ARGS]

A fresh `git clone` of HEAD goes into a temporary directory (uncommitted changes are not tested: commit
first). Its code is installed, editable, into a virtual environment of its own in that directory,
which borrows every other package from the environment running this script, so nothing is
downloaded and nothing of the checkout this script came from is imported. Then the suite runs there
once per thread count, `--rounds` times over, in the same clone (so a run also meets whatever the
runs before it left behind): each run in a random order with its own seed (pytest-randomly) and its
own PYTHONHASHSEED, both printed so that a failing run can be repeated. OMP_NUM_THREADS and
MKL_NUM_THREADS are set to the count, and MEMLINT_TEST_TORCH_THREADS too (tests/conftest.py pins
torch to it: torch caps OMP_NUM_THREADS at the number of cores). After every run the clone must hold
no file the tests left in it. The script exits 1 if any run failed, and keeps the clone to look at.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def fresh_clone(work: Path) -> tuple[Path, str]:
    commit = git("rev-parse", "HEAD", cwd=ROOT).strip()
    changed = git("status", "--porcelain", "--untracked-files=no", cwd=ROOT).splitlines()
    if changed:
        print(f"note: {len(changed)} uncommitted change(s) in {ROOT} are not tested; the clone is HEAD")
    clone = work / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(clone)], check=True)
    git("checkout", "--quiet", "--detach", commit, cwd=clone)
    return clone, commit


def environment_for(clone: Path, work: Path) -> Path:
    """A virtual environment with the clone installed editable; other packages come from ours."""
    venv = work / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())  # fmt: skip
    # A path listed in a .pth file joins sys.path after the environment's own site-packages, and the
    # .pth files inside it are not run: our editable install of memlint stays out.
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]])
    (site / "_borrowed_packages.pth").write_text("".join(f"{path}\n" for path in ours))
    # --no-build-isolation: setuptools is borrowed too. pip leaves our memlint alone (it is outside
    # this environment) and installs only what the test dependency group needs that we lack.
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-build-isolation", "-e", str(clone),
                    "--group", f"{clone / 'pyproject.toml'}:test"], check=True, cwd=work)  # fmt: skip
    probe = subprocess.run(
        [str(python), "-c", "import memlint, memlint.rules, pytest_randomly; print(memlint.__file__); print(*memlint.rules.__path__)"],
        capture_output=True, text=True, cwd=work,
    )  # fmt: skip
    if probe.returncode:
        raise SystemExit(f"the clone's environment is incomplete:\n{probe.stderr}")
    for path in probe.stdout.split("\n")[:2]:
        if not Path(path).resolve().is_relative_to(clone.resolve()):
            raise SystemExit(f"the clone's environment imports memlint from {path}, not from the clone")
    return python


def leftovers(clone: Path) -> set[str]:
    """Files in the clone that git does not track, ignored ones included."""
    return set(git("status", "--porcelain", "--ignored", "--untracked-files=all", cwd=clone).splitlines())


def run_suite(python: Path, clone: Path, threads: int, seed: int, extra: list[str], log: Path) -> tuple[int, str, float]:
    environment = {
        **os.environ,
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "MEMLINT_TEST_TORCH_THREADS": str(threads),
        "PYTHONHASHSEED": str(seed),
        "PYTHONDONTWRITEBYTECODE": "1",  # so that a file left in the clone is one the tests wrote
    }
    environment.pop("VIRTUAL_ENV", None)
    command = [str(python), "-m", "pytest", "-q", "-p", "randomly", f"--randomly-seed={seed}", "-p", "no:cacheprovider", *extra]
    started = time.monotonic()
    with open(log, "w") as output:
        code = subprocess.run(command, cwd=clone, env=environment, stdout=output, stderr=subprocess.STDOUT).returncode
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return code, lines[-1] if lines else "(no output)", time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2,4", help="thread counts, comma-separated (default 1,2,4)")
    parser.add_argument("--rounds", type=int, default=2, help="how many times to go through the thread counts")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory even if every run passed")
    parser.add_argument("pytest_args", nargs="*", help="after --: passed to pytest (e.g. a test file)")
    options = parser.parse_args()
    counts = [int(count) for count in options.threads.split(",")]

    work = Path(tempfile.mkdtemp(prefix="memlint-determinism-"))
    clone, commit = fresh_clone(work)
    print(f"clone of {commit[:12]} in {clone}", flush=True)
    python = environment_for(clone, work)
    before = leftovers(clone)
    results = []
    for round_number in range(1, options.rounds + 1):
        for threads in counts:
            seed = random.SystemRandom().randrange(2**32)
            log = work / f"run{len(results) + 1}-threads{threads}-seed{seed}.log"
            print(f"run {len(results) + 1}: round {round_number}, {threads} thread(s), "
                  f"--randomly-seed={seed} PYTHONHASHSEED={seed} ...", flush=True)  # fmt: skip
            code, summary, seconds = run_suite(python, clone, threads, seed, options.pytest_args, log)
            left = sorted(leftovers(clone) - before)
            if left:
                summary += f"; left in the clone: {', '.join(left[:5])}"
                before |= set(left)  # reported once
            ok = code == 0 and not left
            results.append(ok)
            print(f"    {'passed' if ok else 'FAILED'} in {seconds:.0f} s: {summary}  ({log})", flush=True)
    failed = results.count(False)
    print(f"{len(results) - failed} of {len(results)} runs passed")
    if failed or options.keep:
        print(f"kept {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
