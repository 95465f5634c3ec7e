"""What a list of layers may end with where a statement extends it: the element each path leaves last.

A generator built in a loop (MelGAN's):

    model = [nn.ReflectionPad1d(3), WNConv1d(c_in, c, 7)]
    for r in ratios:
        model += [nn.LeakyReLU(0.2), WNConvTranspose1d(c, c // 2, 2 * r, stride=r)]
        for j in range(n_residual):
            model += [ResnetBlock(c // 2)]
    model += [nn.LeakyReLU(0.2), nn.ReflectionPad1d(3), WNConv1d(c, 1, 7)]
    self.model = nn.Sequential(*model)

The first `nn.LeakyReLU` of each `+=` follows the last element of the list at that point: on the
first turn the `WNConv1d` of the first display, on later ones a `ResnetBlock` or (no residual turn)
the `WNConvTranspose1d`.  The last `+=` follows any of those.  Which layer an element follows
across statements is what a rule about adjacent layers asks (ML003).

Evidence: the statements that bind or extend the list, read in order.  `name = [a, b]` leaves `b`
last (`[]` leaves it empty); `name += [a, b]`, `name.extend([a, b])` and `name.append(b)` leave `b`;
branches of an `if` join (with no `else`, the path around them too); a loop joins the state before
it with the state its body leaves, to a fixed point, and may run no turn.  Any other mention of the
name (a rebinding to something else, `name += other`, a `try`, a loop with `break`, `continue` or
`else`, a nested function, an `if` test or loop header naming it) makes the tail unknown; only
`nn.Sequential(*name)` and `len(name)` read it without changing it.  A list that may be empty at a
display (`layers = []`, a loop that may not run) has no known predecessor there: the element may be
the Sequential's first, on the caller's tensor.  So has a name the function has not bound yet (a
parameter, a global): a caller may pass `[]`.
"""

from __future__ import annotations

from typing import Optional, Sequence

import libcst as cst

from memlint.analysis.iteration import names_in, plain_loop
from memlint.analysis.walk import code_descendants

# The tail of a list that may hold nothing yet: its next element may come first.
EMPTY = "empty"
# A state: the elements that may be last (and EMPTY), or None where that is not known.
_State = Optional[frozenset]
# Loops nested deeper than this are not followed (each level runs its body to a fixed point).
_MAX_DEPTH = 4


def display_predecessors(function: cst.FunctionDef, name: str) -> dict[int, tuple[cst.BaseExpression, ...]]:
    """For each list display that extends `name` in the function (`name += [...]`,
    `name.extend([...])`), keyed by the display's id: the elements the list may end with just before
    it, where those are known and the list cannot be empty there."""
    flow = _Flow(name)
    if type(function.body) is not cst.IndentedBlock:
        return {}
    # Unknown at the start: a parameter, a global or a closure's list may already end with anything,
    # or hold nothing (a caller's `[]`), until the function binds the name to a display.
    flow.block(function.body.body, None, 0)  # type: ignore[attr-defined]
    found: dict[int, tuple[cst.BaseExpression, ...]] = {}
    for key, state in flow.before.items():
        if state and EMPTY not in state:
            found[key] = tuple(flow.elements[i] for i in sorted(state))  # source order of the elements' ids' first sight
    return found


