"""What of a text libcst is given, decided on CPython's AST before the parse.

libcst's tree costs memory per node, not per character: 2.5-5 KB per node of CPython's AST (the
nodes counted here, without the `Load`/`Store` and operator singletons), so 0.3 GB per MB of
hand-written code (8-10 characters per node) but 1.0-1.8 GB per MB of generated code or data (a
1 MB list of small numbers: 333,000 nodes, 1.3 GB and 20 s of parsing).  And it nests one level per
`and` operand, where CPython's AST is flat (depth.py).  So, before the parse:

- **Data literals** (a list, tuple, set or dict display of at least `LITERAL_ELEMENTS` constants,
  nested displays of constants included) are blanked inside their brackets: no rule reports
  anything inside a constant, and libcst parses an empty display in their place.
- **Statements nested deeper than libcst handles** (depth.deep_statements) become `pass`: the rest
  of the file is analysed, and an ML901 finding names each statement left out.
- **What is left is refused when its tree would take more than `BYTES_PER_CHARACTER` per
  character of source** (plus `ALLOWANCE`, so that small files never are): the file is reported as
  not analysed (ML901).  With the first step this bounds libcst's memory per source character
  (about 2.5 KB at most, where hand-written code takes 0.3 KB); CPython's own AST, built before
  (about 0.3 KB per character of dense data), comes on top.

A masked region keeps its length and its line breaks (`pass` or the brackets, then spaces), so
every offset, row and column of the masked text is the original's: findings are placed in the
original text as they are.  A fix whose edits reach into a masked region is not offered (it would
write the blanks over the user's code; checker.py), the finding still is.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Optional

from memlint.pipeline.depth import LIMIT, StringParts, deep_statements
from memlint.pipeline.reserved import too_complex_reason
from memlint.pipeline.source import ast_or_none, first_row
from memlint.units import format_bytes

# A display of at least this many constants is data: blanked before libcst's parse.  Far above what
# hand-written code holds (the corpora's largest display of constants has a few hundred), so that the
# analysis of real code is unchanged; below it a display costs libcst at most about 30 MB.
LITERAL_ELEMENTS = 10_000
# libcst's memory per node counted here (measured 2.5-3.2 KB on timm's models, lists of numbers
# and strings, assignments, 5 KB on call arguments), the memory allowed per character of source
# (hand-written code takes 0.3 KB: 8-13 characters per node; refused from one node per 2 characters),
# and what any file is allowed whatever its size.
NODE_BYTES = 4 * 1024
BYTES_PER_CHARACTER = 2 * 1024
ALLOWANCE = 64 * 2**20

_DISPLAYS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_CLOSING = {"[": "]", "(": ")", "{": "}"}
_NOT_A_LINE_BREAK = re.compile(r"[^\r\n]")


@dataclass
class Plan:
    """The text libcst is given (`text`, and CPython's AST of it, `tree`), the masked regions as
    [start, end) character offsets, the statements left out with why and where, or why the file is
    not analysed at all (`refused`, with its row and column)."""

    text: str
    tree: ast.Module
    masked: list[tuple[int, int]] = field(default_factory=list)
    left_out: list[tuple[str, int, int]] = field(default_factory=list)  # (reason, row, column)
    refused: Optional[tuple[str, int, int]] = None
    nodes: int = 0  # the nodes libcst will build, as counted here

    @property
    def plain(self) -> bool:
        """Nothing masked or refused: libcst parses the text as it is."""
        return not self.masked and self.refused is None


def plan(tree: ast.Module, text: str, limit: int = LIMIT) -> Plan:
    """What libcst is given of `text`, whose CPython AST is `tree` (see the module's docstring)."""
    strings = StringParts(text)
    regions: list[tuple[int, int, str]] = []  # (start, end, replacement of its first characters)

    def data(display: ast.AST) -> bool:
        """A data literal: blanked (and not walked) if its brackets can be kept."""
        if _size(display) < LITERAL_ELEMENTS or not _constant(display):
            return False
        span = _bracketed(display, text, strings)
        if span is None:
            return False
        regions.append((span[0], span[1], text[span[0]] + ("0" if type(display) is ast.Set else "")))
        return True

    scan = deep_statements(tree, text, limit, data=data)
    left_out: list[tuple[int, str, int, int]] = []  # (start, reason, row, column)
    for statement, complexity in scan.found:
        if statement is None:  # outside every statement: nothing to leave out instead
            return Plan(text, tree, refused=(too_complex_reason(complexity), complexity.row, complexity.column))
        start = strings.offset(first_row(statement), statement.col_offset)
        end = strings.offset(statement.end_lineno, statement.end_col_offset)  # type: ignore[arg-type]
        regions.append((start, end, "pass"))
        left_out.append((start, too_complex_reason(complexity), complexity.row, complexity.column))
    nodes = scan.nodes
    if nodes * NODE_BYTES > BYTES_PER_CHARACTER * len(text) + ALLOWANCE:
        return Plan(text, tree, refused=(_too_dense(nodes, len(text)), 1, 1), nodes=nodes)
    if not regions:
        return Plan(text, tree, nodes=nodes)
    kept = _outermost(regions)
    masked_text = _masked(text, kept)
    masked_tree = ast_or_none(masked_text)
    if masked_tree is None:  # not expected: say so rather than analyse something else
        return Plan(text, tree, refused=("memlint could not leave out what its parser cannot take", 1, 1), nodes=nodes)
    starts = {start for start, _, _ in kept}
    reported = sorted((start, reason, row, column) for start, reason, row, column in left_out if start in starts)
    return Plan(
        masked_text, masked_tree, [(start, end) for start, end, _ in kept],
        [(reason, row, column) for _, reason, row, column in reported], nodes=nodes,
    )  # fmt: skip


def overlaps(masked: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether [start, end) touches a masked region (an insertion at its edge counts)."""
    return any(start <= region_end and region_start <= end for region_start, region_end in masked)


def _size(node: ast.AST) -> int:
    return len(node.keys) * 2 if type(node) is ast.Dict else len(node.elts)  # type: ignore[attr-defined]


def _constant(node: ast.AST) -> bool:
    """A display made of constants only (numbers, strings, signed numbers, displays of those)."""
    stack = [node]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is ast.Constant:
            continue
        if kind is ast.UnaryOp and type(item.op) in (ast.USub, ast.UAdd) and type(item.operand) is ast.Constant:  # type: ignore[attr-defined]
            continue
        if kind is ast.Dict:
            if any(key is None for key in item.keys):  # type: ignore[attr-defined]
                return False  # `**mapping`
            stack.extend(item.keys)  # type: ignore[attr-defined]
            stack.extend(item.values)  # type: ignore[attr-defined]
        elif kind in _DISPLAYS:
            stack.extend(item.elts)  # type: ignore[attr-defined]
        else:
            return False
    return True


def _bracketed(node: ast.AST, text: str, strings: StringParts) -> Optional[tuple[int, int]]:
    """The display's [start, end) when its own brackets open and close it (a tuple without
    parentheses is left alone)."""
    start = strings.offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]
    end = strings.offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]
    if end - start < 4 or _CLOSING.get(text[start]) != text[end - 1]:
        return None
    return start, end


def _outermost(regions: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """The regions not inside another (a statement left out may hold a literal found before)."""
    kept: list[tuple[int, int, str]] = []
    for start, end, head in sorted(regions, key=lambda region: (region[0], -region[1])):
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, head))
    return kept


def _masked(text: str, regions: list[tuple[int, int, str]]) -> str:
    """`text` with each region's first characters replaced by its head (`pass`, `[`), its last by its
    own closing bracket for a literal, and everything else but line breaks by spaces."""
    pieces, cursor = [], 0
    for start, end, head in regions:
        pieces.append(text[cursor:start])
        closing = text[end - 1] if head != "pass" else ""
        middle = text[start + len(head) : end - len(closing)]
        pieces.append(head + _NOT_A_LINE_BREAK.sub(" ", middle) + closing)
        cursor = end
    pieces.append(text[cursor:])
    return "".join(pieces)


def _too_dense(nodes: int, characters: int) -> str:
    return (
        f"its syntax tree would hold {nodes:,} nodes for {characters:,} characters of source, about "
        f"{format_bytes(nodes * NODE_BYTES)} in memlint's parser (libcst): more than the "
        f"{format_bytes(BYTES_PER_CHARACTER)} per character it allows (code far denser than hand-written code)"
    )
