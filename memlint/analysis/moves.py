"""Values bound to a name and moved to a device by a later statement of the same block.

`z = torch.rand(n, d)` followed, a statement or more later, by `z = z.cuda()` (or by
`if use_gpu: x, z = x.cuda(), z.cuda()`, or by `torch.cat([y, z]).to(d)`, a join moved whole, or
`y = torch.cat((y, z), 1)` then `y = y.to(d)`, a join moved by a later statement) is the
one-statement `torch.rand(n, d).cuda()` written in two: nothing reads the host value but the move.
The binding may be a chain of configured branches (`if args.padding == 0: z = torch.zeros(...)` /
`elif args.padding == 1: z = torch.ones(...)`): each branch's value is moved by the same call.  `later_moves` pairs each such binding's value
with the move call, for a rule that judges the value as if the move were applied to it directly.
"""

from __future__ import annotations

import threading
from typing import Callable, Iterator, Optional, Sequence

import libcst as cst

from memlint.analysis.bindings import target_name_nodes
from memlint.analysis.iteration import accelerator_branch, holds_on_accelerator, runs_whenever_reached
from memlint.analysis.tables import CONCATENATIONS, SHAPE_METHODS, STACKS, TENSOR_CASTS, VARIABLE_CLASSES
from memlint.analysis.walk import code_descendants

_MOVES = ("cuda", "to")
# Calls that join tensors: a part goes to the device with the whole (`_joined_parts`).
_JOINS = CONCATENATIONS | STACKS
# `t.type_as(x)` casts `t` to `x`'s tensor type, and so moves it to `x`'s device too.
_MOVING_CASTS = ("type_as",)

# The argument a call moves to a device when it is no `.cuda()` / `.to()` (a project helper that
# returns its parameter moved: `async_copy_to(x, gpu)`), or the call's receiver itself for a method
# that moves it (a cast the caller knows takes it to a device: `z.type(torch.cuda.FloatTensor)`,
# `z.type(dtype)` with every caller passing `x.type()`), or None.
MovedBy = Callable[[cst.Call], Optional[cst.BaseExpression]]
# How many joins a value is followed through to its move (`z` into `a = torch.cat((x, z))`, `a` into
# `b = torch.cat((a, y))`, ...): each step walks the rest of the block again, so a long chain of
# joins (generated code) would cost the cube of its length; past this depth the walk stays silent.
_JOIN_DEPTH = 3
Resolve = Callable[[cst.BaseExpression], Optional[str]]  # Context.resolve: a callee's qualified name


def later_moves(
    statements: Sequence[cst.BaseStatement], worth: Callable[[cst.BaseExpression], bool], moved_by: Optional[MovedBy] = None,
    resolve: Optional[Resolve] = None,
) -> Iterator[tuple[cst.BaseExpression, cst.Call]]:
    """(bound value, move call) for each `name = value` in `statements` whose value the caller
    cares about (`worth`, a cheap test: the later statements are walked for each such binding) and
    whose name is next read by `name.cuda(...)` / `name.to(...)` in a later statement of the same
    block (or by a call that `moved_by` says moves it: `name = async_copy_to(name, gpu)`; directly,
    or in the body of an `if` that only asks whether the accelerator is used), read
    nowhere between, and not read again after the move unless the move's statement rebinds the
    name to the moved value or returns it (`if y.is_cuda: return z.cuda()` then `return z`)."""
    outermost = getattr(_mentions, "index", None) is None
    if outermost:
        _mentions.index = {}
    try:
        found = list(_later_moves(statements, worth, moved_by, resolve))
    finally:
        if outermost:
            _mentions.index = None
    return iter(found)


def _later_moves(
    statements: Sequence[cst.BaseStatement], worth: Callable[[cst.BaseExpression], bool], moved_by: Optional[MovedBy],
    resolve: Optional[Resolve],
) -> Iterator[tuple[cst.BaseExpression, cst.Call]]:
    for index, statement in enumerate(statements):
        for name, values, configured in _bindings(statement):
            if not any(worth(value) for value in values):
                continue
            if not configured and not all(worth(value) for value in values):
                continue  # a test the configuration does not decide: every branch must bind a value worth it
            yield from _moves_of_binding(statements, index, name, values, worth, moved_by, resolve)


