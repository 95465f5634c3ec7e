"""Applying fixes: non-overlapping edits, re-lint to a fixed point, never produce code that does not
parse.  Writing the fixed file is memlint/pipeline/writing.py's job."""

from __future__ import annotations

import ast
import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.pipeline.engine import lint_text
from memlint.pipeline.source import ast_or_none, first_row
from memlint.pipeline.text import Positions
# Where callers found them before the writing had a module of its own.
from memlint.pipeline.writing import FileChangedError, WriteRefused, within, write_atomically  # noqa: F401

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    fixed: Counter = field(default_factory=Counter)  # code -> number of findings whose fix was applied
    remaining: list[Diagnostic] = field(default_factory=list)
    # Fixes that would have produced code that does not parse: they were not applied.
    dropped: list[Diagnostic] = field(default_factory=list)




def _compile(text: str, filename: str = "<fix>") -> Optional[ast.Module]:
    """CPython's AST of `text`, or None when it does not compile: the one place fixes are checked."""
    return ast_or_none(text, filename)


def parses(text: str, filename: str = "<fix>") -> bool:
    return _compile(text, filename) is not None


# One fix as plain data: its edits as sorted (start, end, content) triples. Findings whose fixes have
# the same edits share one fix (ML016 fixes every call through one import line with one fix).
Edits = tuple[tuple[int, int, str], ...]


def _edits(diagnostic: Diagnostic) -> Edits:
    assert diagnostic.fix is not None
    return tuple(sorted((e.start, e.end, e.content) for e in diagnostic.fix.edits))


@dataclass
class _Group:
    """One fix and the findings that carry it."""

    edits: Edits
    findings: list[Diagnostic]


def _non_overlapping(diagnostics: list[Diagnostic]) -> list[_Group]:
    """The fixes to apply in one round, in source order, skipping any whose edits overlap or touch a
    region an earlier one already edits (the next round re-lints and gets a fresh fix for it).

    Sort and sweep: the taken spans are kept sorted and disjoint, so the only one that can meet a new
    span is the last one starting at or before its end (O(n log n) for n fixes).
    """
    groups: dict[Edits, _Group] = {}
    for diagnostic in diagnostics:
        edits = _edits(diagnostic)
        groups.setdefault(edits, _Group(edits, [])).findings.append(diagnostic)
    chosen: list[_Group] = []
    starts: list[int] = []
    ends: list[int] = []
    for group in sorted(groups.values(), key=lambda g: (g.edits[0][0], g.findings[0].code)):
        if any(_meets(starts, ends, start, end) for start, end, _ in group.edits):
            continue
        for start, end, _ in group.edits:
            index = bisect.bisect_right(starts, start)
            starts.insert(index, start)  # nearly always at the end: fixes come in source order
            ends.insert(index, end)
        chosen.append(group)
    return chosen


def _meets(starts: list[int], ends: list[int], start: int, end: int) -> bool:
    index = bisect.bisect_right(starts, end) - 1
    return index >= 0 and ends[index] >= start


def _apply(text: str, groups: list[_Group], offset: int = 0) -> str:
    """`text` (the part of the file that starts at `offset`) with the edits of `groups` applied."""
    pieces, cursor = [], 0
    for start, end, content in sorted(edit for group in groups for edit in group.edits):
        pieces.append(text[cursor : start - offset])
        pieces.append(content)
        cursor = end - offset
    pieces.append(text[cursor:])
    return "".join(pieces)


def _cuts(text: str) -> Optional[list[int]]:
    """Offsets where the file can be cut into pieces that compile alone: the starts of the lines that
    begin a top-level statement (a statement after `;` on the same line is no cut). None when the
    text does not compile."""
    tree = _compile(text)
    if tree is None:
        return None
    line_starts = Positions(text).starts
    cuts, previous_end = [0], 0
    for node in tree.body:
        first = first_row(node)
        if first > previous_end and line_starts[first - 1] > cuts[-1]:
            cuts.append(line_starts[first - 1])
        previous_end = node.end_lineno or first
    return cuts


def _regions(text: str, groups: list[_Group]) -> list[tuple[int, int, list[_Group]]]:
    """(start, end, fixes) for each run of top-level statements the fixes touch; a fix that touches
    several statements joins them into one region. Regions do not overlap."""
    cuts = _cuts(text)
    if cuts is None:
        return [(0, len(text), groups)]
    ranges = []
    for group in groups:
        first = min(start for start, _, _ in group.edits)
        last = max(max(end - 1, start) for start, end, _ in group.edits)
        ranges.append((bisect.bisect_right(cuts, first) - 1, bisect.bisect_right(cuts, last) - 1, group))
    ranges.sort(key=lambda item: item[0])
    merged: list[list] = []
    for first, last, group in ranges:
        if merged and first <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], last)
            merged[-1][2].append(group)
        else:
            merged.append([first, last, [group]])
    bounds = [*cuts, len(text)]
    return [(bounds[first], bounds[last + 1], members) for first, last, members in merged]


