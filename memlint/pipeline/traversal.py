"""The engine's single walk over a file: the shared Context and every rule's `visit_<Node>` /
`leave_<Node>` handlers, called in libcst's visiting order.

It replaces `module.visit(CSTVisitor)`, which rebuilds every node it passes, and it does not descend
into whitespace, comments and punctuation unless some handler asks for those node types.
"""

from __future__ import annotations

from typing import Callable, Sequence

import libcst as cst

from memlint.analysis.context import Context
from memlint.pipeline import tree
from memlint.rule import Rule

# Whitespace nodes contain only whitespace nodes; operators and brackets contain only whitespace.
WHITESPACE = tree.WHITESPACE
PUNCTUATION = tree.PUNCTUATION

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
        # node class -> (context visit, rule visits, rule leaves, context leave, children to walk)
        self._table: dict[type, tuple] = {}
        self._skip = self._skippable()
        self._code_only = self._skip == tree.LAYOUT  # the usual case: walk what code_children lists

    def _skippable(self) -> frozenset[type]:
        handled = {cls.__name__ for cls in (*self.ctx.visit_handlers, *self.ctx.leave_handlers)}
        for rule in self.rules:
            handled |= _handled_names(type(rule))
        if any(cls.__name__ in handled for cls in WHITESPACE):
            return frozenset()  # whitespace sits under every operator and bracket: walk it all
        return WHITESPACE | {cls for cls in PUNCTUATION if cls.__name__ not in handled}

    def _entry(self, cls: type, node: cst.CSTNode) -> tuple:
        name = cls.__name__
        visits = [(rule, getattr(rule, "visit_" + name)) for rule in self.rules if hasattr(rule, "visit_" + name)]
        leaves = [(rule, getattr(rule, "leave_" + name)) for rule in self.rules if hasattr(rule, "leave_" + name)]
        entry = (self.ctx.visit_handlers.get(cls), visits, leaves, self.ctx.leave_handlers.get(cls), self._lister(node))
        self._table[cls] = entry
        return entry

    def _lister(self, node: cst.CSTNode) -> Callable[[cst.CSTNode], list]:
        if self._code_only:
            return tree.lister(node, code_only=True)
        every, skip = tree.lister(node, code_only=False), self._skip
        if not skip:
            return every
        return lambda current: [child for child in every(current) if type(child) not in skip]

    def _drop(self, rule: Rule, error: Exception, node: cst.CSTNode) -> None:
        """A broken rule must not stop the others: it becomes ML900 and sees no more nodes."""
        self.failures.append((rule, error, node))
        self.rules.remove(rule)
        self._table.clear()

    def walk(self, node: cst.CSTNode) -> None:
        # The hottest loop of a check, written as a closure over locals (no attribute lookups per
        # node) with the handler calls inlined (a try block costs nothing in CPython 3.11 until
        # something raises).  `table` stays the same dict when a failure clears it.
        table, entry_for, drop, leaf = self._table, self._entry, self._drop, tree.no_children

        def visit(node: cst.CSTNode) -> None:
            cls = type(node)
            context_visit, visits, leaves, context_leave, listed = table.get(cls) or entry_for(cls, node)
            if context_visit is not None:
                context_visit(node)
            for rule, method in visits:
                try:
                    method(node)
                except Exception as error:
                    drop(rule, error, node)
            if listed is not leaf:
                for child in listed(node):
                    visit(child)
            if leaves:
                # The table may have been rebuilt by a failure during the children: look again.
                for rule, method in (table.get(cls) or entry_for(cls, node))[2]:
                    try:
                        method(node)
                    except Exception as error:
                        drop(rule, error, node)
            if context_leave is not None:
                context_leave(node)

        indexed = tree.indexed_subtree(node) if self._code_only else None
        if indexed is None:
            visit(node)
            return
        # The file's pre-order list of code nodes (tree.index_code_nodes, what code_children lists, in
        # the same order): one loop over it, each node left once the position past its subtree is
        # reached, instead of listing every node's children again for a recursive walk.
        nodes, ends, start = indexed
        open_nodes: list[tuple[int, cst.CSTNode, type, object, bool]] = []  # (end, node, class, context leave, has rule leaves)

        def leave(current: cst.CSTNode, cls: type, context_leave, has_leaves: bool) -> None:
            if has_leaves:
                # The table may have been rebuilt by a failure during the children: look again.
                for rule, method in (table.get(cls) or entry_for(cls, current))[2]:
                    try:
                        method(current)
                    except Exception as error:
                        drop(rule, error, current)
            if context_leave is not None:
                context_leave(current)

        for position in range(start, ends[start]):
            while open_nodes and open_nodes[-1][0] <= position:
                leave(*open_nodes.pop()[1:])
            current = nodes[position]
            cls = type(current)
            context_visit, visits, leaves, context_leave, _ = table.get(cls) or entry_for(cls, current)
            if context_visit is not None:
                context_visit(current)
            for rule, method in visits:
                try:
                    method(current)
                except Exception as error:
                    drop(rule, error, current)
            open_nodes.append((ends[position], current, cls, context_leave, bool(leaves)))
        while open_nodes:
            leave(*open_nodes.pop()[1:])
