"""Profile `memlint check` in one process: `python bench/profile_lint.py DIR [MAX_FILES] [SORT]`.

Runs the default rule set over the files memlint discovers under DIR (the first MAX_FILES of them)
with cProfile and prints the CPU time and the 40 most expensive functions (SORT: tottime or
cumulative).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memlint.config import Selection, build_settings, discover  # noqa: E402
from memlint.pipeline.files import discover_files  # noqa: E402
from memlint.pipeline.runner import Mode, run  # noqa: E402


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    settings = build_settings(discover(root), Selection())
    files = discover_files([root], settings).files
    if len(argv) > 1:
        files = files[: int(argv[1])]
    profiler = cProfile.Profile()
    start = time.process_time()
    profiler.enable()
    run(files, settings, Mode(), jobs=1)
    profiler.disable()
    print(f"{len(files)} files, {time.process_time() - start:.1f} s CPU (profiled)")
    pstats.Stats(profiler).sort_stats(argv[2] if len(argv) > 2 else "tottime").print_stats(40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
