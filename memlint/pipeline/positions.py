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
from typing import Iterable, Optional, Sequence, Union

import libcst as cst
from libcst.metadata import CodePosition, CodeRange, MetadataWrapper, PositionProvider

from memlint.pipeline.text import NEWLINE
from memlint.pipeline.tree import children

_FINAL_NEWLINE = re.compile(r"(?:\r\n|\r|\n)\Z")


def node_positions(
    module: cst.Module, text: str, wanted: Iterable[cst.CSTNode], first_rows: Optional[Sequence[int]] = None,
    printed: Optional[PrintedStatements] = None,
) -> dict[cst.CSTNode, CodeRange]:  # fmt: skip
    """CodeRange (libcst's: 1-based lines, 0-based columns) of every wanted node found.
    `first_rows`: the row of each top-level statement's first token in `text`, from CPython's AST of
    the same text (memlint.pipeline.source.statement_rows), which spares printing every statement to count its lines.
    `printed`: statements printed for an earlier text of the same document, which this one re-uses."""
    wanted_ids = {id(node) for node in wanted}
    owners = _statements_holding(module, wanted_ids, printed)
    if owners is None:  # the module itself, or its header or footer comments
        everything = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {node: where for node, where in everything.items() if id(node) in wanted_ids}
    lines_before = lines_from_rows(module, first_rows) if first_rows is not None else None
    if lines_before is None:
        lines_before = _lines_before_statements(module, text, max(owners) if owners else -1)
    found: dict[cst.CSTNode, CodeRange] = {}
    for index in owners:
        shift = lines_before[index]
        if printed is not None:
            ranges = printed.ranges(module, module.body[index], wanted_ids)
        else:
            ranges = _positions(module.with_changes(header=(), footer=(), body=(module.body[index],)), wanted_ids)
        for node, where in ranges.items():
            if id(node) in wanted_ids:
                found[node] = CodeRange(
                    CodePosition(where.start.line + shift, where.start.column),
                    CodePosition(where.end.line + shift, where.end.column),
                )
    return found


class PrintedStatements:
    """Where the nodes of top-level statements lie in their printed code, kept for the next text of
    the same document: the language server's incremental parse (incremental.py) re-uses the nodes of
    the statements an edit left alone, and so their positions, moved to their new row."""

    def __init__(self) -> None:
        self._printed: dict[int, tuple[cst.BaseStatement, object, frozenset[int]]] = {}  # id -> (statement,
        # its _OffsetState, the ids of its nodes)

    def ranges(self, module: cst.Module, statement: cst.BaseStatement, wanted_ids: set[int]) -> dict[cst.CSTNode, CodeRange]:
        """_positions of `statement` printed alone in `module` (whose default indentation and newline
        the incremental parse keeps while it re-uses statements)."""
        if _OffsetState is None:  # pragma: no cover
            return _positions(module.with_changes(header=(), footer=(), body=(statement,)), wanted_ids)
        entry = self._printed.get(id(statement))
        if entry is None or entry[0] is not statement:
            state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
            alone = module.with_changes(header=(), footer=(), body=(statement,))
            alone._codegen(state)
            del state.spans[id(alone)]  # a module made for the printing, whose id another node may take later
            state.tokens.clear()  # only the offsets are kept
            entry = self._printed[id(statement)] = (statement, state, frozenset(state.spans))
        return entry[1].ranges(wanted_ids)

    def node_ids(self, statement: cst.BaseStatement) -> Optional[frozenset[int]]:
        """The ids of the nodes of `statement` (itself included) if it was printed, else None."""
        entry = self._printed.get(id(statement))
        return entry[2] if entry is not None and entry[0] is statement else None

    def keep_only(self, module: cst.Module) -> None:
        """Forget the statements `module` does not have (an edit replaced them)."""
        current = {id(statement) for statement in module.body}
        self._printed = {key: entry for key, entry in self._printed.items() if key in current}


def _positions(module: cst.Module, wanted_ids: set[int]) -> dict[cst.CSTNode, CodeRange]:
    """PositionProvider's positions for the wanted nodes of `module`, by the same code generation and the
    same rules (a node spans what it prints; `record_syntactic_position` narrows it), but counting
    characters instead of splitting every token into lines: lines and columns come from the offsets
    at the end.  About twice as fast on files with many findings; tests/test_positions.py holds it
    to the provider's answers.  The provider itself if libcst's code generator state has moved."""
    if _OffsetState is None:
        return MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)  # pragma: no cover
    state = _OffsetState(default_indent=module.default_indent, default_newline=module.default_newline)
    module._codegen(state)
    return state.ranges(wanted_ids)


