"""The binding of a name that reaches a statement from further back than the line before it.

`producers.py` answers for the statement right before (and `if` branches that end in a binding).
Graph layers bind a value, check it, and use it under a flag:

    h_prime = h_prime.div(e_rowsum)
    assert not torch.isnan(h_prime).any()
    if self.concat:
        return F.elu(h_prime)

Here the search walks back from the statement through its block, and out of the `if` / `elif` /
`else` branches around it into the block that holds the `if` (out of an `elif` or an `else`, past
every test of the chain before it, not the branches those tests chose), until a statement binds the
name (`name = value` alone on its line).  An earlier `if C:` whose test is one of those the
statement runs under (the `if C:` / `elif C:` branches it was found in), a test the function
cannot change (analysis/stable_tests.py: open-reid's `if self.has_embedding: x = self.feat_bn(x)`,
then `elif self.has_embedding: x = F.relu(x)`), ran its branch: that branch's last binding of the
name, on a line of its own body followed there only by harmless reads, is the one that reaches.  Every statement passed on the way (the `if` tests included)
may mention the name only in reads that keep no reference to the tensor: its metadata
(`h.shape`, `h.size()`, `h.dim()`), or a torch test that returns a new boolean tensor
(`torch.isnan(h)`).  Anything else (a rebinding in a branch, `kept = h`, a call that may store it)
ends the search with None.  A loop, `with` or `try` around the statement also ends it: whether its
body ran before, and what it did to the name, is not followed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst

from memlint.analysis.producers import bound_value
from memlint.analysis.stable_tests import stable_test, condition_key
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Reads of a tensor that keep no reference to it: metadata, and torch tests whose result is a new
# boolean tensor with no autograd history.
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "requires_grad", "size", "dim", "numel"})
_TESTS = frozenset({"torch.isnan", "torch.isinf", "torch.isfinite"})


@dataclass(frozen=True)
class Reaching:
    """The value the name was bound to, and the statement that bound it."""

    value: cst.BaseExpression
    statement: cst.CSTNode


def reaching_binding(function: cst.FunctionDef, statement: cst.CSTNode, name: str, ctx: "Context") -> Optional[Reaching]:
    """The `name = value` statement whose value `name` holds when `statement` (a statement of
    `function`'s body, possibly inside `if` / `elif` / `else` branches) runs, where nothing between
    read a reference to it; None where that is not known."""
    if type(function.body) is not cst.IndentedBlock:
        return None
    path = _path_to(function.body.body, statement, None)  # type: ignore[attr-defined]
    if path is None:
        return None
    guards: list[tuple[str, str]] = []  # the tests of the branches left so far, true where `statement` runs
    for level in range(len(path) - 1, -1, -1):
        block, index, branch = path[level]
        for earlier in reversed(block[:index]):
            value = bound_value(earlier, name)
            if value is not None:
                return Reaching(value, earlier)
            if guards and type(earlier) is cst.If:
                found = _bound_under_same_test(earlier, guards, name, function, ctx)
                if found is not _NOT_BOUND:
                    return found  # type: ignore[return-value]
            if not only_harmless_reads(earlier, name, ctx):
                return None
        if branch is None:
            return None  # the function's own body: the name is not bound in it before
        if type(branch.owner) is not cst.If:
            return None  # a loop, `with` or `try`: not followed
        if not all(only_harmless_reads(test, name, ctx) for test in branch.tests):
            return None
        if branch.guard is not None:
            key = condition_key(branch.guard)
            if key is not None:
                guards.append(key)
    return None


# `_bound_under_same_test`'s answer where the branch does not bind the name (the search goes on).
_NOT_BOUND = object()


def _bound_under_same_test(statement: cst.If, guards: list, name: str, function: cst.FunctionDef, ctx: "Context"):
    """`if C: ... name = value ...` passed on the way back from a statement that runs only under
    the same test `C` (open-reid: `if self.has_embedding: x = self.feat_bn(x)`, later `elif
    self.has_embedding: x = F.relu(x)`), `C` a test whose value the function cannot change
    (analysis/stable_tests.py): the branch ran, so its last binding of the name, a line of its own
    body after which the branch only reads the name harmlessly, is the one that reaches.  None
    where the branch mentions the name otherwise; `_NOT_BOUND` where it binds it nowhere."""
    key = condition_key(statement.test)
    if key is None or key not in guards or type(statement.body) is not cst.IndentedBlock:
        return _NOT_BOUND
    lines = statement.body.body  # type: ignore[attr-defined]
    for line in reversed(lines):
        value = bound_value(line, name)
        if value is not None:
            return Reaching(value, line) if stable_test(key, function, ctx) else None
        if not only_harmless_reads(line, name, ctx):
            return None
    return _NOT_BOUND


@dataclass(frozen=True)
class _Branch:
    """A block inside a compound statement: its owner (an `if` chain's first `if` for its `else`,
    the `elif` itself for an `elif`'s body), the tests that ran before the block was entered, and
    the test that is true inside it (None for an `else`, a loop, `with` or `try`)."""

    owner: cst.CSTNode
    tests: tuple[cst.BaseExpression, ...]
    guard: Optional[cst.BaseExpression]


def _path_to(
    statements: Sequence[cst.CSTNode], target: cst.CSTNode, branch: Optional[_Branch]
) -> Optional[list[tuple[Sequence[cst.CSTNode], int, Optional[_Branch]]]]:
    """The blocks from `statements` down to `target`: for each, its statements, the index of the
    one holding (or being) `target`, and the branch the block is (None for the function's body)."""
    for index, statement in enumerate(statements):
        if statement is target:
            return [(statements, index, branch)]
        for inner, block in _blocks(statement):
            if type(block) is cst.IndentedBlock:
                below = _path_to(block.body, target, inner)  # type: ignore[attr-defined]
                if below is not None:
                    return [(statements, index, branch), *below]
    return None


def _blocks(statement: cst.CSTNode):
    """(the branch, a block directly inside the statement): an `if`'s branch, each `elif`'s and the
    `else`, a loop's, `with`'s or `try`'s body."""
    kind = type(statement)
    if kind is cst.If:
        tests: tuple[cst.BaseExpression, ...] = ()
        current: cst.CSTNode = statement
        while type(current) is cst.If:
            tests = (*tests, current.test)  # type: ignore[attr-defined]
            yield _Branch(current, tests, current.test), current.body  # type: ignore[attr-defined]
            current = current.orelse  # type: ignore[attr-defined]
        if type(current) is cst.Else:
            yield _Branch(statement, tests, None), current.body  # type: ignore[attr-defined]
    elif kind in (cst.For, cst.While, cst.With, cst.Try):
        yield _Branch(statement, (), None), statement.body  # type: ignore[attr-defined]


def only_harmless_reads(node: cst.CSTNode, name: str, ctx: "Context") -> bool:
    """Does every mention of `name` in `node` (or `node` itself) read it in a way that keeps no
    reference to it: its metadata (`x.dtype`, `x.size(1)`) or a finiteness test (`torch.isnan(x)`)?"""
    mentions = harmless = 0
    for child in (node, *code_descendants(node)):
        kind = type(child)
        if kind is cst.Name and child.value == name:  # type: ignore[attr-defined]
            mentions += 1
        elif kind is cst.Attribute and child.attr.value in _METADATA and _is_name(child.value, name):  # type: ignore[attr-defined]
            harmless += 1
        elif kind is cst.Call and len(child.args) == 1 and _is_name(child.args[0].value, name):  # type: ignore[attr-defined]
            if ctx.resolve(child.func) in _TESTS:  # type: ignore[attr-defined]
                harmless += 1
    return mentions == harmless


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return type(expr) is cst.Name and expr.value == name  # type: ignore[attr-defined]
