"""When a loop cut short by a counter runs a fixed small count: the decision, on plain data.

The libcst analysis (memlint.analysis.loop_bounds, for roles.loop_scope) and the project pass's
CPython-AST summaries (memlint.analysis.summaries) read the same shapes from their own trees and
hand them here, so the two cannot disagree on what counts.  No libcst here (summaries may not load it).

A counter is a name the loop's own statements advance by one unconditionally (`count += 1`, taken to
start at 0 as such counters do), or the index `enumerate` gives, starting at its `start` when that is
an integer literal (`enumerate(loader, 1)`); a `start` the code computes leaves the index unknown:
`i == 10` may never hold."""

from __future__ import annotations

from typing import Iterable, Mapping, Optional

# `count == n`, `count >= n`, `count > n`: the comparisons that end the loop once the counter gets there.
BREAKING_OPERATORS = frozenset({"==", ">=", ">"})


def enumerate_start(extra: list[tuple[Optional[str], Optional[int]]]) -> Optional[int]:
    """The index `enumerate`'s first value is, given its arguments after the iterable as (keyword
    or None, integer literal or None): `enumerate(x)` -> 0, `enumerate(x, 1)` and
    `enumerate(x, start=1)` -> 1; None when the start is not a literal."""
    if not extra:
        return 0
    if len(extra) != 1 or extra[0][0] not in (None, "start"):
        return None
    start = extra[0][1]
    return start if start is not None and start >= 0 else None


def first_bound(counters: Mapping[str, int], tests: Iterable[tuple[str, str, Optional[int]]], limit: int) -> Optional[int]:
    """The bound of the first test that ends the loop within `limit` iterations: `counters` maps each
    counter to its first value; `tests` are the (counter, operator, bound) of the loop's own top-level
    `if ...: break`s, the bound None when it is not a known integer."""
    for name, operator, bound in tests:
        start = counters.get(name)
        if start is None or operator not in BREAKING_OPERATORS or bound is None:
            continue
        if 0 < bound <= limit and start <= bound:
            return bound
    return None
