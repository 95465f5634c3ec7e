"""The nodes below a node of CPython's AST, listed without the shared singletons of its leaf fields
(`ast.Load()`, `ast.Add()`): what the prescreen's index and the project pass's walks ask of a
subtree (a name, a call, a return), in a fraction of `ast.iter_child_nodes` / `ast.walk`'s time.
Not for a question about an operator or a context node itself (a node's own `ctx` still answers)."""

from __future__ import annotations

import ast
from typing import Iterator

# Fields that hold only shared singletons (`ast.Load()`, `ast.Add()`) or strings: not listed.
LEAF_FIELDS = frozenset({"ctx", "op", "id", "attr", "arg", "name", "asname", "module", "kind", "type_comment", "level", "conversion"})
# node type -> its other fields, filled on first sight of the type
CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def child_fields(kind: type) -> tuple[str, ...]:
    """The fields of a node type that may hold nodes."""
    fields = CHILD_FIELDS.get(kind)
    if fields is None:
        fields = CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in LEAF_FIELDS)
    return fields


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes(node)` as a list, less the shared singletons of the leaf fields, in the
    same order."""
    found: list[ast.AST] = []
    fields = CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = child_fields(type(node))
    for field in fields:
        value = getattr(node, field, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def subtree(node: ast.AST) -> Iterator[ast.AST]:
    """`node` and every node below it, as `ast.walk` finds them but for the shared singletons of the
    leaf fields, and in depth-first order."""
    stack = [node]
    pop, push = stack.pop, stack.append
    while stack:
        current = pop()
        yield current
        fields = CHILD_FIELDS.get(type(current))
        if fields is None:
            fields = child_fields(type(current))
        for field in fields:
            value = getattr(current, field, None)
            if type(value) is list:
                for item in value:  # (`Dict.keys` holds None for `**d`, `Global.names` strings)
                    if isinstance(item, ast.AST):
                        push(item)
            elif isinstance(value, ast.AST):
                push(value)


# Definitions whose code is their own, not the code of the scope they stand in.
_OWN_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def own_nodes(scope: ast.AST) -> list[ast.AST]:
    """The nodes of a function's (or the module's) own code: not those of the functions, classes and
    lambdas defined in it, nor those definitions themselves (no caller asks about a nested
    definition; no context or operator node either, as in `child_nodes`)."""
    found: list[ast.AST] = []
    stack = child_nodes(scope)
    while stack:
        node = stack.pop()
        if isinstance(node, _OWN_SCOPES):
            continue
        found.append(node)
        stack.extend(child_nodes(node))
    return found
