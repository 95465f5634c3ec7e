"""Text-level helpers the pipeline shares: a source's line table (offsets <-> rows and columns), the
single edit between two texts, and applying edits."""

from __future__ import annotations

import bisect
import re
from typing import Iterable, Optional

from memlint.diagnostics import Edit, Location

NEWLINE = re.compile(r"\r\n|\r|\n")  # the line ends Python's tokenizer knows


class Positions:
    """Line table of a source text: offsets <-> 1-based (row, column)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in NEWLINE.finditer(text)]

    def offset(self, line: int, column: int) -> int:
        """`line` 1-based, `column` 0-based, as libcst reports them."""
        return self.starts[line - 1] + column

    def location(self, offset: int) -> Location:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Location(line + 1, offset - self.starts[line] + 1)

    def frame(self, first: int, last: int, context: int = 1, limit: int = 8) -> tuple[tuple[int, str], ...]:
        """The finding's lines with `context` lines around them, at most `limit` lines."""
        rows = range(max(1, first - context), min(len(self.starts), last + context) + 1)
        return tuple((row, self.line_text(row)) for row in list(rows)[:limit])

    def line_text(self, row: int) -> str:
        if row - 1 >= len(self.starts):
            return ""
        start = self.starts[row - 1]
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r\n")


def minimal_edit(old: str, new: str, lines: Positions) -> Optional[Edit]:
    """The single edit that turns `old` into `new` (they differ in one region)."""
    if old == new:
        return None
    prefix, suffix = common_ends(old, new)
    start, end = prefix, len(old) - suffix
    content = new[prefix : len(new) - suffix]
    return Edit(start, end, content, lines.location(start), lines.location(end))


def common_ends(old: str, new: str) -> tuple[int, int]:
    """The lengths of the longest common prefix of `old` and `new`, and of the longest common suffix
    of what follows it in both (binary searches over slice comparisons, each one C comparison)."""
    limit = min(len(old), len(new))
    prefix = _common_length(lambda k: old[:k] == new[:k], limit)
    suffix = _common_length(lambda k: k == 0 or old[-k:] == new[-k:], limit - prefix)
    return prefix, suffix


def _common_length(matches, limit: int) -> int:
    """Largest k <= limit with matches(k), for a predicate that is monotone (true up to some k)."""
    low, high = 0, limit
    while low < high:
        middle = (low + high + 1) // 2
        if matches(middle):
            low = middle
        else:
            high = middle - 1
    return low


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    pieces, cursor = [], 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        pieces.append(text[cursor : edit.start])
        pieces.append(edit.content)
        cursor = edit.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def shorten(text: str, limit: int = 40) -> str:
    """Code quoted in a message: whitespace collapsed, at most `limit` characters (an ellipsis ends it)."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