def _moves_of_binding(
    statements: Sequence[cst.BaseStatement], index: int, name: str, values: list[cst.BaseExpression],
    worth: Callable[[cst.BaseExpression], bool], moved_by: Optional[MovedBy], resolve: Optional[Resolve],
    joins: int = 0,
) -> Iterator[tuple[cst.BaseExpression, cst.Call]]:
    """`later_moves` for the one name `statements[index]` binds to `values` (`joins`: how many joins
    led to this name, at most `_JOIN_DEPTH`)."""
    for later_index in range(index + 1, len(statements)):
        later = statements[later_index]
        if _wraps_itself(later, name, resolve):
            continue  # `z = Variable(z, requires_grad=False)`: the same host tensor, still to be moved
        reads = _reads(later, name)
        if not reads:
            if _binds(later, name):
                break  # rebound unread: not this value's move
            continue
        move = _the_move(later, name, reads, moved_by, resolve)
        if move is None and _feeds_joint_move(statements[later_index:], name, moved_by, resolve):
            continue  # `inverse = torch.ones(n, n) - mask` then `mask, inverse = mask.cuda(), inverse.cuda()`
        if move is None:
            joined = _joined_into(later, name, reads, resolve) if joins < _JOIN_DEPTH else None
            if joined is not None and not any(_reads(s, name) for s in statements[later_index + 1 :]):
                # `img = torch.cat((img, noise), 1)` then `img = img.to(device)`: the part goes with the whole
                for _, joint_move in _moves_of_binding(statements, later_index, joined[0], [joined[1]], lambda value: True, moved_by, resolve, joins + 1):
                    yield from ((value, joint_move) for value in values if worth(value))
            break
        if move is not None:
            rebinds = _binds(later, name)
            read_after = any(_reads(s, name) for s in statements[later_index + 1 :])
            if rebinds or not read_after or _returns(later):
                yield from ((value, move) for value in values if worth(value))
        break


def _joined_into(statement: cst.BaseStatement, name: str, reads: list[cst.Name], resolve: Optional[Resolve]) -> Optional[tuple[str, cst.BaseExpression]]:
    """`(other, value)` when the statement is one `other = torch.cat((x, name), 1)` (a join,
    `_joined_parts`, maybe reshaped or cast) whose parts read `name` once, as one of them, and
    nothing else reads it: the joined tensor holds the part's values, and goes where it is moved."""
    single = single_binding(statement)
    if single is None or len(reads) != 1:
        return None
    parts = _joined_parts(through_reshapes(single[1]), resolve)
    if not any(part is reads[0] for part in parts):
        return None
    return single


def _feeds_joint_move(statements: Sequence[cst.BaseStatement], name: str, moved_by: Optional[MovedBy], resolve: Optional[Resolve]) -> bool:
    """Is `statements[0]` a binding of another name computed from `name` on the host (`inverse =
    torch.ones(n, n) - mask`), and the next statement that reads `name` a move of it that moves that
    other name too (`if x.is_cuda: mask, inverse = mask.cuda(), inverse.cuda()`, NRI's
    `set_diag_to_one`)?  Then the host read only feeds a tensor that goes to the device with it."""
    single = single_binding(statements[0])
    if single is None or single[0] == name:
        return False
    other = single[0]
    for index in range(1, len(statements)):
        statement = statements[index]
        reads = _reads(statement, name)
        if not reads:
            if _binds(statement, name) or _binds(statement, other):
                return False
            continue
        other_reads = _reads(statement, other)
        return (
            _the_move(statement, name, reads, moved_by, resolve) is not None
            and bool(other_reads) and _the_move(statement, other, other_reads, moved_by, resolve) is not None
            and _binds(statement, name)
        )  # fmt: skip
    return False


def _wraps_itself(statement: cst.BaseStatement, name: str, resolve: Optional[Resolve]) -> bool:
    """Does the statement rebind `name` to the same tensor, wrapped (`z = Variable(z)`, `z =
    Variable(z, requires_grad=False)`, the legacy autograd wrapper: the data stays where it is),
    reshaped, cast (`z = z.view(-1, 1).long()`) or sliced (`z = z[:, 1:]`), reading it nowhere else?  Then the value bound
    before still goes to whatever moves `name` later (protonets' `target_inds`)."""
    single = single_binding(statement)
    if single is None or single[0] != name:
        return False
    value = single[1]
    if isinstance(value, cst.Call) and resolve is not None and resolve(value.func) in VARIABLE_CLASSES and value.args:
        first = value.args[0]
        if first.keyword is not None or first.star:
            return False
        value = first.value
    if isinstance(value, cst.Subscript) and all(isinstance(e.slice, cst.Slice) for e in value.slice):
        value = value.value  # `t = t[:, 1:]` (retinanet's one-hot target): a view of the same host tensor
    inner = through_reshapes(value)
    return isinstance(inner, cst.Name) and inner.value == name and len(_reads(statement, name)) == 1


