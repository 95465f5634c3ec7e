"""Layers added to one container one statement at a time, and which layer each one follows.

`layers.append(nn.Conv2d(...))` then `layers.append(nn.ReLU())` (a list later unpacked into
`nn.Sequential(*layers)`), `net.add_module("bn", nn.BatchNorm2d(c))` then `net.add_module("relu",
nn.ReLU())` on a `net = nn.Sequential()` made earlier in the same block, `layers["relu1"] = ...` on an
`OrderedDict()`.  Branches join (YOLOv3's builders): after `if bn: net.add_module("bn", ...)` the last
layer added is the norm or the one before the `if`, and a layer added first in a branch follows the
layers that may come last before the `if`.  A `net = nn.Sequential()` made before a loop (or a
`with` / `try`) is the same container inside it (RelativisticGAN's generator: `main =
nn.Sequential()`, then `while mult > 1:` adding a conv, a norm and a ReLU per turn); what was added
last before the loop is not carried in (a turn may follow another), and an assignment to the name
forgets it.  Whether the container really ends in a Sequential is the
asker's question (analysis/sequences.py answers it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from memlint.analysis.sequences import added_layer, empty_sequential_target
from memlint.analysis.walk import code_descendants

# Compound statements whose blocks a reading of the statements enters, with what was made before
# them (an `if` is read by `_joined_branches`; a nested function or class is a scope of its own).
_ENTERED = (cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.Match)


@dataclass
class AddedAfter:
    """`layer` added by `method` ("append", "add_module", "setitem") to `receiver` (its code) right
    after one of `previous` (each the last added on some path)."""

    previous: tuple[cst.Call, ...]
    layer: cst.Call
    method: str
    receiver: str
    made: dict  # receiver code -> the self attribute it is stored in, for `X = nn.Sequential()` made before
    scope: cst.CSTNode  # the function or module whose statements add them


def added_in_function(function: cst.FunctionDef, ctx) -> Iterator[AddedAfter]:
    if type(function.body) is cst.IndentedBlock:
        yield from _runs(function.body.body, function.body, ctx, {}, {})


def added_in_module(module: cst.Module, ctx) -> Iterator[AddedAfter]:
    yield from _runs(module.body, module, ctx, {}, {})


def _runs(block, scope: cst.CSTNode, ctx, made: dict, state: dict):
    """Yields every layer added right after another; returns the state at the block's end:
    (method, receiver) -> the layers that may have been added last, for the one receiver added to
    by the last statement."""
    for statement in block:
        if type(statement) is cst.If:
            state = yield from _joined_branches(statement, scope, ctx, made, state)
            continue
        if type(statement) in _ENTERED:
            _forget_rebound(statement, made)
            for inner in _inner_blocks(statement):
                yield from _runs(inner, scope, ctx, dict(made), {})
            state = {}
            continue
        added = added_layer(statement)
        if added is None:
            _forget_rebound(statement, made)
            target = empty_sequential_target(statement, ctx)
            if target is not None:
                made[target[0]] = target[1]
            state = {}
            continue
        previous = state.get(added[:2])
        if previous:
            yield AddedAfter(previous, added[2], added[0], added[1], made, scope)
        state = {added[:2]: (added[2],)}
    return state


def _joined_branches(statement: cst.If, scope, ctx, made: dict, state: dict):
    """The state after an `if`: what each branch may leave added last (and, with no `else`,
    what was added last before it); a receiver is known after it only where every path knows it."""
    if any(type(n) is cst.Name and any(n.value == r.partition(".")[0] for _, r in state) for n in code_descendants(statement.test)):
        return {}  # the test itself may change the container
    outcomes: list[dict] = []
    branch: Optional[cst.CSTNode] = statement
    while branch is not None:
        body = branch.body  # type: ignore[attr-defined]
        if type(body) is not cst.IndentedBlock:
            return {}
        outcomes.append((yield from _runs(body.body, scope, ctx, dict(made), dict(state))))
        orelse = branch.orelse if type(branch) is cst.If else None  # type: ignore[attr-defined]
        if orelse is None and type(branch) is cst.If:
            outcomes.append(state)  # no `else`: the path around the branches
        branch = orelse
    joined: dict = {}
    for key in set.intersection(*(set(o) for o in outcomes)):
        joined[key] = tuple(dict.fromkeys(layer for o in outcomes for layer in o[key]))
    return joined


def _inner_blocks(statement: cst.CSTNode) -> Iterator[list]:
    """The statement lists of a loop, `with`, `try` or `match`: its body, `else`, handlers, `finally`, cases."""
    parts = [statement, *getattr(statement, "handlers", ()), *getattr(statement, "cases", ()), getattr(statement, "orelse", None), getattr(statement, "finalbody", None)]
    for part in parts:
        body = getattr(part, "body", None) if part is not None else None
        if type(body) is cst.IndentedBlock:
            yield list(body.body)  # type: ignore[attr-defined]


def _forget_rebound(statement: cst.CSTNode, made: dict) -> None:
    """A name (or `self.<attr>`) bound again, by `=`, `+=`, a loop's target or `with ... as`, is no
    longer the Sequential made before (the binding at the loop's head too: `for net in nets:`)."""
    if not made:
        return
    targets: list[cst.BaseExpression] = []
    if type(statement) is cst.SimpleStatementLine:
        for small in statement.body:  # type: ignore[attr-defined]
            if type(small) is cst.Assign:
                targets.extend(t.target for t in small.targets)
            elif type(small) in (cst.AugAssign, cst.AnnAssign):
                targets.append(small.target)  # type: ignore[attr-defined]
    elif type(statement) is cst.For:
        targets.append(statement.target)  # type: ignore[attr-defined]
    elif type(statement) is cst.With:
        targets.extend(item.asname.name for item in statement.items if item.asname is not None)  # type: ignore[attr-defined]
    for target in targets:
        for node in (target, *code_descendants(target)):
            code = "self." + node.attr.value if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self" else node.value if type(node) is cst.Name else None  # type: ignore[attr-defined]
            if code is not None:
                made.pop(code, None)
