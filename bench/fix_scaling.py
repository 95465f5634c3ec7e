"""How `--fix` scales with the number of fixes in one file, with and without one fix that breaks the code.

    python bench/fix_scaling.py 1000 2000 4000

Builds a training script with N accumulations `tK += loss` (ML001, each fixed to `tK += loss.item()`, an unsafe fix),
ten per training function, and optionally one call `break_here()` that a test rule (ML898, installed
for this process only) "fixes" into code that does not parse. Times `fixes.fix_text` on it, which is
what `memlint check --fix` runs per file (CPU seconds of this process), and checks that every good fix was applied and the bad one
dropped. `--non-overlapping N` times only the choice of fixes that do not overlap among N.
Prints one line per size: fixes, bytes, seconds without and with the bad fix, the number of
compiles with the bad fix, and how many "not applied" warnings the bad fix gave (should be 1).
"""

from __future__ import annotations

import argparse
import sys
import time

import libcst as cst

from memlint.config import RULE_OPTIONS, SCHEMA, Settings
from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
from memlint.pipeline import fixes, registry
from memlint.rule import NodeFix, Rule

PER_FUNCTION = 10


class BreakingFixRule(Rule):
    """Reports `break_here()`; its fix replaces the call with an unclosed bracket."""

    code = "ML898"
    name = "bench-breaking-fix"
    severity = Severity.WARNING
    fix_safety = "safe"

    def visit_Call(self, node):
        if isinstance(node.func, cst.Name) and node.func.value == "break_here":
            broken = cst.Name("broken")
            object.__setattr__(broken, "value", "broken(")  # past libcst's validation: prints `broken(`
            self.report(node, "a fix that does not parse", NodeFix("break", Applicability.SAFE, ((node, broken),)))


def program(count: int, bad: bool) -> str:
    parts = ["import torch\n"]
    for function in range(0, count, PER_FUNCTION):
        names = [f"t{k}" for k in range(function, min(count, function + PER_FUNCTION))]
        parts.append(f"\n\ndef step_{function}(model, loader, criterion):\n")
        parts.append("    " + " = ".join(names) + " = 0.0\n")
        parts.append("    for x, y in loader:\n        loss = criterion(model(x), y)\n")
        parts.extend(f"        {name} += loss\n" for name in names)
        if bad and function == (count // 2) // PER_FUNCTION * PER_FUNCTION:
            parts.append("        break_here()\n")
        parts.append(f"    return {', '.join(names)}\n")
    return "".join(parts)


def settings() -> Settings:
    options = {key: SCHEMA[key][1] for key in RULE_OPTIONS}
    return Settings(enabled=frozenset({"ML001", "ML898"}), options=options)


def measure(count: int, bad: bool) -> tuple[float, int, int]:
    text = program(count, bad)
    compiles = 0
    real = fixes.parses

    def counting(source, filename="<fix>"):
        nonlocal compiles
        compiles += 1
        return real(source, filename)

    fixes.parses = counting
    try:
        start = time.process_time()  # CPU time: the machine this runs on is often shared
        outcome = fixes.fix_text(text, "bench.py", settings(), unsafe=True)
        seconds = time.process_time() - start
    finally:
        fixes.parses = real
    assert outcome.fixed["ML001"] == count, outcome.fixed
    assert bool(outcome.dropped) == bad, outcome.dropped
    assert fixes.parses(outcome.text) and outcome.text.count(".item()") == count
    return seconds, compiles, len(outcome.dropped)


def time_non_overlapping(count: int) -> float:
    """CPU seconds of choosing the non-overlapping fixes among `count` one-edit fixes, one per line."""
    where = Location(1, 1)
    found = [
        Diagnostic("ML001", "x", "m", Severity.WARNING, "x.py", where, where,
                   Fix("f", Applicability.SAFE, (Edit(10 * k, 10 * k + 3, "new", where, where),)))
        for k in range(count)
    ]  # fmt: skip
    start = time.process_time()
    chosen = fixes._non_overlapping(found)
    seconds = time.process_time() - start
    assert len(chosen) == count
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 2000, 4000])
    parser.add_argument("--non-overlapping", type=int, metavar="N", help="only time choosing among N fixes")
    args = parser.parse_args()
    if args.non_overlapping:
        print(f"_non_overlapping, {args.non_overlapping} fixes: {time_non_overlapping(args.non_overlapping):.2f} CPU s")
        return
    registry.third_party_rules = lambda: (BreakingFixRule,)  # this process only
    registry.all_rules.cache_clear()
    registry.rule_entries.cache_clear()
    print("fixes  bytes     all good (CPU s)  one bad (CPU s)  compiles  'not applied' warnings")
    for count in args.sizes:
        good, _, _ = measure(count, bad=False)
        broken, compiles, warnings = measure(count, bad=True)
        print(f"{count:<6} {len(program(count, True)):<9} {good:<17.1f} {broken:<16.1f} {compiles:<9} {warnings}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
