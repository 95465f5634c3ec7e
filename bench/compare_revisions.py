"""Do two revisions of memlint give the same findings and the same fixes?  The proof a refactoring owes
(issue 14: "findings and fixes are byte-identical before and after").

    python bench/compare_revisions.py REV_A REV_B [TARGET ...]

Each revision is checked out with `git worktree` into a temporary folder and run from there (with the
interpreter's site-packages for libcst and click, and without the editable install of this checkout),
over each target: `memlint check --output-format json --no-cache --exit-zero` (the findings) and
`memlint check --diff --unsafe-fixes --no-cache` (every fix, safe and unsafe), with an empty
configuration and every rule selected.  The outputs are compared byte for byte.  Default targets:
fixtures/ and the library corpora under bench/corpora/ that are present (bench/corpora.py fetches them).
Exit 0 when every output is identical, 1 otherwise (the first differing lines are printed).

`--timing-runs N` then times `memlint check --no-cache --jobs 2` with the default rules on each
target, the two revisions interleaved, N runs each, and prints the medians of wall time and CPU
time (the children's user + system time, which the machine's other load inflates less).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY_CORPORA = ("timm-1.0.31", "transformers-5.23.0", "pytorch-lightning-2.6.6", "torchvision-0.29.2")


def default_targets() -> list[Path]:
    found = [ROOT / "fixtures"]
    found += [ROOT / "bench" / "corpora" / name for name in LIBRARY_CORPORA if (ROOT / "bench" / "corpora" / name).is_dir()]
    return found


def checkout(revision: str, into: Path) -> Path:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(into), revision], check=True)
    (into / "memlint" / "rules").symlink_to(into / "rules", target_is_directory=True)  # as the wheel ships it
    return into


def run(tree: Path, target: Path, config: Path, *extra: str) -> tuple[bytes, float]:
    # -S: no .pth files, so this checkout's editable install cannot shadow the worktree's memlint
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), sysconfig.get_paths()["purelib"]])}
    env.pop("MEMLINT_CACHE_DIR", None)
    command = [sys.executable, "-S", "-m", "memlint", "check", str(target), "--config", str(config),
               "--select", "ML", "--extend-select", "ML017", "--no-cache", "--jobs", "2", *extra]  # fmt: skip
    started = time.perf_counter()
    # run from the scratch folder: a working directory inside a checkout would put its memlint first
    done = subprocess.run(command, capture_output=True, env=env, cwd=tree.parent)
    if done.returncode not in (0, 1) or b"Traceback" in done.stderr:
        sys.stderr.write(done.stderr.decode(errors="replace")[-2000:])
        raise SystemExit(f"memlint at {tree.name} failed on {target.name} (exit {done.returncode})")
    return done.stdout, time.perf_counter() - started


def timed(tree: Path, target: Path) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), sysconfig.get_paths()["purelib"]])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-S", "-m", "memlint", "check", str(target), "--no-cache", "--jobs", "2", "--exit-zero"],
                   capture_output=True, env=env, cwd=tree.parent, check=True)  # fmt: skip
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def first_difference(a: bytes, b: bytes) -> str:
    for number, (left, right) in enumerate(zip(a.splitlines(), b.splitlines()), start=1):
        if left != right:
            return f"line {number}:\n  - {left[:200]!r}\n  + {right[:200]!r}"
    return f"lengths differ: {len(a)} vs {len(b)} bytes"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    parser.add_argument("targets", nargs="*", type=Path)
    parser.add_argument("--timing-runs", type=int, default=0, help="also time cold runs, N per revision, interleaved")
    args = parser.parse_args(argv)
    # a SIGTERM unwinds like Ctrl-C, so that the worktrees are removed (the `finally` below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    targets = [t.resolve() for t in args.targets] or default_targets()
    same = True
    with tempfile.TemporaryDirectory(prefix="memlint-compare-") as scratch:
        scratch_path = Path(scratch)
        config = scratch_path / "memlint.toml"
        config.write_text('gpu-memory = "16GiB"\n', encoding="utf-8")
        trees = [checkout(args.rev_a, scratch_path / "a"), checkout(args.rev_b, scratch_path / "b")]
        try:
            for target in targets:
                for label, extra in (("findings", ("--output-format", "json", "--exit-zero")), ("fixes", ("--diff", "--unsafe-fixes"))):
                    (out_a, secs_a), (out_b, secs_b) = (run(tree, target, config, *extra) for tree in trees)
                    verdict = "identical" if out_a == out_b else "DIFFERENT"
                    same &= out_a == out_b
                    print(f"{target.name:28} {label:9} {len(out_a):>10,} bytes  {verdict}  ({secs_a:.1f} s / {secs_b:.1f} s)")
                    if out_a != out_b:
                        print("  " + first_difference(out_a, out_b))
            for target in targets if args.timing_runs else ():
                samples: list[list[tuple[float, float]]] = [[], []]
                for _ in range(args.timing_runs):
                    for index, tree in enumerate(trees):
                        samples[index].append(timed(tree, target))
                (wall_a, cpu_a), (wall_b, cpu_b) = (
                    (statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)) for runs in samples
                )
                print(f"{target.name:28} cold, median of {args.timing_runs}: wall {wall_a:.2f} / {wall_b:.2f} s, "
                      f"CPU {cpu_a:.2f} / {cpu_b:.2f} s  ({args.rev_a} / {args.rev_b})")  # fmt: skip
        finally:
            for tree in trees:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=False)
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
