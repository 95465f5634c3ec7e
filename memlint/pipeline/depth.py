"""Guards that keep code libcst cannot handle away from it, and a deep stack for what it can.

libcst's native parser recurses on the C stack and its Python code (the tree, positions, code
generation) recurses once or more per level of nesting.  On the 8 MiB main-thread stack the parser
overflows (a segfault, not an exception) at about 1,500 nested brackets, 3,000 chained operators or
8,000 `and` operands, and at Python's default recursion limit the analysis fails at about 400
levels.  Three guards:

- `depth_error`: CPython refuses code nested too deeply (at most 200 nested brackets, an AST about
  3,000 deep at the default recursion limit); such a program can never run and is reported as a
  syntax error without reaching libcst.
- `too_complex`: CPython's AST is flat where libcst's tree is not: `a and b and c` is one `BoolOp`
  node for CPython and a chain of `BooleanOperation`s for libcst, and so are implicit string
  concatenations (`"a" "b" "c"`).  The levels libcst will build are counted from CPython's AST
  (one per node, one per `and`/`or` operand and per string literal) and a file deeper than
  `LIMIT` is not given to libcst.  libcst's parser also grows quadratically with depth in time and
  memory (1,000 nested lambdas: 0.2 GB; 2,900: 1.6 GB and 7 s), which the limit bounds too.
- `token_levels`: the same bound from tokens, for text CPython cannot compile (libcst may still
  parse syntax newer than the running interpreter).

`on_deep_stack` runs the libcst stages in a thread with a stack and a recursion limit sized for
`LIMIT` levels, so that what the guards let through is analysed whatever the caller's stack size
(`ulimit -s`, a thread) and recursion limit.  The margins are measured by tests/test_depth.py.
"""

from __future__ import annotations

import ast
import io
import sys
import threading
import tokenize
from typing import Callable, NamedTuple, Optional, Tuple, TypeVar

from memlint.pipeline.source import compile_ast
from memlint.pipeline.text import Positions

# Levels of nesting (as `too_complex` counts them) the full analysis accepts.  Every construct was
# measured to analyse, with findings and fixes in the deep statement, at twice this many levels
# (tests/test_depth.py); real code stays far below (the deepest file of timm, transformers,
# torchvision, Lightning, numpy, sympy and torch counts under 200).
LIMIT = 1000
# The thread `on_deep_stack` runs in: its stack, and the recursion limit inside it.
STACK_BYTES = 64 * 2**20
RECURSION_LIMIT = 60_000

# CPython's words for "nested too deeply"; other syntax errors are left to libcst, which also knows
# syntax newer than the running interpreter.
_DEPTH_MESSAGES = ("too many nested parentheses", "too many levels of indentation", "too complex")
_STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_START", tokenize.STRING)}

T = TypeVar("T")


class Complexity(NamedTuple):
    """Why a file is too complex for libcst, and where."""

    what: str  # "a chain of 8,000 `and`/`or` operands"
    row: int
    column: int


def depth_error(text: str) -> Optional[Tuple[str, int, int]]:
    """(message, row, column) when CPython rejects `text` for its nesting depth, else None."""
    try:
        compile_ast(text, "<depth-check>")
    except (RecursionError, MemoryError):
        return "code is nested too deeply for Python to compile", 1, 1
    except SyntaxError as error:
        if any(words in (error.msg or "") for words in _DEPTH_MESSAGES):
            return error.msg, error.lineno or 1, max(error.offset or 1, 1)
    except ValueError:  # NUL bytes: decoding reports those
        pass
    return None


def too_complex(tree: ast.AST, text: str, limit: int = LIMIT) -> Optional[Complexity]:
    """The first place where libcst's tree of `text` (CPython's `tree` of it) would be nested more
    than `limit` levels deep, or None."""
    for _, complexity in deep_statements(tree, text, limit, first_only=True).found:
        return complexity
    return None


class DeepScan(NamedTuple):
    found: list[tuple[Optional[ast.stmt], Complexity]]
    nodes: int  # the nodes walked: the nodes of the tree but those `data` took and under found places