def _search(source: str, offset: int, groups: list[_Group], filename: str) -> tuple[list[_Group], list[_Group]]:
    """Split the fixes of `source` (the part of the file at `offset`), whose edits together do not
    compile, into (fixes to apply now, fixes that break the code on their own).

    Halving finds each fix that breaks the code with about 2·log2(k) compiles of `source`. Fixes
    that compile in halves but not all together (rare) are cut to the longest prefix that compiles;
    the others wait for the next round, which re-lints first.
    """
    bad: list[_Group] = []

    def find_bad(part: list[_Group]) -> None:  # `part` does not compile
        if len(part) == 1:
            bad.extend(part)
            return
        half = len(part) // 2
        for side in (part[:half], part[half:]):
            if not parses(_apply(source, side, offset), filename):
                find_bad(side)

    find_bad(groups)
    broken = {id(group) for group in bad}
    good = [group for group in groups if id(group) not in broken]
    if not good or parses(_apply(source, good, offset), filename):
        return good, bad
    compiling, failing = 0, len(good)  # a prefix of `compiling` fixes compiles, one of `failing` does not
    while failing - compiling > 1:
        middle = (compiling + failing) // 2
        if parses(_apply(source, good[:middle], offset), filename):
            compiling = middle
        else:
            failing = middle
    if compiling == 0:  # the first fix alone does not compile
        return [], [*bad, good[0]]
    return good[:compiling], bad


def _compiling_fixes(text: str, groups: list[_Group], filename: str) -> tuple[str, list[_Group], list[_Group]]:
    """(the new text, the fixes applied, the fixes that break the code) for one round.

    One compile when every fix is fine. Otherwise each region of top-level statements holding fixes
    is compiled alone (together the size of the file) and searched only when it fails, so one bad
    fix among thousands costs a few compiles of its region, not one compile of the file per fix.
    """
    new_text = _apply(text, groups)
    if parses(new_text, filename):
        return new_text, groups, []
    kept: list[_Group] = []
    bad: list[_Group] = []
    for start, end, members in _regions(text, groups):
        source = text[start:end]
        if parses(_apply(source, members, start), filename):
            kept.extend(members)
        else:
            good, broken = _search(source, start, members, filename)
            kept.extend(good)
            bad.extend(broken)
    new_text = _apply(text, kept)
    if kept and not parses(new_text, filename):
        # The regions compile alone but not together (a fix removed the line break that ends its
        # statement, say): the same search over the whole file.
        kept, broken = _search(text, 0, kept, filename)
        bad.extend(broken)
        new_text = _apply(text, kept)
    return new_text, kept, bad


def _mover(applied: list[tuple[int, int, str]]):
    """A function that moves edits of the text before a round to their offsets in the text after it
    (`applied`: the round's edits, sorted and disjoint)."""
    ends, shift, shifts = [], 0, [0]
    for start, end, content in applied:
        ends.append(end)
        shift += len(content) - (end - start)
        shifts.append(shift)

    def move(edits: Edits) -> Edits:
        return tuple(
            (start + shifts[bisect.bisect_right(ends, start)], end + shifts[bisect.bisect_right(ends, end)], content)
            for start, end, content in edits
        )

    return move


def fix_text(text: str, filename: str, settings: Settings, *, unsafe: bool, project=None) -> FixOutcome:
    """Apply every applicable fix to `text`, re-linting after each round, until nothing changes.

    `fixed` counts findings: a fix shared by several findings fixes each of them (the count
    `runner.fixed_count` shows).  `project`: the project pass's facts about the file as it was read
    (memlint/pipeline/project.py), used for every round."""
    outcome = FixOutcome(text)
    rejected: set[tuple[str, str, Edits]] = set()  # fixes that broke the code, at current offsets
    diagnostics = lint_text(text, filename, settings, project)
    for _ in range(MAX_ROUNDS):
        candidates = [
            d for d in diagnostics
            if d.fix is not None and (unsafe or d.fix.is_safe) and (d.code, d.message, _edits(d)) not in rejected
        ]  # fmt: skip
        if not candidates:
            break
        new_text, applied, broken = _compiling_fixes(text, _non_overlapping(candidates), filename)
        for group in broken:
            rejected.update((d.code, d.message, group.edits) for d in group.findings)
            outcome.dropped.extend(group.findings)
        if not applied:
            continue
        move = _mover(sorted(edit for group in applied for edit in group.edits))
        rejected = {(code, message, move(old)) for code, message, old in rejected}
        outcome.fixed.update(d.code for group in applied for d in group.findings)
        text = new_text
        diagnostics = lint_text(text, filename, settings, project)
    outcome.text = text
    outcome.remaining = diagnostics
    return outcome