class _Flow:
    """The forward reading of one function for one list name."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.before: dict[int, _State] = {}  # id(display) -> the state just before its statement
        self.elements: dict[int, cst.BaseExpression] = {}  # position of first sight -> element
        self._positions: dict[int, int] = {}  # id(element) -> that position

    def _tail(self, element: cst.BaseExpression) -> frozenset:
        key = id(element)
        if key not in self._positions:
            self._positions[key] = len(self._positions)
            self.elements[self._positions[key]] = element
        return frozenset({self._positions[key]})

    def block(self, statements: Sequence[cst.CSTNode], state: _State, depth: int) -> _State:
        for statement in statements:
            state = self.statement(statement, state, depth)
        return state

    def statement(self, statement: cst.CSTNode, state: _State, depth: int) -> _State:
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            for small in statement.body:  # type: ignore[attr-defined]
                state = self.small(small, state)
            return state
        if not self._mentions(statement):
            return state
        if kind is cst.If:
            return self._if(statement, state, depth)  # type: ignore[arg-type]
        if kind in (cst.For, cst.While):
            return self._loop(statement, state, depth)
        if kind is cst.With and type(statement.body) is cst.IndentedBlock:  # type: ignore[attr-defined]
            if any(self._mentions(item) for item in statement.items):  # type: ignore[attr-defined]
                return None
            return self.block(statement.body.body, state, depth)  # type: ignore[attr-defined]
        return None  # `try`, a nested function or class, a `match`: not followed

    def small(self, small: cst.BaseSmallStatement, state: _State) -> _State:
        name = self.name
        kind = type(small)
        if kind is cst.Assign and len(small.targets) == 1 and _is_name(small.targets[0].target, name):  # type: ignore[attr-defined]
            if self._mentions(small.value):  # type: ignore[attr-defined]
                return None
            display = _plain_display(small.value)  # type: ignore[attr-defined]
            if display is None:
                return None
            return self._tail(display[-1]) if display else frozenset({EMPTY})
        if kind is cst.AugAssign and _is_name(small.target, name):  # type: ignore[attr-defined]
            if type(small.operator) is not cst.AddAssign:  # type: ignore[attr-defined]
                return None
            return self._extended(small.value, state)  # type: ignore[attr-defined]
        if kind is cst.Expr and type(small.value) is cst.Call:  # type: ignore[attr-defined]
            call = small.value  # type: ignore[attr-defined]
            func = call.func
            if type(func) is cst.Attribute and _is_name(func.value, name) and len(call.args) == 1 and not call.args[0].keyword and not call.args[0].star:
                argument = call.args[0].value
                if self._mentions(argument):
                    return None
                if func.attr.value == "append":
                    return self._tail(argument)
                if func.attr.value == "extend":
                    return self._extended(argument, state)
                return None
        if not self._mentions(small):
            return state
        return state if self._only_read(small) else None

    def _extended(self, value: cst.BaseExpression, state: _State) -> _State:
        """`name += value` / `name.extend(value)`: the display's last element, or the state before
        for an empty display; a display's predecessors are the state before it."""
        display = _plain_display(value)
        if display is None or self._mentions(value):
            return None
        self.before[id(value)] = state
        return self._tail(display[-1]) if display else state

    def _if(self, statement: cst.If, state: _State, depth: int) -> _State:
        if self._mentions(statement.test):
            return None
        outcomes: list[_State] = []
        branch: Optional[cst.CSTNode] = statement
        while branch is not None:
            body = branch.body  # type: ignore[attr-defined]
            if type(body) is not cst.IndentedBlock:
                return None
            outcomes.append(self.block(body.body, state, depth))
            if type(branch) is cst.If:
                orelse = branch.orelse  # type: ignore[attr-defined]
                if orelse is None:
                    outcomes.append(state)  # no `else`: the path around the branches
                else:
                    if type(orelse) is cst.If and self._mentions(orelse.test):
                        return None
                branch = orelse
            else:
                branch = None
        return _join(*outcomes)

    def _loop(self, statement: cst.CSTNode, state: _State, depth: int) -> _State:
        """A loop may run no turn, or any number: its body starts from the state before it or from
        the state its body leaves, until that no longer grows."""
        if depth >= _MAX_DEPTH or not plain_loop(statement, self.name):
            return None
        # Twice is enough: the first pass starts from the state before the loop, the second from
        # that joined with every tail the body can leave (a turn adds no element the body does not
        # name, and each display's `before` only grows).  The second pass records each display's
        # final `before`.
        start = _join(state, self.block(statement.body.body, state, depth + 1))  # type: ignore[attr-defined]
        return _join(state, self.block(statement.body.body, start, depth + 1))  # type: ignore[attr-defined]

    def _only_read(self, small: cst.CSTNode) -> bool:
        """Does every mention of the name in `small` read it without changing or keeping it:
        `nn.Sequential(*name)` (whether that is torch's is the asker's question) or `len(name)`?"""
        mentions = readers = 0
        for node in code_descendants(small):
            kind = type(node)
            if kind is cst.Name and node.value == self.name:  # type: ignore[attr-defined]
                mentions += 1
            elif kind is cst.Call:
                for argument in node.args:  # type: ignore[attr-defined]
                    if _is_name(argument.value, self.name) and (
                        argument.star == "*" or (type(node.func) is cst.Name and node.func.value == "len")  # type: ignore[attr-defined]
                    ):
                        readers += 1
        return mentions == readers

    def _mentions(self, node: cst.CSTNode) -> bool:
        return self.name in names_in(node)


def _join(*states: _State) -> _State:
    if any(state is None for state in states):
        return None
    return frozenset().union(*states)  # type: ignore[arg-type]


def _plain_display(value: cst.BaseExpression) -> Optional[list[cst.BaseExpression]]:
    """The elements of a list or tuple display with no starred element, in order; None otherwise."""
    if type(value) not in (cst.List, cst.Tuple):
        return None
    elements = value.elements  # type: ignore[attr-defined]
    if not all(type(e) is cst.Element for e in elements):
        return None
    return [e.value for e in elements]


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return type(node) is cst.Name and node.value == name  # type: ignore[attr-defined]
