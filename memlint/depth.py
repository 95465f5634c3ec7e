"""A guard against code nested too deeply to parse safely.

libcst's native parser recurses on the C stack: around 1,500 nested brackets or 3,000 chained
operators it overflows the stack and the whole process dies (a segfault, not an exception).  CPython's
own parser refuses such code cleanly (at most 200 nested brackets; an AST about 3,000 levels deep
at the default recursion limit), so a program CPython rejects for its depth can never run and is
reported as a syntax error without ever reaching libcst.  Compiling to an AST costs about a tenth of
a libcst parse.
"""

from __future__ import annotations

import ast
import warnings
from typing import Optional, Tuple

# CPython's words for "nested too deeply"; other syntax errors are left to libcst, which also knows
# syntax newer than the running interpreter.
_DEPTH_MESSAGES = ("too many nested parentheses", "too many levels of indentation", "too complex")


def depth_error(text: str) -> Optional[Tuple[str, int, int]]:
    """(message, row, column) when CPython rejects `text` for its nesting depth, else None."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<depth-check>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (RecursionError, MemoryError):
        return "code is nested too deeply for Python to compile", 1, 1
    except SyntaxError as error:
        if any(words in (error.msg or "") for words in _DEPTH_MESSAGES):
            return error.msg, error.lineno or 1, max(error.offset or 1, 1)
    except ValueError:  # NUL bytes: decoding reports those
        pass
    return None
