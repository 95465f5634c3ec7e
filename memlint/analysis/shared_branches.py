"""Work that every branch of an `if` / `elif` / `else` chain does: whichever branch runs, it runs.

`if step % 4 == 0:` trains on one batch in four and only evaluates the others, but both branches
begin by building `mask = torch.zeros(n).cuda()`: the test picks which branch runs, not whether the
statement does, so the statement runs on every iteration of the loop around the chain.  The evidence
is direct: the chain ends in an `else` (one branch always runs) and every branch begins with the
same statements, in the same order, up to and including the one judged (`with` blocks that bind
nothing are read through; a compound statement ends the shared part).  An equal statement later in
one branch is not the same work: what ran before it differs (`x = torch.zeros(n)`, then in one
branch `x[idx] = host_values`, then `x = x.cuda()`).  Equal means the same code text.

`shared_statements` lists a chain's shared simple statements once (the caller memoises it per file:
`iteration.every_iteration` and its siblings ask it for every node a rule judges);
`shared_branches_ast.shared_statements_ast` is the same on CPython's tree, without libcst (the
project pass's call sites, `summaries._where`: a helper called in every branch is called on every
iteration).
"""

from __future__ import annotations

from typing import Iterator, Optional

import libcst as cst

from memlint.analysis.shared_branches_ast import agreeing_prefix
from memlint.pipeline.tree import code_descendants

_CODE = cst.Module(body=[])


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


def _steps(suite: cst.BaseSuite) -> Iterator[Optional[cst.CSTNode]]:
    """The simple statement lines `suite` runs in order, through `with` blocks that bind no name;
    then None where a compound statement (or a binding `with`) ends the straight-line part."""
    if type(suite) is cst.SimpleStatementSuite:
        yield suite
        return
    for statement in suite.body:  # type: ignore[attr-defined]
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            yield statement
        elif kind is cst.With and all(item.asname is None for item in statement.items):  # type: ignore[attr-defined]
            for step in _steps(statement.body):  # type: ignore[attr-defined]
                yield step
                if step is None:
                    return
        else:
            yield None
            return


def _text(line: cst.CSTNode) -> str:
    small = line.body  # type: ignore[attr-defined]
    return "; ".join(_CODE.code_for_node(statement).strip() for statement in small)


def shared_statements(condition: cst.If) -> frozenset[int]:
    """The ids of every node inside the simple statements that open every branch of the chain
    starting at `condition`, the same code in the same order in each; empty for a chain with no
    `else`.  Computed once per chain by the caller (a memo per file)."""
    branches = chain_branches(condition)
    if branches is None:
        return frozenset()
    found: set[int] = set()
    for line in agreeing_prefix([_steps(branch) for branch in branches], _text):
        found.add(id(line))
        found.update(id(node) for node in code_descendants(line))
    return frozenset(found)


def done_in_every_branch(condition: cst.CSTNode, at: cst.CSTNode, shared: Optional[frozenset[int]] = None) -> bool:
    """Is `at` (a node the `if` `condition` guards) in a statement every branch of the chain starting
    at `condition` runs after the same statements (`shared_statements`, given as `shared` where the
    caller memoises it)?  False for a chain with no `else`, and where `at` is behind a further `if`
    or in a loop of its branch (that test is asked on its own)."""
    if type(condition) is not cst.If:
        return False
    if shared is None:
        shared = shared_statements(condition)  # type: ignore[arg-type]
    return id(at) in shared
