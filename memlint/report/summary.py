"""The end of a check's output, shared by every way of running one (the command line, standard
input, code review): the summary line, --statistics, --show-fixes, --diff, and the exit code."""

from __future__ import annotations

import json
from collections import Counter

from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.runner import FileResult
from memlint.report import ReportOptions, fails


def exit_code(
    diagnostics: list[Diagnostic], fixed: int, exit_zero: bool, exit_non_zero_on_fix: bool, *, errors: bool = False,
    fail_level: str = "info",
) -> int:  # fmt: skip
    """0 nothing left, 1 findings left (or fixed, with exit_non_zero_on_fix), 2 an error: a fix not
    written, a path that does not exist, memlint's own crash (ML900); --exit-zero hides findings only.
    --fail-level: only findings at least that severe count as left."""
    if errors or any(d.code == registry.INTERNAL_ERROR[0] for d in diagnostics):
        return 2
    if exit_non_zero_on_fix and fixed:
        return 1
    if not exit_zero and any(fails(d, fail_level) for d in diagnostics):
        return 1
    return 0


def plural(count: int, word: str) -> str:
    if count == 1:
        return f"{count} {word}"
    return f"{count} {word}es" if word.endswith(("x", "s")) else f"{count} {word}s"


def summary(diagnostics: list[Diagnostic], fixed: int, options: ReportOptions) -> str:
    applicable = sum(options.applicable(d) for d in diagnostics)
    hidden = sum(options.hidden(d) for d in diagnostics)
    if not diagnostics:
        return f"Fixed {plural(fixed, 'finding')}.\n" if fixed else "All checks passed!\n"
    lines = []
    if fixed:
        lines.append(f"Found {plural(len(diagnostics) + fixed, 'finding')} ({fixed} fixed, {len(diagnostics)} remaining).")
    else:
        lines.append(f"Found {plural(len(diagnostics), 'finding')}.")
    if applicable:
        extra = f" ({plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option)" if hidden else ""
        lines.append(f"[*] {applicable} fixable with the `--fix` option{extra}.")
    elif hidden:
        lines.append(f"No fixes available ({plural(hidden, 'hidden fix')} can be enabled with the `--unsafe-fixes` option).")
    return "\n".join(lines) + "\n"


def statistics(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    counts = Counter(d.code for d in diagnostics)
    names = {d.code: d.name for d in diagnostics}
    fixable = {d.code for d in diagnostics if options.applicable(d)}
    ordered = sorted(counts, key=lambda code: (-counts[code], code))
    if options.format in ("json", "json-lines"):
        rows = [{"code": c, "name": names[c], "count": counts[c], "fixable": c in fixable} for c in ordered]
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{counts[c]:>{width}}\t{c}\t{'[*]' if c in fixable else '[ ]'} {names[c]}\n" for c in ordered
    )


def fix_listing(results: list[FileResult]) -> str:
    """--show-fixes: the fixes applied, per file. The total is the summary's to say, once."""
    lines = ["Fixes applied:"]
    names = {rule.code: rule.name for rule in registry.all_rules()}
    for result in results:
        if result.fixed:
            lines.append(f"- {result.filename}:")
            for code, count in sorted(result.fixed.items()):
                lines.append(f"    {count} × {code} ({names.get(code, '')})")
    return "\n".join(lines) + "\n\n"


def unified_diffs(results: list[FileResult]) -> str:
    """`--diff`: the fixes of every file as a unified diff (each line ends with a newline)."""
    import difflib  # only for --diff

    pieces = []
    for result in results:
        if result.fixed_text is None or result.original is None:
            continue
        diff = difflib.unified_diff(
            result.original.splitlines(keepends=True),
            result.fixed_text.splitlines(keepends=True),
            fromfile=f"a/{result.filename}",
            tofile=f"b/{result.filename}",
        )
        pieces.extend(line if line.endswith(("\n", "\r")) else line + "\n" for line in diff)
    return "".join(pieces)


def would_fix(fixed: int) -> str:
    return f"Would fix {plural(fixed, 'finding')}."
