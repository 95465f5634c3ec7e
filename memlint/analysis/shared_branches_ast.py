"""`shared_branches` on CPython's tree, for the project pass (which must not import libcst): the
simple statements that open every branch of an `if` / `elif` / `else` chain, the same (`ast.dump`)
in the same order in each, run whenever the chain is reached (`summaries._where`: a call there is
not conditional)."""

from __future__ import annotations

import ast
from typing import Callable, Iterator, Optional, TypeVar

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


Step = TypeVar("Step")


def agreeing_prefix(walks: list[Iterator[Optional[Step]]], key: Callable[[Step], str]) -> list[Step]:
    """The steps of every walk (one per branch, each ending in None or running out) taken in step
    while all of them have one and their keys agree: the straight-line work every branch opens
    with.  Tree-agnostic, so the rules' libcst copy (`shared_branches`) and this one share it."""
    agreed: list[Step] = []
    while True:
        steps = [next(walk, None) for walk in walks]
        if any(step is None for step in steps):
            return agreed
        first = key(steps[0])  # type: ignore[arg-type]
        if any(key(step) != first for step in steps[1:]):  # type: ignore[arg-type]
            return agreed
        agreed.extend(steps)  # type: ignore[arg-type]


def _steps_ast(block: list[ast.stmt]) -> Iterator[Optional[ast.stmt]]:
    """The simple statements `block` runs in order, through `with` blocks that bind no name; then
    None where any other statement ends the straight-line part."""
    for statement in block:
        kind = type(statement)
        if kind in _SIMPLE:
            yield statement
        elif kind is ast.With and all(item.optional_vars is None for item in statement.items):  # type: ignore[attr-defined]
            for step in _steps_ast(statement.body):  # type: ignore[attr-defined]
                yield step
                if step is None:
                    return
        else:
            yield None
            return


def shared_statements_ast(top: ast.If) -> frozenset[int]:
    """`shared_branches.shared_statements` on CPython's tree: the ids of the simple statements that
    open every branch of the chain starting at `top`, equal (`ast.dump`) and in the same order in
    each; empty for a chain with no `else`."""
    branches = chain_branches_ast(top)
    if branches is None:
        return frozenset()
    return frozenset(id(statement) for statement in agreeing_prefix([_steps_ast(branch) for branch in branches], ast.dump))


def done_in_every_branch_ast(top: ast.If, statement: ast.stmt, memo: Optional[dict] = None) -> bool:
    """Is `statement` one of the statements that open every branch of the chain starting at `top`
    (`shared_statements_ast`)?  `memo` (one per file) keeps each chain's answer: every call in a
    branch asks of the same chain."""
    memo = {} if memo is None else memo
    found = memo.get(id(top))
    if found is None:
        found = memo[id(top)] = shared_statements_ast(top)
    return id(statement) in found
