"""Parsing a document again after an edit, re-using the top-level statements the edit left alone.

The language server analyses the whole document after every keystroke, and libcst's parse is the
largest single cost of that (about 45 of 110 ms for a 1,000-line file).  An edit changes one region
of the text; the top-level statements wholly before and after it are the same text, and libcst
builds the same nodes for them.  So only the statements the edit touches are parsed again, with
one statement on each side (an edit between two statements can move comment lines from one to the
other, and a statement owns the indented comments after its block): that stretch of text starts at
a statement's first token at column 0, where the tokenizer is in the same state as at the start of
a file, and the nodes parsed from it replace the old ones in a copy of the old module.

It gives libcst's own tree or nothing: every doubt (a text that does not compile, an edit at the
top of the file, libcst printing whitespace differently, a stretch that parses with leftovers, an
indentation that would change the module's default) falls back to parsing the whole text, and the
result is checked against the rows of CPython's AST.  tests/test_incremental_parse.py compares it
with a whole parse after thousands of random edits.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Optional, Sequence

import libcst as cst

from memlint.pipeline.positions import PrintedStatements, has_lossy_whitespace, lines_from_rows
from memlint.pipeline.text import Positions, common_ends
from memlint.pipeline.tree import children, parse_module

# What libcst uses for Module.default_indent when a file has no indented block.
_LIBCST_DEFAULT_INDENT = " " * 4
# The nodes between a statement and its indented blocks (never inside an expression).
_BLOCK_HOLDERS = (
    cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally,
    cst.MatchCase,
)  # fmt: skip


@dataclass(frozen=True)
class _Parsed:
    text: str
    module: cst.Module
    starts: list[int]  # offset of each top-level statement's code (its leading comment lines first)
    firsts: list[int]  # offset of each one's first token (column 0 of its first row)
    first_block: Optional[int]  # the first statement holding an indented block, or None


class IncrementalParser:
    """The libcst trees of one document's successive texts, each built from the one before where the
    edit allows.  Not thread-safe: one analysis of the document at a time (the server's rule)."""

    def __init__(self) -> None:
        self._last: Optional[_Parsed] = None
        self.reused = 0  # how many parses re-used statements of the one before (for tests, benchmarks)
        self.printed = PrintedStatements()  # the positions of the statements' nodes, re-used with them

    def parse(self, text: str, first_rows: Optional[Sequence[int]]) -> cst.Module:
        """libcst's tree of `text`, the same as `tree.parse_module(text)` (which raises the same).
        `first_rows`: the row of each top-level statement's first token from CPython's AST of `text`
        (source.statement_rows); None when it does not compile, and then the whole text is parsed."""
        reparsed = None
        if self._last is not None and first_rows is not None:
            reparsed = self._reparse(text)
            if reparsed is not None and lines_from_rows(reparsed[0], first_rows) is None:
                reparsed = None  # not the statements CPython sees: never expected, never trusted
        if reparsed is None:
            module = parse_module(text)
            first_block = _first_block(module.body, 0)
        else:
            module, first_block = reparsed
            self.reused += 1
        self._last = _remember(text, module, first_rows, first_block)
        self.printed.keep_only(module)
        return module

    def _reparse(self, text: str) -> Optional[tuple[cst.Module, Optional[int]]]:
        """The tree of `text` from the last one and a parse of the stretch the edit touched, with
        the index of its first statement holding an indented block; None: parse all of it."""
        last = self._last
        assert last is not None
        old, module = last.text, last.module
        if text == old:
            return module, last.first_block
        if has_lossy_whitespace(text):
            return None
        prefix, suffix = common_ends(old, text)
        changed_end = len(old) - suffix  # the edit replaced old[prefix:changed_end]
        touched_first = bisect.bisect_right(last.starts, prefix - 1) - 1
        if prefix == 0 or touched_first < 1:  # the header or the first statement: parse it all
            return None
        first = touched_first - 1  # re-parsed from its first token; its leading lines are kept
        touched_last = bisect.bisect_right(last.starts, changed_end) - 1
        tail = changed_end >= len(old) or touched_last + 2 >= len(last.starts)
        begin = last.firsts[first]
        end = len(text) if tail else last.starts[touched_last + 2] + len(text) - len(old)
        indent, newline = module.default_indent, module.default_newline
        # A block first, so that the stretch's blocks are written against the document's default
        # indentation (a block of that width has indent=None, as in the whole parse).
        opening = f"if 1:{newline}{indent}pass{newline}"
        try:
            stretch = parse_module(opening + text[begin:end])
        except (cst.ParserSyntaxError, RecursionError, MemoryError):
            return None  # the whole parse says what is wrong
        if stretch.header or stretch.default_indent != indent or stretch.default_newline != newline:
            return None
        if not tail and (stretch.footer or not stretch.has_trailing_newline):
            return None  # lines the next statement would own: its stretch ended elsewhere
        parsed = list(stretch.body[1:])
        if not parsed or parsed[0].leading_lines:
            return None
        parsed[0] = parsed[0].with_changes(leading_lines=module.body[first].leading_lines)
        kept_after = () if tail else module.body[touched_last + 2 :]
        body = (*module.body[:first], *parsed, *kept_after)
        # The module's default indentation is the first indented block's: unchanged when that block
        # comes before the stretch, else the new first block must be of the old width.
        first_block = last.first_block
        if first_block is None or first_block >= first:
            found = _first_block(body, first)
            if found is None:
                if indent != _LIBCST_DEFAULT_INDENT:
                    return None
            elif _indented_block(body[found]).indent is not None:
                return None
            first_block = found
        if tail:
            ending = {"footer": stretch.footer, "has_trailing_newline": stretch.has_trailing_newline}
            return module.with_changes(body=body, **ending), first_block
        return module.with_changes(body=body), first_block


def _remember(text: str, module: cst.Module, first_rows: Optional[Sequence[int]], first_block: Optional[int]) -> Optional[_Parsed]:
    """Where each statement of `module` lies in `text`, for the next parse; None when that is not
    known for sure (no CPython rows, whitespace libcst prints differently)."""
    if first_rows is None or has_lossy_whitespace(text):
        return None
    lines_before = lines_from_rows(module, first_rows)
    if lines_before is None:
        return None
    line_starts = Positions(text).starts
    if first_rows and first_rows[-1] > len(line_starts):
        return None
    starts = [line_starts[line] for line in lines_before]
    firsts = [line_starts[row - 1] for row in first_rows]
    return _Parsed(text, module, starts, firsts, first_block)


def _first_block(body: Sequence[cst.BaseStatement], start: int) -> Optional[int]:
    """The index of the first statement from `start` on that holds an indented block."""
    for index in range(start, len(body)):
        if _indented_block(body[index]) is not None:
            return index
    return None


def _indented_block(statement: cst.BaseStatement) -> Optional[cst.IndentedBlock]:
    """The statement's first indented block in the text (its INDENT token sets libcst's default)."""
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.IndentedBlock):
            return node
        if isinstance(node, _BLOCK_HOLDERS):
            stack.extend(reversed([child for child in children(node) if isinstance(child, _BLOCK_HOLDERS)]))
    return None
