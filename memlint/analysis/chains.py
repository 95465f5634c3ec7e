"""The longest chain of bindings in a block, each step reading the name an earlier one bound.

ML004's question, asked by its rule on libcst's tree (exact steps) and by its screen on CPython's
AST (loosened steps); both describe the block as steps and share this walk.  No libcst here.
"""

from __future__ import annotations

from typing import Iterable, Optional


def longest_chain(steps: Iterable[tuple[str, Iterable[str]]]) -> list[str]:
    """The longest chain of names `a -> b -> c` in `steps` (`(target, names its value reads)`, in
    order): a step extends the longest chain ending in a name it reads that an earlier step bound.
    A name bound again keeps the longer of its chains; on a tie the first chain found wins."""
    # name -> (length, name, the end it extends) for the longest chain ending in that name
    ends: dict[str, tuple[int, str, Optional[tuple]]] = {}
    best: Optional[tuple[int, str, Optional[tuple]]] = None
    for target, reads in steps:
        before = max((ends[name] for name in reads if name in ends), key=lambda end: end[0], default=None)
        end = (1 + (before[0] if before else 0), target, before)
        if target not in ends or end[0] > ends[target][0]:
            ends[target] = end
        if best is None or end[0] > best[0]:
            best = end
    chain: list[str] = []
    while best is not None:
        chain.append(best[1])
        best = best[2]
    return chain[::-1]