def _returns(statement: cst.BaseStatement) -> bool:
    """Does the move's statement leave the function (`return z.cuda()`, or `if x.is_cuda: return
    z.cuda()`)?  Then a later read of the name is on the path where no move ran."""
    if isinstance(statement, cst.If):
        if isinstance(statement.body, cst.SimpleStatementSuite):  # `if y.is_cuda: return z.cuda()` on one line
            return _returns(statement.body)
        body = statement.body.body
        return bool(body) and _returns(body[-1])
    if isinstance(statement, cst.SimpleStatementSuite):
        return any(isinstance(small, cst.Return) for small in statement.body)
    return isinstance(statement, cst.SimpleStatementLine) and any(isinstance(small, cst.Return) for small in statement.body)


def _bindings(statement: cst.BaseStatement) -> list[tuple[str, list[cst.BaseExpression], bool]]:
    """The name a statement binds, the values it may bind it to, and whether the configuration
    picks among them: `z = value`, or a chain of branches that each bind it (`if args.padding == 0:
    z = A` / `elif ...: z = B`), one branch taken per run where the configuration decides the tests
    (`iteration.runs_whenever_reached`); with other tests, a chain that ends in an `else` (`if
    self.scalar_input: z = A` / `else: z = B`: whichever is taken, `z` holds one of the values,
    and the caller asks that of each).  A branch may write numbers into what it bound (`z[:, :, 127]
    = 1`): the tensor still holds nothing but constants.  An unpacking binds each of its names
    (`unpacked_bindings`)."""
    single = single_binding(statement)
    if single is not None:
        return [(single[0], [single[1]], True)]
    if not isinstance(statement, cst.If):
        return [(name, [value], True) for name, value in unpacked_bindings(statement)]
    name: Optional[str] = None
    values: list[cst.BaseExpression] = []
    configured = True
    complete = False
    branch: Optional[cst.CSTNode] = statement
    while branch is not None:
        if isinstance(branch, cst.If) and not runs_whenever_reached(branch.test):
            configured = False
        body = branch.body  # type: ignore[attr-defined]
        if not isinstance(body, cst.IndentedBlock) or not body.body:
            return []
        bound = single_binding(body.body[0])
        if bound is None or (name is not None and bound[0] != name) or not all(_writes_numbers(s, bound[0]) for s in body.body[1:]):
            return []
        name = bound[0]
        values.append(bound[1])
        complete = complete or isinstance(branch, cst.Else)  # every path binds the name
        branch = branch.orelse if isinstance(branch, cst.If) else None
    return [(name, values, configured)] if name is not None and (configured or complete) else []


def unpacked_bindings(statement: cst.BaseStatement) -> list[tuple[str, cst.BaseExpression]]:
    """`(name, value)` for each name of a statement that is one unpacking and nothing else: the
    element of a literal tuple it takes (`xx, yy = torch.arange(w), torch.arange(h)`), or else the
    whole value, of which the name holds one part (`yy, xx = torch.meshgrid(a, b)`: each grid is
    made where `a` and `b` are; `a, b = torch.zeros(2, n)`: each row is a view of the host tensor).
    Names only, no starred target; [] for anything else."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return []
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
        return []
    target = assign.targets[0].target
    if not isinstance(target, (cst.Tuple, cst.List)) or not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
        return []
    names = [e.value.value for e in target.elements]  # type: ignore[attr-defined]
    if len(set(names)) != len(names):
        return []
    value = assign.value
    if isinstance(value, (cst.Tuple, cst.List)):
        if len(value.elements) != len(names) or any(isinstance(e, cst.StarredElement) for e in value.elements):
            return []
        return [(name, element.value) for name, element in zip(names, value.elements)]
    return [(name, value) for name in names]


def _writes_numbers(statement: cst.BaseStatement, name: str) -> bool:
    """`name[...] = 1`: a number literal written into part of the tensor `name`."""
    single = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
    if not isinstance(single, cst.Assign) or len(single.targets) != 1:
        return False
    target = single.targets[0].target
    value = single.value.expression if isinstance(single.value, cst.UnaryOperation) else single.value
    return (
        isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and target.value.value == name
        and isinstance(value, (cst.Integer, cst.Float)) and not any(_reads(element, name) for element in target.slice)
    )  # fmt: skip


def single_binding(statement: cst.BaseStatement) -> Optional[tuple[str, cst.BaseExpression]]:
    """`(name, value)` of a statement that is one `name = value` and nothing else."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    assign = statement.body[0]
    if not isinstance(assign, cst.Assign) or len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name):
        return None
    return assign.targets[0].target.value, assign.value


