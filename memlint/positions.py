"""Source positions of the few nodes a file's findings and fixes name.

libcst's `PositionProvider` regenerates the whole module with position bookkeeping to place every
node: about twice a parse, for a file with a single finding.  A top-level statement always starts
at column 0 of its own line, so a node's position is its position inside a module made of its
top-level statement alone, moved down by the lines before that statement (counted in the source
text, whose pieces are the statements' code in order).  Only the statements that hold a wanted
node are positioned; anything outside every statement falls back to the whole-module provider.
"""

from __future__ import annotations

import bisect
import re
from typing import Iterable, Optional

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from memlint.tree import children

_NEWLINE = re.compile(r"\r\n|\r|\n")
_FINAL_NEWLINE = re.compile(r"(?:\r\n|\r|\n)\Z")


def node_positions(module: cst.Module, text: str, wanted: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, CodeRange]:
    """CodeRange (libcst's: 1-based lines, 0-based columns) of every wanted node found."""
    wanted_ids = {id(node) for node in wanted}
    owners = _statements_holding(module, wanted_ids)
    if owners is None:  # the module itself, or its header or footer comments
        everything = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {node: where for node, where in everything.items() if id(node) in wanted_ids}
    lines_before = _lines_before_statements(module, text, max(owners) if owners else -1)
    found: dict[cst.CSTNode, CodeRange] = {}
    for index in owners:
        alone = module.with_changes(header=(), footer=(), body=(module.body[index],))
        shift = lines_before[index]
        for node, where in MetadataWrapper(alone, unsafe_skip_copy=True).resolve(PositionProvider).items():
            if id(node) in wanted_ids:
                found[node] = CodeRange(
                    CodePosition(where.start.line + shift, where.start.column),
                    CodePosition(where.end.line + shift, where.end.column),
                )
    return found


def _statements_holding(module: cst.Module, wanted_ids: set[int]) -> Optional[list[int]]:
    """Indexes of the top-level statements holding the wanted nodes; None if one is outside all."""
    remaining = set(wanted_ids)
    owners: list[int] = []
    for index, statement in enumerate(module.body):
        if not remaining:
            break
        stack = [statement]
        held = False
        while stack:
            node = stack.pop()
            if id(node) in remaining:
                remaining.discard(id(node))
                held = True
            stack.extend(children(node))
        if held:
            owners.append(index)
    return None if remaining else owners


def _lines_before_statements(module: cst.Module, text: str, last: int) -> list[int]:
    """For statements 0..last, the number of source lines before each one starts."""
    codes = [module.code_for_node(statement) for statement in module.body]
    footer = "".join(module.code_for_node(line) for line in module.footer)
    generated = sum(len(code) for code in codes) + len(footer)
    if not module.has_trailing_newline:
        # The module's code drops the final newline token, which the last statement or footer line
        # generates on its own: the text is that much shorter than the pieces.
        ending = _FINAL_NEWLINE.search(footer or codes[-1])
        generated -= len(ending.group()) if ending else 0
    offset = len(text) - generated  # the header's length
    lines = len(_NEWLINE.findall(text, 0, offset))
    result: list[int] = []
    for code in codes[: last + 1]:
        result.append(lines)
        lines += len(_NEWLINE.findall(code))
    return result


# libcst drops a form feed or a `\` line continuation that comes before a statement's first token
# (`\f` + "x = 1" prints back as "x = 1"), so the code it prints, and every position and fix
# computed from it, can be shorter than the source.  Only text with one of these can be affected
# (a random search over 60,000 programs of odd whitespace found no other case).
_LOSSY = re.compile(r"\f|(?:^|[\r\n])[ \t]*\\(?:\r\n|\r|\n)")


def printed_code(module: cst.Module, text: str) -> str:
    """The code libcst prints for `module`, parsed from `text`: `text` itself unless libcst dropped
    some of its whitespace (see `SourceMap`)."""
    return module.code if _LOSSY.search(text) else text


class SourceMap:
    """Offsets in the code libcst printed -> offsets in the source text it was parsed from.

    The printed code is the text with some characters left out (only whitespace, as above), so a
    left-to-right match of the code in the text finds them; offsets map by the number of text
    characters dropped before them."""

    def __init__(self, code: str, text: str) -> None:
        self.code_starts: list[int] = [0]  # code offsets where a run of kept characters starts ...
        self.shifts: list[int] = [0]  # ... and the text characters dropped before that run
        self.dropped: list[int] = []  # text offsets of dropped characters
        i = j = 0
        while j < len(code):
            run = _common_run(text, i, code, j)
            i, j = i + run, j + run
            if j == len(code):
                break
            if i >= len(text):
                raise ValueError("the printed code is not a subsequence of the text")
            self.dropped.append(i)
            i += 1
            if self.code_starts[-1] == j:
                self.shifts[-1] = i - j
            else:
                self.code_starts.append(j)
                self.shifts.append(i - j)
        self.dropped.extend(range(i, len(text)))  # dropped at the very end

    def offset(self, code_offset: int) -> int:
        """The text offset of the character at `code_offset` (of the end, past the last one)."""
        index = bisect.bisect_right(self.code_starts, code_offset) - 1
        return code_offset + self.shifts[index]

    def end_offset(self, code_offset: int) -> int:
        """The text offset just past the character before `code_offset` (where a range ends)."""
        return self.offset(code_offset - 1) + 1 if code_offset > 0 else 0

    def drops_between(self, start: int, end: int) -> bool:
        """Did libcst drop a character of the text in [start, end)?"""
        index = bisect.bisect_left(self.dropped, start)
        return index < len(self.dropped) and self.dropped[index] < end


def _common_run(text: str, i: int, code: str, j: int) -> int:
    """The length of the longest common run of text[i:] and code[j:]."""
    limit = min(len(text) - i, len(code) - j)
    step = 4096
    run = 0
    while run < limit:  # whole chunks first (one C comparison each), then the mismatching chunk
        size = min(step, limit - run)
        if text[i + run : i + run + size] == code[j + run : j + run + size]:
            run += size
            continue
        low, high = 0, size  # the first mismatch inside the chunk
        while low < high:
            middle = (low + high) // 2
            if text[i + run : i + run + middle + 1] == code[j + run : j + run + middle + 1]:
                low = middle + 1
            else:
                high = middle
        return run + low
    return run
