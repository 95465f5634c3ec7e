"""Source that libcst reads but CPython refuses: the file cannot run, so it gets ML000 (a syntax
error) with CPython's message and position, not "All checks passed!".

libcst's grammar accepts more than Python does.  Two kinds of error come after the grammar:

- decoding a string literal: `"\\N{NO SUCH NAME}"`, `"\\x4"`: CPython's parser raises "(unicode
  error) ..." while it builds the AST, so the prescreen's one compile of the text (Source.tree) has
  already failed with it; that error is reused, except "unknown Unicode character name": a `\\N{...}`
  name depends on the interpreter's Unicode database (`"\\N{SHAKING FACE}"`, Unicode 15, compiles on
  Python 3.12 and is refused on 3.11), so the file may run on another Python.  Only these count:
  another failure of that compile may be syntax newer than this interpreter (libcst may read it and the file may run on a newer
  Python), which the full analysis goes on to lint as before.
- placing a statement: `return` or `yield` outside a function, `break` / `continue` outside a loop,
  `nonlocal` at module level.  CPython's symbol table and code generator raise these after the AST
  is built, so the prescreen's compile (to an AST only) accepts the text.  The tree is compiled to
  bytecode only where the prescreen's index shows such a statement with no function (or loop)
  around it, and only the errors of that list are taken: they hold in every Python version.
  Notebooks are not asked (a cell is compiled on its own, and IPython accepts top-level `await`).
"""

from __future__ import annotations

import ast
from typing import Optional

from memlint.pipeline.source import COMPILE_ERRORS, compile_tree
from memlint.prescreen.source import Source

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_SCOPES = (*_FUNCTIONS, ast.ClassDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
# A `\\N{...}` name this interpreter's Unicode database lacks: a newer Python may know it.
_UNICODE_NAME_ERROR = "unknown Unicode character name"
# The errors of CPython's compiler after the AST, for the statements asked about below.
_PLACEMENT_ERRORS = frozenset({
    "'return' outside function", "'yield' outside function", "'break' outside loop",
    "'continue' not properly in loop", "nonlocal declaration not allowed at module level",
})  # fmt: skip


def python_refusal(source: Source) -> Optional[SyntaxError]:
    """CPython's SyntaxError for a text it refuses although libcst may read it, by the kinds above;
    None where CPython compiles it, or where the refusal may depend on the Python version."""
    if source.tree is None:
        error = source.compile_error
        message = (error.msg or "") if isinstance(error, SyntaxError) else ""
        if message.startswith("(unicode error)") and _UNICODE_NAME_ERROR not in message:
            return error
        return None
    if not _misplaced_statement(source):
        return None
    try:
        compile_tree(source.tree)
    except SyntaxError as error:
        return error if error.msg in _PLACEMENT_ERRORS else None
    except COMPILE_ERRORS:
        return None
    return None


def _misplaced_statement(source: Source) -> bool:
    """Is there a `return` / `yield` / `nonlocal` whose scope is no function, or a `break` /
    `continue` with no loop before its scope?  (A loop's `else:` is no loop for them: the compile
    tells; this only says where to look.)"""
    for node in source.nodes(ast.Return, ast.Yield, ast.YieldFrom, ast.Nonlocal):
        scope = next((a for a in source.ancestors(node) if isinstance(a, _SCOPES)), None)
        if not isinstance(scope, _FUNCTIONS):
            return True
    for node in source.nodes(ast.Break, ast.Continue):
        around = next((a for a in source.ancestors(node) if isinstance(a, (*_SCOPES, *_LOOPS))), None)
        if not isinstance(around, _LOOPS):
            return True
    return False