def _the_move(statement: cst.BaseStatement, name: str, reads: list[cst.Name], moved_by: Optional[MovedBy] = None, resolve: Optional[Resolve] = None):
    """The move call that is the statement's only read of `name`, when the statement runs whenever
    the block does; or, behind a device check, the first read of `name` in the branch a run on the
    accelerator takes (`iteration.accelerator_branch`), when that read is the branch's only one or
    a move that rebinds the name (`if x.is_cuda: out = out.cuda(); kernel(x, out)`, `else:
    kernel_cpu(x, out)`: the other branch is the host's run, where the tensor belongs)."""
    if isinstance(statement, cst.If):
        branch = accelerator_branch(statement)
        if branch is None or _reads(statement.test, name):
            return None
        # With an `else`, only a move that rebinds the name is followed for now: `if use_cuda: return
        # z.cuda()` / `else: return z` is as real, but the helpers written so (seq2seq's `initHidden`)
        # are reached by name through a receiver named like a model (`encoder.initHidden()`), where
        # the project pass cannot yet tell which class's method runs: each class's would be reported.
        rebinding_only = statement.orelse is not None
        # The branch's first statement that reads or binds the name decides: one that binds it
        # without reading it (`out = pinned(n)` before `out = out.cuda()`) moves another value.
        inner = [s for s in branch.body if _reads(s, name) or _binds(s, name)]
        if not inner or not _reads(inner[0], name):
            return None
        if isinstance(branch, cst.SimpleStatementSuite):  # `if use_gpu: z = z.cuda()` on one line
            branch_reads = _reads(branch, name)
            if len(branch_reads) != 1 or (rebinding_only and not _binds(inner[0], name)):
                return None
            return _move_of(inner[0], branch_reads[0], moved_by, resolve)
        rebinds = _binds(inner[0], name)
        if rebinding_only and not rebinds:
            return None
        move = _the_move(inner[0], name, _reads(inner[0], name), moved_by, resolve)
        return move if move is not None and (len(inner) == 1 or rebinds) else None
    if not isinstance(statement, cst.SimpleStatementLine):
        return None
    if len(reads) != 1:
        return _accelerator_arm_move(statement, name, moved_by, resolve)
    return _move_of(statement, reads[0], moved_by, resolve)


def _accelerator_arm_move(statement: cst.SimpleStatementLine, name: str, moved_by: Optional[MovedBy], resolve: Optional[Resolve]):
    """The move of `name = name.cuda() if x.is_cuda else name`: the arm a run on the accelerator
    takes (`iteration.holds_on_accelerator`) moves the name, the other keeps it as it is (the host's
    run, where the tensor belongs); None for any other statement."""
    single = single_binding(statement)
    if single is None or single[0] != name or not isinstance(single[1], cst.IfExp):
        return None
    choice = single[1]
    holds = holds_on_accelerator(choice.test)
    if holds is None or _reads(choice.test, name):
        return None
    arm, kept = (choice.body, choice.orelse) if holds else (choice.orelse, choice.body)
    arm_reads = _reads(arm, name)
    if not (isinstance(kept, cst.Name) and kept.value == name) or len(arm_reads) != 1:
        return None
    return _move_of(arm, arm_reads[0], moved_by, resolve)


def _move_of(statements: cst.CSTNode, read: cst.Name, moved_by: Optional[MovedBy] = None, resolve: Optional[Resolve] = None):
    """The `read.cuda(...)` / `read.to(...)` / `read.type_as(x)` call among `statements`' calls,
    also through reshapes and casts (`read.view(-1, 1).type_as(x)`), or one `moved_by` says moves
    `read` (or moves its receiver, `read` or a join of it, through reshapes), if any (the
    outermost: calls are collected outside in)."""
    for call in _calls(statements):
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in _MOVES + _MOVING_CASTS:
            moved = through_reshapes(_unwrapped(func.value, resolve))
            if moved is read or read in _joined_parts(moved, resolve):
                return call
        if moved_by is not None:
            moved = moved_by(call)
            if moved is read:
                return call
            if moved is not None and isinstance(func, cst.Attribute) and moved is func.value:  # a cast that moves its receiver
                receiver = through_reshapes(_unwrapped(moved, resolve))
                if receiver is read or read in _joined_parts(receiver, resolve):
                    return call
    return None


