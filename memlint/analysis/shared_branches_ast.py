"""`shared_branches` on CPython's tree, for the project pass (which must not import libcst): a
simple statement every branch of an `if` / `elif` / `else` chain runs, an equal copy (`ast.dump`) in
each, runs whenever the chain is reached (`summaries._where`: a call there is not conditional)."""

from __future__ import annotations

import ast
from typing import Iterator, Optional

_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return)


def chain_branches_ast(node: ast.If) -> Optional[list[list[ast.stmt]]]:
    """`chain_branches` on CPython's tree (an `elif` is an `If` alone in `orelse`)."""
    branches = []
    current = node
    while True:
        branches.append(current.body)
        orelse = current.orelse
        if not orelse:
            return None
        if len(orelse) == 1 and type(orelse[0]) is ast.If:
            current = orelse[0]
            continue
        branches.append(orelse)
        return branches


def _statements_ast(block: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in block:
        if type(statement) in _SIMPLE:
            yield statement
        elif type(statement) is ast.With:
            yield from _statements_ast(statement.body)


def done_in_every_branch_ast(top: ast.If, statement: ast.stmt, memo: Optional[dict] = None) -> bool:
    """`done_in_every_branch` on CPython's tree: is `statement`, a simple statement of a branch of the
    chain starting at `top` (in its own block or a `with` block in it), equal (`ast.dump`) to one in
    every branch of a chain that ends in an `else`?  `memo` (one per file) keeps each chain's dumps:
    every call in a branch asks of the same chain."""
    memo = {} if memo is None else memo
    found = memo.get(id(top))
    if found is None:
        branches = chain_branches_ast(top)
        if branches is None:
            found = memo[id(top)] = ()
        else:
            listed = [list(_statements_ast(branch)) for branch in branches]
            ids = {id(s) for statements in listed for s in statements}
            found = memo[id(top)] = (ids, [{ast.dump(s) for s in statements} for statements in listed])
    if not found or id(statement) not in found[0]:
        return False
    shown = ast.dump(statement)
    return all(shown in dumps for dumps in found[1])
