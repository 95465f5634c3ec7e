"""The project pass on CPython's AST against libcst: `python bench/project_pass_cost.py DIR [RUNS]`.

CPU (one thread, best of RUNS) of CPython's compile of every file memlint discovers under DIR, of the
summaries after it (`summarize`), and of a libcst parse of the same files (docs/architecture.md, "What
a call returns is written once"): what summarising the project from libcst's tree would cost.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memlint.analysis.summaries import summarize  # noqa: E402
from memlint.config import Selection, build_settings, discover  # noqa: E402
from memlint.pipeline.depth import on_deep_stack  # noqa: E402
from memlint.pipeline.files import discover_files  # noqa: E402
from memlint.pipeline.tree import parse_module  # noqa: E402
from memlint.prescreen import Source  # noqa: E402


def one_round(texts: list[str]) -> tuple[float, float, float]:
    clock = time.thread_time
    start = clock()
    for text in texts:
        Source(text).tree
    compiled = clock()
    for text in texts:
        source = Source(text)
        if source.tree is not None:
            summarize(source)
    summarised = clock()
    for text in texts:
        try:
            parse_module(text)
        except Exception:  # noqa: BLE001 - a text libcst refuses costs what it cost
            pass
    parsed = clock()
    compile_time = compiled - start
    return compile_time, (summarised - compiled) - compile_time, parsed - summarised


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    runs = int(argv[1]) if len(argv) > 1 else 3
    settings = build_settings(discover(root), Selection())
    files = discover_files([root], settings).files
    texts = [Path(f).read_text(encoding="utf-8", errors="replace") for f in files]
    rounds = [on_deep_stack(one_round, texts) for _ in range(runs)]
    compile_time, summaries, libcst = (min(column) for column in zip(*rounds))
    print(f"{len(files)} files: CPython compile {compile_time:.2f} s, summaries after it {summaries:.2f} s, "
          f"libcst parse {libcst:.2f} s (CPU, best of {runs})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