try:  # libcst's code generator state (what Module.code and the position providers run on): private,
    # so its absence sends positions to the provider and every fix the whole-module way
    from libcst._nodes.internal import CodegenState as _CodegenState
except ImportError:  # pragma: no cover - another libcst layout: the provider itself
    _OffsetState = None
else:

    class _OffsetState(_CodegenState):
        """Code generation that records where each node starts and ends, as character offsets.
        Called for every node printed, so kept cheap: spans are keyed by the node's id (a node's
        `__hash__` is a Python call) and the syntactic positions are recorded by a plain context
        manager object (a generator-based one costs several calls more per node)."""

        def __init__(self, default_indent: str, default_newline: str) -> None:
            super().__init__(default_indent=default_indent, default_newline=default_newline)
            self.offset = 0
            self.line_starts = [0]  # offsets where lines start, found token by token as libcst does
            self.open: list[int] = []
            self.spans: dict[int, tuple[int, int, cst.CSTNode]] = {}  # id(node) -> (start, end, node)

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)
            self.offset += sum(map(len, self.indent_tokens))

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            if "\n" in value or "\r" in value:
                self.line_starts.extend(self.offset + match.end() for match in _NEWLINE_IN_TOKEN.finditer(value))
            self.offset += len(value)

        def before_codegen(self, node: cst.CSTNode) -> None:
            self.open.append(self.offset)

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self.open.pop()
            key = id(node)
            if key not in self.spans:  # a syntactic position recorded inside it stands
                self.spans[key] = (start, self.offset, node)

        def record_syntactic_position(self, node, *, start_node=None, end_node=None):
            return _Recording(self, node, start_node, end_node)

        def ranges(self, wanted_ids: set[int]) -> dict[cst.CSTNode, CodeRange]:
            return {
                node: CodeRange(self._position(start), self._position(end))
                for key, (start, end, node) in self.spans.items()
                if key in wanted_ids
            }

        def _position(self, offset: int) -> CodePosition:
            line = bisect.bisect_right(self.line_starts, offset)
            return CodePosition(line, offset - self.line_starts[line - 1])

    class _Recording:
        """`_OffsetState.record_syntactic_position`: the node spans from where the block starts (or
        `start_node` starts) to where it ends (or `end_node` ends), as libcst's providers record it."""

        __slots__ = ("state", "node", "start_node", "end_node", "start")

        def __init__(self, state: _OffsetState, node, start_node, end_node) -> None:
            self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

        def __enter__(self) -> None:
            self.start = self.state.offset

        def __exit__(self, *exception) -> None:  # also when the block raised, as libcst's `finally`
            spans = self.state.spans
            start, end = self.start, self.state.offset
            if self.start_node is not None:
                start = spans[id(self.start_node)][0]
            if self.end_node is not None:
                end = spans[id(self.end_node)][1]
            spans[id(self.node)] = (start, end, self.node)


def code_in_block(node: cst.CSTNode, module: cst.Module, indent: str) -> Optional[str]:
    """`node` as libcst prints it inside a block indented by `indent` (Module.code_for_node prints it
    at the top level), for fixes computed in place (checker.py).  None if libcst's code generator
    state is not the one this was written for."""
    if _OffsetState is None:
        return None  # pragma: no cover
    state = _CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    if indent:
        state.increase_indent(indent)
    node._codegen(state)
    return "".join(state.tokens)


# How libcst's position providers split a token into lines.
_NEWLINE_IN_TOKEN = re.compile(r"\r\n?|\n")


def _statements_holding(
    module: cst.Module, wanted_ids: set[int], printed: Optional[PrintedStatements] = None
) -> Optional[list[int]]:
    """Indexes of the top-level statements holding the wanted nodes; None if one is outside all."""
    remaining = set(wanted_ids)
    owners: list[int] = []
    for index, statement in enumerate(module.body):
        if not remaining:
            break
        held_ids = printed.node_ids(statement) if printed is not None else None
        if held_ids is not None:  # printed for an earlier text: its nodes are known
            if not held_ids.isdisjoint(remaining):
                remaining -= held_ids
                owners.append(index)
            continue
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


