"""Work that every branch of an `if` / `elif` / `else` chain does: whichever branch runs, it runs.

`if step % 4 == 0:` trains on one batch in four and only evaluates the others, but both branches
build `mask = torch.zeros(n).cuda()`: the test picks which branch runs, not whether the statement
does, so the statement runs on every iteration of the loop around the chain.  The evidence is
direct: the chain ends in an `else` (one branch always runs) and every branch holds an equal
statement that runs whenever the branch does (in its own block, or in a `with` block in it: not
behind a further `if`, in a loop or in an exception handler).  Equal means the same small
statements, node for node (`deep_equals`), not merely the same kind of work.

`done_in_every_branch` asks it of libcst's tree (`iteration.every_iteration` and its siblings, for
the node a rule judges); `shared_branches_ast.done_in_every_branch_ast` of CPython's, without
libcst (the project pass's call sites, `summaries._where`: a helper called in every branch is
called on every iteration).
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from memlint.pipeline.tree import code_descendants


def chain_branches(node: cst.If) -> Optional[list[cst.BaseSuite]]:
    """The bodies of the chain that starts at `node` (its `elif`s, then its `else`), or None where
    it has no `else`: then no branch need run."""
    branches: list[cst.BaseSuite] = []
    current = node
    while True:
        branches.append(current.body)
        orelse = current.orelse
        if orelse is None:
            return None
        if type(orelse) is cst.Else:
            branches.append(orelse.body)
            return branches
        current = orelse  # an `elif`


def _lines(suite: cst.BaseSuite) -> Iterator[tuple[cst.CSTNode, Sequence[cst.BaseSmallStatement]]]:
    """The simple statements that run whenever `suite` does (through `with` blocks), each with its
    small statements."""
    if type(suite) is cst.SimpleStatementSuite:
        yield suite, suite.body
        return
    for statement in suite.body:  # type: ignore[attr-defined]
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            yield statement, statement.body  # type: ignore[attr-defined]
        elif kind is cst.With:
            yield from _lines(statement.body)  # type: ignore[attr-defined]


def _same(a: Sequence[cst.BaseSmallStatement], b: Sequence[cst.BaseSmallStatement]) -> bool:
    return len(a) == len(b) and all(x.deep_equals(y) for x, y in zip(a, b))


def done_in_every_branch(condition: cst.CSTNode, at: cst.CSTNode) -> bool:
    """Is `at` (a node the `if` `condition` guards) in a statement that every branch of the chain
    starting at `condition` runs unconditionally, an equal copy in each?  False for a chain with no
    `else`, and where `at` is behind a further `if` or in a loop of its branch (that test is asked
    on its own)."""
    if type(condition) is not cst.If:
        return False
    branches = chain_branches(condition)  # type: ignore[arg-type]
    if branches is None:
        return False
    holding = None
    for branch in branches:
        for line, small in _lines(branch):
            if line is at or any(node is at for node in code_descendants(line)):
                holding = small
                break
        if holding is not None:
            break
    if holding is None:
        return False
    return all(any(_same(small, holding) for _, small in _lines(branch)) for branch in branches)
