"""Layers added to one container one statement at a time, and which layer each one follows.

`layers.append(nn.Conv2d(...))` then `layers.append(nn.ReLU())` (a list later unpacked into
`nn.Sequential(*layers)`), `net.add_module("bn", nn.BatchNorm2d(c))` then `net.add_module("relu",
nn.ReLU())` on a `net = nn.Sequential()` made earlier in the same block, `layers["relu1"] = ...` on an
`OrderedDict()`.  Branches join (YOLOv3's builders): after `if bn: net.add_module("bn", ...)` the last
layer added is the norm or the one before the `if`, and a layer added first in a branch follows the
layers that may come last before the `if`.  A `net = nn.Sequential()` made before a loop (or a
`with` / `try`) is the same container inside it (RelativisticGAN's generator: `main =
nn.Sequential()`, then `while mult > 1:` adding a conv, a norm and a ReLU per turn), unless the
name is bound anywhere in the loop (a later turn may add to another container: `main = Taps()` at
the end of a turn, in an `if`, by a walrus in the loop's test); what was added last before the loop
is not carried in (a turn may follow another).  A name bound in a branch of an `if`, or by any
statement, is no longer the Sequential after it.  Inside a loop, a layer added under a key that is
the same every turn (`add_module("conv", ...)`, `layers["relu"] = ...`, a name) to a container made
before the loop replaces the one of the turn before where it stood, so what follows what is
unknown: no pair is given for that container.  Whether the container really ends in a Sequential
is the asker's question (analysis/sequences.py answers it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst

from memlint.analysis.bindings import bound_targets
from memlint.analysis.sequences import added_layer, empty_sequential_target, key_template
from memlint.analysis.sequential_subclasses import sequential_subclass_constructor
from memlint.analysis.walk import code_descendants

# Compound statements whose blocks a reading of the statements enters, with what was made before
# them (an `if` is read by `_joined_branches`; a nested function or class is a scope of its own).
_ENTERED = (cst.For, cst.While, cst.With, cst.Try, cst.TryStar, cst.Match)
_LOOPS = (cst.For, cst.While)


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
        # The constructor of a class that is an `nn.Sequential` and nothing more adds to `self` as
        # to a Sequential made before (analysis/sequential_subclasses.py).
        made = {"self": None} if sequential_subclass_constructor(ctx, function) else {}
        yield from _runs(function.body.body, function.body, ctx, made, {}, frozenset())


def added_in_module(module: cst.Module, ctx) -> Iterator[AddedAfter]:
    yield from _runs(module.body, module, ctx, {}, {}, frozenset())


def _runs(block, scope: cst.CSTNode, ctx, made: dict, state: dict, replaced: frozenset):
    """Yields every layer added right after another; returns the state at the block's end:
    (method, receiver) -> the layers that may have been added last, for the one receiver added to
    by the last statement.  `replaced`: receivers a loop around adds to under a key the same each
    turn (no pair of theirs is given)."""
    for statement in block:
        if type(statement) is cst.If:
            branch: Optional[cst.CSTNode] = statement
            while type(branch) is cst.If:  # a walrus in a test binds before the branches run
                _forget_rebound(branch.test, made)  # type: ignore[attr-defined]
                branch = branch.orelse  # type: ignore[attr-defined]
            state = yield from _joined_branches(statement, scope, ctx, made, state, replaced)
            _forget_rebound(statement, made)  # bound in a branch: maybe another container after it
            continue
        if type(statement) in _ENTERED:
            # Bound anywhere inside (a loop's next turn sees what the turn before bound last).
            _forget_rebound(statement, made)
            inside = replaced
            if type(statement) in _LOOPS:
                same = _added_under_same_key(statement)
                inside = replaced | (same - _codes_bound(statement)) if same else replaced
            for inner in _inner_blocks(statement):
                yield from _runs(inner, scope, ctx, dict(made), {}, inside)
            state = {}
            continue
        added = added_layer(statement)
        if added is None:
            _forget_rebound(statement, made)
            target = empty_sequential_target(statement, ctx)
            if target is not None:
                made[target[0]] = target[1]
            state = _untouched(state, statement)
            continue
        previous = state.get(added[:2])
        if previous and added[1] not in replaced:
            yield AddedAfter(previous, added[2], added[0], added[1], made, scope)
        state = {added[:2]: (added[2],)}
    return state


def _untouched(state: dict, statement: cst.CSTNode) -> dict:
    """What stays added last after a statement that adds nothing: every receiver's last layers,
    where the statement is bookkeeping that cannot reach the container (TensorMask's `cur_channels =
    cls_channels` between `append(nn.Conv2d(...))` and `append(nn.ReLU())`): assignments to plain
    names alone (or `pass`), with no call anywhere (a call may reach the container through an
    alias) and no mention of the receiver's name (`self` for `self.net`).  Not an augmented
    assignment: `alias += [sig]` extends the very list `alias = layers` names.  Anything else
    forgets them all."""
    if not state or type(statement) is not cst.SimpleStatementLine:
        return {}
    for small in statement.body:  # type: ignore[attr-defined]
        kind = type(small)
        if kind is cst.Pass:
            continue
        if kind is cst.Assign:
            targets = [t.target for t in small.targets]  # type: ignore[attr-defined]
        elif kind is cst.AnnAssign:
            targets = [small.target]  # type: ignore[attr-defined]
        else:
            return {}
        if any(type(t) is not cst.Name for t in targets):
            return {}
    mentioned: set[str] = set()
    for node in code_descendants(statement):
        kind = type(node)
        if kind in (cst.Call, cst.NamedExpr, cst.Lambda, cst.Await, cst.Yield):
            return {}
        if kind is cst.Name:
            mentioned.add(node.value)  # type: ignore[attr-defined]
    return {key: layers for key, layers in state.items() if key[1].partition(".")[0] not in mentioned} or {}


def _joined_branches(statement: cst.If, scope, ctx, made: dict, state: dict, replaced: frozenset):
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
        outcomes.append((yield from _runs(body.body, scope, ctx, dict(made), dict(state), replaced)))
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
    """A name (or `self.<attr>`) bound anywhere in the statement (analysis/bindings.py's `bound_targets`:
    `=`, `+=`, a walrus, a loop's target, `with ... as`, ...) is no longer, or not always, the
    Sequential made before."""
    if made:
        for code in _codes_bound(statement):
            made.pop(code, None)


def _codes_bound(statement: cst.CSTNode) -> set[str]:
    """The names and `self.<attr>` the statement binds anywhere inside it (a container made there
    anew: in a loop, each turn's own)."""
    codes: set[str] = set()
    for target, _ in bound_targets(statement):
        for node in (target, *code_descendants(target)):
            code = "self." + node.attr.value if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self" else node.value if type(node) is cst.Name else None  # type: ignore[attr-defined]
            if code is not None:
                codes.add(code)
    return codes


def _added_under_same_key(loop: cst.CSTNode) -> frozenset:
    """The receivers the loop adds a layer to by `add_module` or `[key] =` under a key that is not
    built from something changing per turn (a literal, a name): where the container outlives a turn
    (the asker leaves out those the loop binds), the next turn replaces that layer in place, and the
    layers added after it in the turn before now follow the new one."""
    found: set[str] = set()
    for node in code_descendants(loop, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.SimpleStatementLine:
            added = added_layer(node)
            if added is not None and added[0] != "append" and not _key_per_turn(node):
                found.add(added[1])
    return frozenset(found)


def _key_per_turn(statement: cst.SimpleStatementLine) -> bool:
    """Is the key of `net.add_module(key, ...)` / `layers[key] = ...` formatted from values (`f"conv{i}"`,
    `"conv%d" % i`, `"conv{}".format(i)`, `"conv" + str(i)`)?  Not a literal, nor a plain name."""
    small = statement.body[0]
    if type(small) is cst.Assign:
        template = key_template(small.targets[0].target)  # type: ignore[arg-type]
        return template is not None and not template.startswith("=")
    key = small.value.args[0].value  # type: ignore[attr-defined]
    if type(key) is cst.FormattedString:
        return any(type(part) is cst.FormattedStringExpression for part in key.parts)  # type: ignore[attr-defined]
    if type(key) is cst.BinaryOperation:
        return not (type(key.left) is cst.SimpleString and type(key.right) is cst.SimpleString)  # type: ignore[attr-defined]
    return type(key) is cst.Call and type(key.func) is cst.Attribute and key.func.attr.value == "format" and bool(key.args)  # type: ignore[attr-defined]
