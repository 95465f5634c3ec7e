"""What produced the value a name holds at a statement: the bindings right before it in its block.

`h = self.conv(x)` on the line before is the simple case.  Branches join: after

    if self.pos_enc:
        h = self.embedding_pos_enc(pos_enc)
    else:
        h = self.embedding_h(h)

`h` holds one of the two outputs, and after an `if` with no `else` (or an `elif` chain without
one) it holds what the branch bound or what the statement before the `if` bound.  A branch counts
only when its last statement binds the name (a later `skip = h` or a `break` would end it
otherwise), so the value produced there is the one the name holds when the branch ends.  A loop
right before joins what its turns leave (the body's last mention of the name binds it, and nothing
after that in the body mentions it) with what the statement before the loop bound (no turn).
Where any path reaches the statement without such a binding right before it, the producers are
not known (None): `try`, `with` and anything else end the search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import libcst as cst

from memlint.analysis.iteration import names_in, plain_loop
from memlint.analysis.walk import code_descendants

# `if` inside `if` inside `if`: deeper nesting is rare, and each level walks its branches again.
_MAX_DEPTH = 4
# Code that may run later and read the name's value then (or bind it elsewhere).
_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal)


@dataclass(frozen=True)
class Producers:
    """The values the name may hold, and the statements whose bindings made them (for a caller that
    checks the name is read nowhere else)."""

    values: tuple[cst.BaseExpression, ...]
    statements: tuple[cst.CSTNode, ...]


def producers_before(statements: Sequence[cst.CSTNode], index: int, name: str) -> Optional[Producers]:
    """What `name` may hold just before `statements[index]`, as bound by the statement right before
    it (following `if`/`elif`/`else` branches); None where a path does not end in such a binding."""
    return _before(statements, index, name, 0)


def _before(statements: Sequence[cst.CSTNode], index: int, name: str, depth: int) -> Optional[Producers]:
    if index <= 0 or depth > _MAX_DEPTH:
        return None
    previous = statements[index - 1]
    value = bound_value(previous, name)
    if value is not None:
        return Producers((value,), (previous,))
    if type(previous) in (cst.For, cst.While):
        return _after_loop(statements, index, name, depth)
    if type(previous) is not cst.If:
        return None
    values: list[cst.BaseExpression] = []
    branch: Optional[cst.CSTNode] = previous
    while branch is not None:  # `if`, each `elif`, the `else`
        found = _at_end(branch.body, name, depth + 1)  # type: ignore[attr-defined]
        if found is None:
            return None
        values.extend(found.values)
        orelse = branch.orelse if type(branch) is cst.If else None  # type: ignore[attr-defined]
        if orelse is None and type(branch) is cst.If:  # no `else`: the value from before the `if` flows on
            before = _before(statements, index - 1, name, depth + 1)
            if before is None:
                return None
            return Producers((*values, *before.values), (previous, *before.statements))
        branch = orelse
    return Producers(tuple(values), (previous,))


def _after_loop(statements: Sequence[cst.CSTNode], index: int, name: str, depth: int) -> Optional[Producers]:
    """What `name` holds after the loop `statements[index - 1]`: what the body's last mention of it,
    a binding on a line of the body itself, left on the last turn, or (no turn) what it held before
    the loop (WaveNet's `skip = 0`, then `for ...: ...; skip = s + skip; x = ...`, then
    `F.relu(skip)`).  Each turn ends with the binding: no `break` or `continue` in the body, no
    `else`, no loop header or nested function naming it, and no later line of the body mentioning
    it, so nothing but the name holds the value the last turn bound."""
    loop = statements[index - 1]
    if not plain_loop(loop, name):
        return None
    body = loop.body.body  # type: ignore[attr-defined]
    last = max((i for i, line in enumerate(body) if name in names_in(line)), default=None)
    value = bound_value(body[last], name) if last is not None else None
    if value is None:
        return None
    if any(type(node) in _NESTED_SCOPES and name in names_in(node) for node in code_descendants(loop.body)):  # type: ignore[attr-defined]
        return None
    before = _before(statements, index - 1, name, depth + 1)
    if before is None:
        return None
    return Producers((value, *before.values), (loop, *before.statements))


def _at_end(body: cst.CSTNode, name: str, depth: int) -> Optional[Producers]:
    """What `name` holds when a branch's body ends."""
    if type(body) is cst.IndentedBlock:
        return _before(body.body, len(body.body), name, depth)  # type: ignore[attr-defined]
    if type(body) is cst.SimpleStatementSuite:  # `if c: h = self.a(x)`
        small = body.body  # type: ignore[attr-defined]
        if len(small) == 1:
            value = _assigned(small[0], name)
            if value is not None:
                return Producers((value,), (body,))
    return None


def bound_value(statement: cst.CSTNode, name: str) -> Optional[cst.BaseExpression]:
    """The value a one-statement line binds `name` to (`name = value`), or None."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return None
    return _assigned(statement.body[0], name)  # type: ignore[attr-defined]


def _assigned(small: cst.BaseSmallStatement, name: str) -> Optional[cst.BaseExpression]:
    if (
        type(small) is cst.Assign
        and len(small.targets) == 1  # type: ignore[attr-defined]
        and type(small.targets[0].target) is cst.Name  # type: ignore[attr-defined]
        and small.targets[0].target.value == name  # type: ignore[attr-defined]
    ):
        return small.value  # type: ignore[attr-defined]
    return None
