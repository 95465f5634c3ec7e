"""Cold time against the parse floor in CPU seconds, for this tree and another, interleaved:

    python bench/cold_cpu.py CORPUS [--base TREE] [--rounds N] [--jobs J]

Each round runs bench/perf.py's parse floor (libcst parses every file memlint checks under CORPUS, J
processes) and then `memlint check --no-cache --jobs J CORPUS` from a snapshot of each tree (this one,
and TREE, another checkout), and takes the CPU of each command: user + system time of the process
and the workers it waited for (wait4).  On a machine other people load, CPU time moves far less
than wall time (perf.py's ratio), and the floor is measured in the same round as both trees.
Prints the medians and the ratios cold / floor.
"""

from __future__ import annotations

import argparse
import compileall
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
sys.path.insert(0, str(BENCH))

from perf import FLOOR_SCRIPT, python_files  # noqa: E402


def snapshot(tree: Path) -> Path:
    """memlint/ and rules/ (as memlint/rules) of `tree`, compiled, in a temporary folder (as perf.py)."""
    target = Path(tempfile.mkdtemp(prefix="memlint-cold-cpu-"))
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(tree / "memlint", target / "memlint", ignore=ignore)
    shutil.copytree(tree / "rules", target / "memlint" / "rules", ignore=ignore, dirs_exist_ok=True)
    compileall.compile_dir(str(target), quiet=1)
    return target


def cpu(command: list[str], pythonpath: str | None = None) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one command and the workers it waited for."""
    env = {**os.environ, **({"PYTHONPATH": pythonpath} if pythonpath else {})}
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=pythonpath or None)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"failed: {' '.join(command)}")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", type=Path)
    parser.add_argument("--base", type=Path, help="another checkout to measure in the same rounds")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    files = python_files(args.corpus)
    folder = Path(tempfile.mkdtemp(prefix="memlint-cold-cpu-"))
    file_list, floor_script = folder / "files.txt", folder / "floor.py"
    file_list.write_text("\n".join(files))
    floor_script.write_text(FLOOR_SCRIPT)
    trees = {"this tree": BENCH.parent, **({"base": args.base.resolve()} if args.base else {})}
    snapshots = {name: snapshot(tree) for name, tree in trees.items()}
    samples: dict[str, list[tuple[float, float]]] = {"floor": [], **{name: [] for name in trees}}
    jobs = str(args.jobs)
    try:
        for round_number in range(args.rounds):
            samples["floor"].append(cpu([sys.executable, str(floor_script), str(file_list), jobs]))
            order = list(trees) if round_number % 2 == 0 else list(reversed(trees))
            for name in order:
                command = [sys.executable, "-m", "memlint", "check", "--exit-zero", "--no-cache", "--jobs", jobs, str(args.corpus.resolve())]
                samples[name].append(cpu(command, str(snapshots[name])))
            print(f"round {round_number + 1}: " + ", ".join(f"{k} {v[-1][0]:.2f} s CPU / {v[-1][1]:.2f} s wall" for k, v in samples.items()), flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for path in snapshots.values():
            shutil.rmtree(path, ignore_errors=True)
    floor_cpu = median(c for c, _ in samples["floor"])
    floor_wall = median(w for _, w in samples["floor"])
    print(f"{len(files)} files, {args.rounds} rounds, --jobs {jobs}; medians:")
    print(f"  parse floor: {floor_cpu:.2f} s CPU, {floor_wall:.2f} s wall")
    for name in trees:
        cold_cpu = median(c for c, _ in samples[name])
        cold_wall = median(w for _, w in samples[name])
        print(f"  {name}: {cold_cpu:.2f} s CPU ({cold_cpu / floor_cpu:.2f}x the floor), {cold_wall:.2f} s wall ({cold_wall / floor_wall:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