def deep_statements(
    tree: ast.AST, text: str, limit: int = LIMIT, *, first_only: bool = False,
    data: Optional[Callable[[ast.AST], bool]] = None,
) -> DeepScan:  # fmt: skip
    """Each innermost statement of `tree` that holds a place where libcst's tree would be nested more
    than `limit` levels deep, with the first such place in it (statement None: outside every
    statement, which CPython's own limits leave to the module's docstring).  A statement found is
    not searched further, nor is what it holds (masking.py leaves it out whole).  `data(display)`,
    asked of each list, tuple, set and dict display, True: the display is left out of libcst's
    parse (masking.py), so it is neither searched nor counted."""
    strings = StringParts(text)
    found: list[tuple[Optional[ast.stmt], Complexity]] = []
    nodes = 0
    done: set[int] = set()  # ids of the statements found
    # (node, its depth, the nearest node with a position, inside an f-string's literal parts, the
    # innermost statement around it)
    stack: list[tuple[ast.AST, int, ast.AST, bool, Optional[ast.stmt]]] = [(tree, 0, tree, False, None)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth, where, in_fstring, statement = pop()
        if statement is not None and id(statement) in done:
            continue
        kind = type(node)
        if data is not None and kind in _DISPLAYS and data(node):
            continue
        nodes += 1
        if hasattr(node, "lineno"):
            where = node
        if isinstance(node, ast.stmt):
            statement = node
        if kind is ast.BoolOp:
            depth += max(1, len(node.values) - 1)  # type: ignore[attr-defined]
        elif kind is ast.JoinedStr or (kind is ast.Constant and not in_fstring and isinstance(node.value, (str, bytes))):  # type: ignore[attr-defined]
            depth += strings.count(node, limit - depth)
        else:
            depth += 1
        if depth > limit:
            found.append((statement, _complexity(node, where, strings)))
            if first_only or statement is None:
                return DeepScan(found, nodes)
            done.add(id(statement))
            continue
        inside = kind is ast.JoinedStr or (in_fstring and kind is not ast.FormattedValue)
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
        for field in fields:
            value = getattr(node, field, None)
            if type(value) is list:  # (a loop, not a generator: this walks every file the screens let through)
                for item in value:
                    if isinstance(item, ast.AST):
                        push((item, depth, where, inside, statement))
            elif value is not None and isinstance(value, ast.AST):
                push((value, depth, where, inside, statement))
    return DeepScan(found, nodes)


_DISPLAYS = frozenset({ast.List, ast.Tuple, ast.Set, ast.Dict})


# Fields that hold no nested code: operator and context singletons, names, flags.
_LEAF_FIELDS = frozenset({"ctx", "op", "ops", "id", "attr", "arg", "name", "names", "asname", "module", "kind", "type_comment", "level", "conversion"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def token_levels(text: str) -> Optional[int]:
    """An upper bound of the nesting libcst would build for `text`, from its tokens alone (for text
    CPython cannot compile); None when Python's tokenizer cannot read it either.

    Inside one comma-separated element every token can add a level (an operator chain, a trailer
    such as `.b` or `()`, a string literal, `not`, `lambda`), and each open bracket and indented
    block adds its own; commas start a new element.  `lambda` parameters are separated by commas
    too, so lambdas are counted apart and survive them."""
    levels = [[0, 0]]  # per open bracket: [tokens in the current element, lambdas]
    total = indent = deepest = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            kind, string = token.type, token.string
            if kind in (tokenize.NL, tokenize.COMMENT, tokenize.ENDMARKER):
                continue
            if kind == tokenize.NEWLINE:
                levels, total = [[0, 0]], 0
                continue
            if kind == tokenize.INDENT:
                indent += 1
            elif kind == tokenize.DEDENT:
                indent -= 1
            elif kind == tokenize.OP and string in ",;":
                total -= levels[-1][0]
                levels[-1][0] = 0
            elif kind == tokenize.OP and string in ")]}":
                if len(levels) > 1:
                    element, lambdas = levels.pop()
                    total -= element + lambdas + 1
            else:
                levels[-1][1 if string == "lambda" else 0] += 1
                total += 1
                if kind == tokenize.OP and string in "([{":
                    levels.append([0, 0])
                    total += 1
            deepest = max(deepest, total + 3 * indent)
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return None
    return deepest


def on_deep_stack(function: Callable[..., T], *args, **kwargs) -> T:
    """`function(*args, **kwargs)` in a thread with a `STACK_BYTES` stack and a recursion limit of at
    least `RECURSION_LIMIT`, which the limits above were measured with; it raises what it raised.
    Called from such a thread, or where no such thread can be started (a tight address-space
    limit), it runs in the caller's thread."""
    if getattr(_state, "deep", False):
        return function(*args, **kwargs)
    outcome: list = []

    def run() -> None:
        _state.deep = True
        try:
            outcome.append((True, function(*args, **kwargs)))
        except BaseException as error:  # handed to the caller's thread
            outcome.append((False, error))

    worker = threading.Thread(target=run, name="memlint-deep-stack", daemon=True)
    with _lock:
        _raise_recursion_limit()
        try:
            previous_size: Optional[int] = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):  # a platform where the stack size cannot be set
            previous_size = None
        try:
            if previous_size is not None:
                worker.start()
        except RuntimeError:  # no memory for the stack
            pass
        finally:
            if previous_size is not None:
                threading.stack_size(previous_size)
    if worker.ident is None:  # not started: run here, at the caller's own limit
        _restore_recursion_limit()
        return function(*args, **kwargs)
    try:
        worker.join()
    finally:
        _restore_recursion_limit()
    succeeded, value = outcome[0]
    if succeeded:
        return value
    raise value


# The recursion limit is per interpreter (the depth counted against it is per thread): it is raised
# while any deep-stack thread runs and put back when the last one ends.
_lock = threading.Lock()
_state = threading.local()
_raised = {"threads": 0, "previous": 0}


def _raise_recursion_limit() -> None:
    if _raised["threads"] == 0:
        _raised["previous"] = sys.getrecursionlimit()
        sys.setrecursionlimit(max(_raised["previous"], RECURSION_LIMIT))
    _raised["threads"] += 1


def _restore_recursion_limit() -> None:
    with _lock:
        _raised["threads"] -= 1
        if _raised["threads"] == 0:
            sys.setrecursionlimit(_raised["previous"])


class StringParts:
    """The number of literals in a string node (`"a" "b"` is one Constant for CPython, two for
    libcst), counted exactly only where a cheap upper bound (quote characters / 2) is too high."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: Optional[list[int]] = None
        self._ascii: dict[int, bool] = {}

    def line_start(self, row: int) -> int:
        if self._starts is None:
            self._starts = Positions(self.text).starts
        return self._starts[row - 1]

    def offset(self, row: int, byte_column: int) -> int:
        start = self.line_start(row)
        ascii_line = self._ascii.get(row)
        if ascii_line is None:  # asked once per row: a long line asked for each of its strings stays linear
            end = self._starts[row] if row < len(self._starts) else len(self.text)  # type: ignore[arg-type]
            ascii_line = self._ascii[row] = self.text[start:end].isascii()
        if ascii_line:  # byte columns are character columns
            return start + byte_column
        end = self._starts[row] if row < len(self._starts) else len(self.text)  # type: ignore[arg-type]
        line = self.text[start:end]
        return start + len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.offset(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def count(self, node: ast.AST, allowed: int) -> int:
        """The literals of a string node; exactly when that can matter: for an f-string (whose
        replacement fields nest inside them) and above `allowed`."""
        if getattr(node, "end_lineno", None) is None:
            return 1
        start, end = self.span(node)
        bound = (self.text.count('"', start, end) + self.text.count("'", start, end)) // 2  # 2 quotes each
        if bound <= 1 or (bound <= allowed and type(node) is ast.Constant):
            return 1
        try:
            tokens = tokenize.generate_tokens(io.StringIO("(" + self.text[start:end] + ")").readline)
            return max(1, sum(1 for token in tokens if token.type in _STRING_TOKENS))
        except (tokenize.TokenError, SyntaxError):
            return bound


def _complexity(node: ast.AST, where: ast.AST, strings: StringParts) -> Complexity:
    row, column = 1, 1
    if hasattr(where, "lineno"):
        row = where.lineno  # type: ignore[attr-defined]
        column = strings.offset(row, where.col_offset) - strings.line_start(row) + 1  # type: ignore[attr-defined]
    if isinstance(node, ast.BoolOp):
        what = f"a chain of {len(node.values):,} `and`/`or` operands"
    elif isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
        what = f"a concatenation of {strings.count(node, 0):,} string literals"
    else:
        what = "code"
    return Complexity(what, row, column)
