"""Reading Python source the way Python does: BOM and coding cookie honoured, newlines untouched."""

from __future__ import annotations

import ast
import io
import tokenize
import warnings
from dataclasses import dataclass


class UndecodableSource(Exception):
    """The bytes are not Python source text; the message says why."""


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str  # "utf-8-sig" when the file starts with a BOM, so encoding back restores it

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(data: bytes) -> DecodedSource:
    if b"\x00" in data:
        raise UndecodableSource("source contains NUL bytes (a binary file?)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:  # an unknown or inconsistent coding cookie
        raise UndecodableSource(str(error)) from None
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as error:
        raise UndecodableSource(f"cannot decode as {encoding}: {error}") from None
    return DecodedSource(text, encoding)


# What compiling a text can raise: a syntax error, NUL bytes (ValueError), nesting too deep for the
# compiler (RecursionError, MemoryError).
COMPILE_ERRORS = (SyntaxError, ValueError, RecursionError, MemoryError)


def compile_ast(text: str, filename: str = "<memlint>") -> ast.Module:
    """CPython's AST of `text`, with the compiler's warnings (invalid escapes, ...) silenced: they are
    the user's business, not the linter's.  Raises one of COMPILE_ERRORS.  The one place memlint
    compiles source."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(text, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)


def ast_or_none(text: str, filename: str = "<memlint>") -> "ast.Module | None":
    """`compile_ast`, or None when the text does not compile."""
    return ast_or_error(text, filename)[0]


def ast_or_error(text: str, filename: str = "<memlint>") -> "tuple[ast.Module | None, BaseException | None]":
    """`compile_ast` and None, or None and what it raised (one of COMPILE_ERRORS)."""
    try:
        return compile_ast(text, filename), None
    except COMPILE_ERRORS as error:
        return None, error


def compile_tree(tree: ast.Module, filename: str = "<memlint>") -> None:
    """Compile an AST to bytecode (CPython's symbol table and code generator: the checks that come
    after parsing, `'return' outside function`), warnings silenced as in `compile_ast`.  Raises one
    of COMPILE_ERRORS."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compile(tree, filename, "exec", dont_inherit=True)


def statement_rows(tree: ast.Module) -> list[int]:
    """The row of each top-level statement's first token (a decorator's `@`), one per line: libcst
    makes one statement of `a = 1; b = 2`, CPython two.  (Also of a def's or class's body.)"""
    return sorted(set(map(first_row, tree.body)))


def first_row(statement: ast.stmt) -> int:
    """The row of a statement's first token: its first decorator's, if it has any."""
    return min([statement.lineno, *(d.lineno for d in getattr(statement, "decorator_list", ()))])
