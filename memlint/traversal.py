"""The engine's single walk over a file: the shared Context and every rule's `visit_<Node>` /
`leave_<Node>` handlers, called in libcst's visiting order.

It replaces `module.visit(CSTVisitor)`, which rebuilds every node it passes, and it does not descend
into whitespace, comments and punctuation unless some handler asks for those node types.
"""

from __future__ import annotations

import inspect
from typing import Sequence

import libcst as cst
import libcst._nodes.op as _op_nodes
import libcst._nodes.whitespace as _whitespace_nodes

from memlint import tree
from memlint.analysis.context import Context
from memlint.rule import Rule


def _node_classes(module) -> frozenset[type]:
    return frozenset(
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, cst.CSTNode) and value.__module__ == module.__name__
    )


# Whitespace nodes contain only whitespace nodes; operators and brackets contain only whitespace.
WHITESPACE = _node_classes(_whitespace_nodes)
PUNCTUATION = _node_classes(_op_nodes) | {
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace,
}  # fmt: skip

_HANDLED_BY_CLASS: dict[type, frozenset[str]] = {}


def _handled_names(rule_class: type) -> frozenset[str]:
    """Node class names a rule class has a visit_/leave_ handler for."""
    names = _HANDLED_BY_CLASS.get(rule_class)
    if names is None:
        names = frozenset(a[6:] for a in dir(rule_class) if a.startswith(("visit_", "leave_")))
        _HANDLED_BY_CLASS[rule_class] = names
    return names


class Traversal:
    """Walks one module; a rule that raises is recorded in `failures` and dropped for the rest."""

    def __init__(self, ctx: Context, rules: Sequence[Rule]) -> None:
        self.ctx = ctx
        self.rules = list(rules)
        self.failures: list[tuple[Rule, BaseException, cst.CSTNode]] = []
        # node class -> (context visit, rule visits, rule leaves, context leave)
        self._table: dict[type, tuple] = {}
        self._skip = self._skippable()

    def _skippable(self) -> frozenset[type]:
        handled = {cls.__name__ for cls in (*self.ctx.visit_handlers, *self.ctx.leave_handlers)}
        for rule in self.rules:
            handled |= _handled_names(type(rule))
        if any(cls.__name__ in handled for cls in WHITESPACE):
            return frozenset()  # whitespace sits under every operator and bracket: walk it all
        return WHITESPACE | {cls for cls in PUNCTUATION if cls.__name__ not in handled}

    def _entry(self, cls: type) -> tuple:
        name = cls.__name__
        visits = [(rule, getattr(rule, "visit_" + name)) for rule in self.rules if hasattr(rule, "visit_" + name)]
        leaves = [(rule, getattr(rule, "leave_" + name)) for rule in self.rules if hasattr(rule, "leave_" + name)]
        entry = (self.ctx.visit_handlers.get(cls), visits, leaves, self.ctx.leave_handlers.get(cls))
        self._table[cls] = entry
        return entry

    def _call(self, handlers: list, node: cst.CSTNode) -> None:
        for rule, method in handlers:
            try:
                method(node)
            except Exception as error:  # a broken rule must not stop the others: it becomes ML900
                self.failures.append((rule, error, node))
                self.rules.remove(rule)
                self._table.clear()

    def walk(self, node: cst.CSTNode) -> None:
        cls = type(node)
        entry = self._table.get(cls) or self._entry(cls)
        context_visit, visits, leaves, context_leave = entry
        if context_visit is not None:
            context_visit(node)
        if visits:
            self._call(visits, node)
        layout = tree._LAYOUTS.get(cls) or tree._learn(node)
        skip = self._skip
        if layout.conditional:
            for child in tree.children(node):
                if type(child) not in skip:
                    self.walk(child)
        else:
            for field in layout.fields:
                value = getattr(node, field)
                kind = type(value)
                if kind is tuple or kind is list:
                    for child in value:
                        if type(child) not in skip:
                            self.walk(child)
                elif kind not in skip and value is not None and kind is not cst.MaybeSentinel:
                    self.walk(value)
        if leaves:
            # The table may have been rebuilt by a failure during the children: look again.
            current = self._table.get(cls) or self._entry(cls)
            self._call(current[2], node)
        if context_leave is not None:
            context_leave(node)
