"""Where one process spends its CPU on a corpus, stage by stage.

    python bench/stage_times.py DIR [EVERY]

Takes the files memlint discovers under DIR (every EVERY-th one; default 1) with the default
rules and times, with `time.process_time`: reading, CPython's compile to an AST, the prescreen's
checks, libcst's parse (files the prescreen keeps), the context and the single traversal with every
rule, and the rules' `finish`.  One process, no cache, no output: the stages `memlint check` runs for
each file, separated.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memlint.analysis.context import Context  # noqa: E402
from memlint.config import Selection, build_settings, discover  # noqa: E402
from memlint.pipeline.files import discover_files  # noqa: E402
from memlint.pipeline.traversal import Traversal  # noqa: E402
from memlint.pipeline.tree import parse_module  # noqa: E402
from memlint.prescreen import Source, needs_analysis  # noqa: E402


def main(argv: list[str]) -> int:
    root = Path(argv[0])
    every = int(argv[1]) if len(argv) > 1 else 1
    settings = build_settings(discover(root), Selection())
    files = discover_files([root], settings).files[::every]
    seconds = dict.fromkeys(("read", "compile", "prescreen", "parse", "walk", "finish"), 0.0)
    mention = analysed = 0
    clock = time.process_time
    for path in files:
        start = clock()
        text = Path(path).read_text(encoding="utf-8", errors="replace")
        seconds["read"] += clock() - start
        if "torch" not in text:
            continue
        mention += 1
        start = clock()
        source = Source(text)
        compiled = source.tree is not None
        seconds["compile"] += clock() - start
        start = clock()
        needed = not compiled or needs_analysis(source, settings.codes_for(str(path)), settings.options)
        seconds["prescreen"] += clock() - start
        if not needed:
            continue
        analysed += 1
        start = clock()
        module = parse_module(text)
        seconds["parse"] += clock() - start
        start = clock()
        context, reports = Context(module), []
        rules = [rule(context, reports, settings.options) for rule in settings.rules_for(str(path))]
        Traversal(context, rules).walk(module)
        seconds["walk"] += clock() - start
        start = clock()
        facts = context.facts()
        for rule in rules:
            rule.finish(facts)
        seconds["finish"] += clock() - start
    stages = ", ".join(f"{name} {value:.1f}" for name, value in seconds.items())
    print(f"{len(files)} files, {mention} mention torch, {analysed} analysed; CPU s: {stages}; total {sum(seconds.values()):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
