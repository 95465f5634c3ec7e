"""Source positions of the few nodes a file's findings and fixes name.

libcst's `PositionProvider` regenerates the whole module with position bookkeeping to place every
node: about twice a parse, for a file with a single finding.  A top-level statement always starts
at column 0 of its own line, so a node's position is its position inside a module made of its
top-level statement alone, moved down by the lines before that statement (counted in the source
text, whose pieces are the statements' code in order).  Only the statements that hold a wanted
node are positioned; anything outside every statement falls back to the whole-module provider.
"""

from __future__ import annotations

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