def lines_from_rows(module: Union[cst.Module, cst.IndentedBlock], first_rows: Sequence[int]) -> Optional[list[int]]:
    """For each statement, the lines before its code (its leading blank and comment lines are its
    own: one line each), from the rows of the statements' first tokens; None when the rows do not
    describe these statements (then the statements are printed to count their lines)."""
    if len(first_rows) != len(module.body):
        return None
    result = [row - 1 - len(statement.leading_lines) for row, statement in zip(first_rows, module.body)]
    if any(b <= a for a, b in zip(result, result[1:])) or (result and result[0] < 0):
        return None
    return result


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
    header = "".join(module.code_for_node(line) for line in module.header)
    # The header's length: counted from the top when the text starts with it, since libcst may print
    # the lines after the last statement differently (blank lines before an indented one are dropped);
    # else from the bottom, through the statements' and footer's printed lengths.
    offset = len(header) if text.startswith(header) else len(text) - generated
    lines = len(NEWLINE.findall(text, 0, offset))
    result: list[int] = []
    for code in codes[: last + 1]:
        result.append(lines)
        lines += len(NEWLINE.findall(code))
    return result


# libcst drops a form feed or a `\` line continuation that comes before a statement's first token
# (`\f` + "x = 1" prints back as "x = 1"), and prints every line of a block with the indentation of
# its first line (a form feed included), so the code it prints, and every position and fix computed
# from it, can differ from the source.  Only text with one of these can be affected (a random search
# over 60,000 programs of odd whitespace found no other case) before the last statement; after it,
# libcst may drop blank lines and move indented comments ("x = 1\n\n\n " prints back as "x = 1\n "),
# which no position inside a statement depends on (`_lines_before_statements` counts from the top).
_LOSSY = re.compile(r"\f|(?:^|[\r\n])[ \t]*\\(?:\r\n|\r|\n)")
_BLANK = frozenset(" \t\f\r\n\\")  # what libcst changes: whitespace and line continuations


def printed_code(module: cst.Module, text: str) -> str:
    """The code libcst prints for `module`, parsed from `text`: `text` itself unless libcst changed
    some of its whitespace (see `SourceMap`)."""
    return module.code if has_lossy_whitespace(text) else text


def has_lossy_whitespace(text: str) -> bool:
    """Whether `text` has whitespace libcst may print back differently (a form feed, a `\\` line)."""
    return _LOSSY.search(text) is not None


class TextChanged(ValueError):
    """libcst printed the file back with more than whitespace changed."""


class SourceMap:
    """Offsets in the code libcst printed -> offsets in the source text it was parsed from.

    The two differ only in runs of whitespace and `\\` continuations between tokens, so they are
    the same segments of text (each at its own shift) separated by such runs; TextChanged if not.
    Every node starts and ends with a token, so its position maps exactly; an edit maps unless it
    touches a run that differs (it would rewrite the user's whitespace with libcst's)."""

    def __init__(self, code: str, text: str) -> None:
        self.code_starts: list[int] = [0]  # where each same segment starts in the code ...
        self.shifts: list[int] = [0]  # ... and text offset - code offset inside it
        self.differing: list[tuple[int, int]] = []  # [start, end) of the code's differing runs
        i = j = 0
        while i < len(text) or j < len(code):
            run = _common_run(text, i, code, j)
            i, j = i + run, j + run
            if i == len(text) and j == len(code):
                break
            while i > 0 and j > 0 and text[i - 1] in _BLANK and text[i - 1] == code[j - 1]:
                i, j = i - 1, j - 1  # the differing run starts where the blank run does
            code_start = j
            while i < len(text) and text[i] in _BLANK:
                i += 1
            while j < len(code) and code[j] in _BLANK:
                j += 1
            if i < len(text) and j < len(code) and text[i] != code[j] or (i == len(text)) != (j == len(code)):
                raise TextChanged("libcst changed more than whitespace")
            self.differing.append((code_start, j))
            self.code_starts.append(j)
            self.shifts.append(i - j)
        self.run_ends = [run_end for _, run_end in self.differing]

    def offset(self, code_offset: int) -> int:
        """The text offset of the code's character at `code_offset` (a token's first character)."""
        index = bisect.bisect_right(self.code_starts, code_offset) - 1
        return code_offset + self.shifts[index]

    def end_offset(self, code_offset: int) -> int:
        """The text offset just past the code's character before `code_offset` (a token's last)."""
        return self.offset(code_offset - 1) + 1 if code_offset > 0 else 0

    def edit_span(self, start: int, end: int) -> Optional[tuple[int, int]]:
        """The text span of the code's [start, end), or None when it touches a run that differs."""
        index = bisect.bisect_right(self.run_ends, start)  # the first run that ends after `start`
        if index < len(self.differing):
            run_start = self.differing[index][0]
            if run_start < end or run_start < start:  # overlaps [start, end), or holds an insertion
                return None
        text_start = self.offset(start)
        return text_start, (self.end_offset(end) if end > start else text_start)


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
