"""Parsing a document again after an edit, re-using the statements the edit left alone.

The language server analyses the whole document after every keystroke, and libcst's parse is the
largest single cost of that (about 45 of 110 ms for a 1,000-line file).  An edit changes one region
of the text; the statements wholly before and after it are the same text, and libcst builds the same
nodes for them.  So only the statements the edit touches are parsed again, with one statement on
each side (an edit between two statements can move comment lines from one to the other, and a
statement owns the indented comments after its block), and the nodes parsed from that stretch
replace the old ones in a copy of the old tree:

- between top-level statements: the stretch starts at a statement's first token at column 0, where
  the tokenizer is in the same state as at the start of a file;
- inside the body of one top-level `def` or `class` (a 4,000-line class, a training script's long
  `main()`): the stretch of its body's statements is parsed under the same header, text for text.

It gives libcst's own tree or nothing: every doubt (a text that does not compile, an edit at the
top of the file, whitespace libcst prints differently, a stretch that parses with leftovers, an
indentation or a first line ending that would change the module's default) falls back to parsing
the whole text, and the
result is checked against the rows of CPython's AST.  tests/test_incremental_parse.py compares it
with a whole parse after random edits; bench/incremental_check.py does so on the corpora.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass
from typing import Optional, Sequence, Union

import libcst as cst

from memlint.pipeline.positions import PrintedStatements, has_lossy_whitespace, lines_from_rows
from memlint.pipeline.source import first_row, statement_rows
from memlint.pipeline.text import NEWLINE, Positions, common_ends
from memlint.pipeline.tree import children, parse_module

# What libcst uses for Module.default_indent when a file has no indented block.
_LIBCST_DEFAULT_INDENT = " " * 4
# The nodes between a statement and its indented blocks (never inside an expression).
_BLOCK_HOLDERS = (
    cst.BaseCompoundStatement, cst.BaseSuite, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally,
    cst.MatchCase,
)  # fmt: skip
# The statements whose body is re-parsed in part: the body is their last part (no `else:` after it).
_BODIES = {cst.FunctionDef: (ast.FunctionDef, ast.AsyncFunctionDef), cst.ClassDef: (ast.ClassDef,)}


@dataclass(frozen=True)
class _Parsed:
    text: str
    module: cst.Module
    tree: ast.Module  # CPython's AST of the text, for the rows of the statements inside a body
    line_starts: list[int]
    starts: list[int]  # offset of each top-level statement's code (its leading comment lines first)
    firsts: list[int]  # offset of each one's first token (column 0 of its first row)
    first_block: Optional[int]  # the first statement holding an indented block, or None


@dataclass(frozen=True)
class _Edit:
    """The edit from the last text to the new one: old[start:end] became new[start:end + shift]."""

    start: int
    end: int
    shift: int


class IncrementalParser:
    """The libcst trees of one document's successive texts, each built from the one before where the
    edit allows.  Not thread-safe: one analysis of the document at a time (the server's rule)."""

    def __init__(self) -> None:
        self._last: Optional[_Parsed] = None
        self.reused = 0  # how many parses re-used statements of the one before (for tests, benchmarks)
        self.printed = PrintedStatements()  # the positions of the statements' nodes, re-used with them

    def parse(self, text: str, tree: Optional[ast.Module]) -> cst.Module:
        """libcst's tree of `text`, the same as `tree.parse_module(text)` (which raises the same).
        `tree`: CPython's AST of `text` (source.compile_ast); None when it does not compile, and then
        the whole text is parsed."""
        rows = statement_rows(tree) if tree is not None else None
        reparsed = None
        if self._last is not None and rows is not None:
            reparsed = self._reparse(text, tree)
            if reparsed is not None and lines_from_rows(reparsed[0], rows) is None:
                reparsed = None  # not the statements CPython sees: never expected, never trusted
        if reparsed is None:
            module = parse_module(text)
            first_block = _first_block(module.body, 0)
        else:
            module, first_block = reparsed
            self.reused += 1
        self._last = _remember(text, module, tree, rows, first_block)
        self.printed.keep_only(module)
        return module

    def _reparse(self, text: str, tree: ast.Module) -> Optional[tuple[cst.Module, Optional[int]]]:
        """The tree of `text` from the last one and a parse of the stretch the edit touched, with
        the index of its first statement holding an indented block; None: parse all of it."""
        last = self._last
        assert last is not None
        if text == last.text:
            return last.module, last.first_block
        if has_lossy_whitespace(text):
            return None
        prefix, suffix = common_ends(last.text, text)
        if prefix == 0 or _first_newline(text) != last.module.default_newline:
            return None  # the module's header, or the newline it writes (its first line's) changed
        edit = _Edit(prefix, len(last.text) - suffix, len(text) - len(last.text))
        touched_first = bisect.bisect_right(last.starts, edit.start - 1) - 1
        touched_last = bisect.bisect_right(last.starts, edit.end) - 1
        if touched_first == touched_last >= 0:  # inside one statement: its body's statements, if it has them
            module = _reparse_body(last, text, tree, touched_first, edit)
            if module is not None:
                return module, last.first_block  # the first block is this statement's or an earlier one
        return _reparse_statements(last, text, touched_first, touched_last, edit)


def _reparse_statements(
    last: _Parsed, text: str, touched_first: int, touched_last: int, edit: _Edit
) -> Optional[tuple[cst.Module, Optional[int]]]:
    """Parse the top-level statements touched_first - 1 .. touched_last + 1 again."""
    module = last.module
    if touched_first < 0 or edit.start <= last.firsts[0]:  # the header, or what comes before the first token
        return None
    first = max(touched_first - 1, 0)  # re-parsed from its first token; its leading lines are kept
    tail = edit.end >= len(last.text) or touched_last + 2 >= len(last.starts)
    end = len(text) if tail else last.starts[touched_last + 2] + edit.shift
    stretch = _parse_stretch(module, text[last.firsts[first] : end], tail)
    if stretch is None:
        return None
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
            if module.default_indent != _LIBCST_DEFAULT_INDENT:
                return None
        elif _indented_block(body[found]).indent is not None:
            return None
        first_block = found
    if tail:
        return module.with_changes(body=body, **_ending(stretch)), first_block
    return module.with_changes(body=body), first_block


def _reparse_body(last: _Parsed, text: str, tree: ast.Module, index: int, edit: _Edit) -> Optional[cst.Module]:
    """Parse again the statements of the body of top-level statement `index` (a def or a class) that
    the edit touched, one on each side, under the statement's own header."""
    module = last.module
    statement = module.body[index]
    block = getattr(statement, "body", None)
    expected_ast = _BODIES.get(type(statement))
    if expected_ast is None or not isinstance(block, cst.IndentedBlock):
        return None
    node = _ast_statement(last, index)
    if not isinstance(node, expected_ast):
        return None
    rows = statement_rows(node)
    if len(rows) != len(block.body):
        return None
    line_starts = last.line_starts
    starts = [line_starts[row - 1 - len(inner.leading_lines)] for row, inner in zip(rows, block.body)]
    touched_first = bisect.bisect_right(starts, edit.start - 1) - 1
    touched_last = bisect.bisect_right(starts, edit.end) - 1
    if touched_first < 1:  # the header, or the body's first statement (whose line sets the indentation)
        return None
    first = touched_first - 1
    block_tail = touched_last + 2 >= len(block.body)
    file_tail = index + 1 >= len(last.starts)
    if not block_tail:
        end = starts[touched_last + 2] + edit.shift
    else:  # to the end of the statement: its block's trailing comment lines are parsed again too
        end = len(text) if file_tail else last.starts[index + 1] + edit.shift
    header = text[last.firsts[index] : starts[0]]  # from its first decorator to the end of its `:` line
    stretch = _parse_stretch(module, header + text[line_starts[rows[first] - 1] : end], block_tail and file_tail)
    if stretch is None or len(stretch.body) != 2 or type(stretch.body[1]) is not type(statement):
        return None
    stretch_block = stretch.body[1].body
    if not isinstance(stretch_block, cst.IndentedBlock) or stretch_block.indent != block.indent:
        return None
    if not block_tail and stretch_block.footer:  # lines the next statement would own
        return None
    parsed = list(stretch_block.body)
    if not parsed or parsed[0].leading_lines:
        return None
    parsed[0] = parsed[0].with_changes(leading_lines=block.body[first].leading_lines)
    kept_after = () if block_tail else block.body[touched_last + 2 :]
    footer = stretch_block.footer if block_tail else block.footer
    new_block = block.with_changes(body=(*block.body[:first], *parsed, *kept_after), footer=footer)
    new_node = _node_on_row(tree, bisect.bisect_right(line_starts, last.firsts[index]))  # the header is unchanged
    if not isinstance(new_node, expected_ast) or lines_from_rows(new_block, statement_rows(new_node)) is None:
        return None  # not the statements CPython sees in the body: never expected, never trusted
    body = (*module.body[:index], statement.with_changes(body=new_block), *module.body[index + 1 :])
    if block_tail and file_tail:
        return module.with_changes(body=body, **_ending(stretch))
    return module.with_changes(body=body)


def _parse_stretch(module: cst.Module, code: str, tail: bool) -> Optional[cst.Module]:
    """libcst's tree of a stretch of the document's statements (the first at column 0) after a
    block, so that its blocks are written against the document's default indentation (a block of
    that width has indent=None, as in the whole parse); None when it is not a clean stretch."""
    indent, newline = module.default_indent, module.default_newline
    opening = f"if 1:{newline}{indent}pass{newline}"
    try:
        stretch = parse_module(opening + code)
    except (cst.ParserSyntaxError, RecursionError, MemoryError):
        return None  # the whole parse says what is wrong
    if stretch.header or stretch.default_indent != indent or stretch.default_newline != newline:
        return None
    if not tail and (stretch.footer or not stretch.has_trailing_newline):
        return None  # lines the next statement would own: its stretch ended elsewhere
    return stretch


def _first_newline(text: str) -> str:
    """What libcst takes for Module.default_newline: the first line's ending, else a line feed."""
    match = NEWLINE.search(text)
    return match.group() if match else "\n"


def _ending(stretch: cst.Module) -> dict:
    """The module fields after its last statement, from a stretch that reaches the end of the file."""
    return {"footer": stretch.footer, "has_trailing_newline": stretch.has_trailing_newline}


def _ast_statement(last: _Parsed, index: int) -> Optional[ast.stmt]:
    """CPython's node for top-level statement `index` of the last text."""
    return _node_on_row(last.tree, bisect.bisect_right(last.line_starts, last.firsts[index]))


def _node_on_row(tree: ast.Module, row: int) -> Optional[ast.stmt]:
    """The top-level statement of `tree` whose first token (a decorator's `@`) is on `row`."""
    rows = [first_row(node) for node in tree.body]
    index = bisect.bisect_left(rows, row)
    return tree.body[index] if index < len(rows) and rows[index] == row else None


def _remember(
    text: str, module: cst.Module, tree: Optional[ast.Module], rows: Optional[Sequence[int]], first_block: Optional[int]
) -> Optional[_Parsed]:  # fmt: skip
    """Where each statement of `module` lies in `text`, for the next parse; None when that is not
    known for sure (no CPython rows, whitespace libcst prints differently)."""
    if tree is None or rows is None or has_lossy_whitespace(text):
        return None
    lines_before = lines_from_rows(module, rows)
    if lines_before is None:
        return None
    line_starts = Positions(text).starts
    if rows and rows[-1] > len(line_starts):
        return None
    starts = [line_starts[line] for line in lines_before]
    firsts = [line_starts[row - 1] for row in rows]
    return _Parsed(text, module, tree, line_starts, starts, firsts, first_block)


def _first_block(body: Sequence[cst.BaseStatement], start: int) -> Optional[int]:
    """The index of the first statement from `start` on that holds an indented block."""
    for index in range(start, len(body)):
        if _indented_block(body[index]) is not None:
            return index
    return None


def _indented_block(statement: cst.BaseStatement) -> Union[cst.IndentedBlock, cst.Match, None]:
    """The statement's first indented block in the text (its INDENT token sets libcst's default):
    a `match` indents its `case` lines first, and records that indentation as a block does."""
    stack: list[cst.CSTNode] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.IndentedBlock, cst.Match)):
            return node
        if isinstance(node, _BLOCK_HOLDERS):
            stack.extend(reversed([child for child in children(node) if isinstance(child, _BLOCK_HOLDERS)]))
    return None
