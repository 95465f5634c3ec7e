"""How the time of one file grows with its number of findings, beside how it grows with its size.

    python bench/findings_scaling.py                      # 1,000, 10,000 and 60,000 functions
    python bench/findings_scaling.py 1000 12000 --runs 3  # other sizes, best of 3
    python bench/findings_scaling.py --shape statement    # findings whose fix rewrites a whole loop

Builds a module of N small functions in two variants of the same shape and nearly the same size:
with a finding in every function, and without any.  `--shape call` (default): each function returns
`torch.cuda.amp.GradScaler()` (ML016, whose fix rewrites the call) or `torch.amp.GradScaler("cuda")`;
`--shape statement`: each function runs a model in an evaluation loop without or with
`torch.no_grad()` (ML002, whose fix rewrites the whole loop).  For each it times, in this process
(CPU seconds, best of `--runs`, the two variants alternated so that the machine's load falls on
both alike):

- `analysis`: the full analysis of the file (`checker.check_text`: libcst's parse, the traversal,
  positions, fixes and suppressions, given the statements' rows from CPython's AST as
  `engine.lint_text` gives them), which the file without findings gets too;
- `lint`: what `memlint check` does with the file (`engine.lint_text`: the screens first, so the file
  without findings never reaches libcst), for the record.

The ratio with/without of `analysis` is the cost of the findings themselves (issue 26: at most 4x);
the `without` column across N is the scaling with size.  Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memlint.config import Selection, build_settings, discover  # noqa: E402
from memlint.pipeline.checker import check_text  # noqa: E402
from memlint.pipeline.engine import lint_text  # noqa: E402
from memlint.pipeline.source import statement_rows  # noqa: E402

SHAPES = {
    "call": (
        "\n\ndef f{i}():\n    return torch.cuda.amp.GradScaler()\n",
        '\n\ndef f{i}():\n    return torch.amp.GradScaler("cuda")\n',
    ),
    "statement": (
        "\n\ndef evaluate{i}(model, loader):\n    model.eval()\n    for x in loader:\n        print(model(x))\n",
        "\n\ndef evaluate{i}(model, loader):\n    model.eval()\n    with torch.no_grad():\n        for x in loader:\n"
        "            print(model(x))\n",
    ),
}


def module(count: int, shape: str, findings: bool) -> str:
    with_finding, without = SHAPES[shape]
    block = with_finding if findings else without
    return "import torch\n" + "".join(block.format(i=i) for i in range(count))


def timed(function) -> tuple[float, int]:
    """(CPU seconds of one call, the number of findings it returned)."""
    start = time.process_time()
    found = len(function())
    return time.process_time() - start, found


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("counts", nargs="*", type=int, default=[1000, 10000, 60000])
    parser.add_argument("--shape", choices=sorted(SHAPES), default="call")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args(argv)
    settings = build_settings(discover(Path.cwd()), Selection())
    settings = dataclasses.replace(settings, max_file_size=None)  # the largest module is about 3 MB
    print(f"shape `{args.shape}`, CPU seconds of one process, best of {args.runs}\n")
    print("| functions | findings | bytes with / without | analysis without | analysis with | ratio | lint without | lint with |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|")
    for count in args.counts:
        texts = {findings: module(count, args.shape, findings) for findings in (False, True)}
        times: dict[tuple[str, bool], list[float]] = {}
        found = 0
        for _ in range(args.runs):  # the variants alternate, so that the machine's load falls on both alike
            for findings in (False, True):
                text = texts[findings]
                rows = statement_rows(ast.parse(text))  # as engine.lint_text passes them (CPython's AST it has)
                seconds, number = timed(lambda: check_text(text, "bench.py", settings, statement_rows=rows))
                times.setdefault(("analysis", findings), []).append(seconds)
                seconds, _ = timed(lambda: lint_text(text, "bench.py", settings))
                times.setdefault(("lint", findings), []).append(seconds)
                found = number if findings else found
        analysis = {findings: min(times["analysis", findings]) for findings in (False, True)}
        lint = {findings: min(times["lint", findings]) for findings in (False, True)}
        print(
            f"| {count:,} | {found:,} | {len(texts[True]):,} / {len(texts[False]):,} | {analysis[False]:.2f} s | "
            f"{analysis[True]:.2f} s | {analysis[True] / analysis[False]:.2f} | {lint[False]:.2f} s | {lint[True]:.2f} s |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