def _unwrapped(value: cst.BaseExpression, resolve: Optional[Resolve]) -> cst.BaseExpression:
    """What `Variable(t)` wraps (`t = Variable(t).cuda()`: the legacy wrapper keeps the data where
    it is, so the move moves `t`), or `value` itself."""
    if isinstance(value, cst.Call) and resolve is not None and value.args and resolve(value.func) in VARIABLE_CLASSES:
        first = value.args[0]
        if first.keyword is None and not first.star:
            return first.value
    return value


def through_reshapes(receiver: cst.BaseExpression) -> cst.BaseExpression:
    """What `receiver` reshapes or casts (`offset` of `offset.view(-1, 1).long()`), or itself."""
    while isinstance(receiver, cst.Call) and isinstance(receiver.func, cst.Attribute):
        method = receiver.func.attr.value
        if method in SHAPE_METHODS or (method in TENSOR_CASTS and not receiver.args):
            receiver = receiver.func.value
        else:
            break
    return receiver


def _joined_parts(value: cst.BaseExpression, resolve: Optional[Resolve]) -> list[cst.BaseExpression]:
    """The parts of `torch.cat([a, b], dim=1)` or `torch.stack([xs, ys])` (a literal list or tuple;
    `tables.CONCATENATIONS`, `tables.STACKS`, through the file's imports where `resolve` is given):
    each goes to the device with the whole when the joined tensor is moved; [] for anything else."""
    if not isinstance(value, cst.Call) or not value.args:
        return []
    func = value.func
    written = isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and f"{func.value.value}.{func.attr.value}" in _JOINS
    if not (written or (resolve is not None and resolve(func) in _JOINS)):
        return []
    parts = value.args[0].value
    return [element.value for element in parts.elements] if isinstance(parts, (cst.List, cst.Tuple)) else []


class _Collector:
    """What one walk of a node finds for a name: its Name nodes (not the attribute of `obj.name`, nor
    the keyword of `f(name=...)`: no use of the name), whether an assignment target binds it, the
    ids of every Name an assignment target binds (any name), and every call, all in source order."""

    def __init__(self, node: cst.CSTNode, name: str) -> None:
        self.reads: list[cst.Name] = []
        self.binds = False
        self.targets: set[int] = set()
        self.calls: list[cst.Call] = []
        hidden: set[int] = set()  # `attr` of an Attribute, `keyword` of an Arg
        # the file's pre-order index (pipeline/tree.py), not libcst's visitor, which rebuilds every node it passes
        for inner in (node, *code_descendants(node)):
            kind = type(inner)
            if kind is cst.Name:
                if inner.value == name and id(inner) not in hidden:  # type: ignore[attr-defined]
                    self.reads.append(inner)  # type: ignore[arg-type]
            elif kind is cst.Attribute:
                hidden.add(id(inner.attr))  # type: ignore[attr-defined]
            elif kind is cst.Arg:
                if inner.keyword is not None:  # type: ignore[attr-defined]
                    hidden.add(id(inner.keyword))  # type: ignore[attr-defined]
            elif kind is cst.AssignTarget:
                for element in target_name_nodes(inner.target):  # type: ignore[attr-defined]
                    self.targets.add(id(element))
                    if element.value == name:
                        self.binds = True
            elif kind is cst.Call:
                self.calls.append(inner)  # type: ignore[arg-type]


class _Nothing:
    """A `_Collector` of a name that the node does not mention."""

    reads: list[cst.Name] = []
    binds = False
    targets: set[int] = set()
    calls: list[cst.Call] = []


# While `later_moves` runs: id(statement) -> (statement, the names it mentions), so that the walks
# over the rest of a block for each binding (and for each join it is followed through) skip, by a
# set lookup, the statements that do not mention the name: one walk of each statement.
_mentions = threading.local()


def _collect(node: cst.CSTNode, name: str) -> _Collector:
    index = getattr(_mentions, "index", None)
    if index is None or not name:
        return _Collector(node, name)
    known = index.get(id(node))
    if known is None or known[0] is not node:
        known = index[id(node)] = (node, frozenset(inner.value for inner in (node, *code_descendants(node)) if type(inner) is cst.Name))  # type: ignore[attr-defined]
    return _Collector(node, name) if name in known[1] else _Nothing  # type: ignore[return-value]


def _reads(node: cst.CSTNode, name: str) -> list[cst.Name]:
    """The Name nodes `name` in `node` that are not assignment targets (reads, or other bindings
    such as a loop variable or an attribute's base: each counts as a use)."""
    collector = _collect(node, name)
    return [n for n in collector.reads if id(n) not in collector.targets]


def _binds(node: cst.CSTNode, name: str) -> bool:
    return _collect(node, name).binds


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    return _collect(node, "").calls
