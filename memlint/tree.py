"""Fast read-only access to libcst trees.

libcst answers `node.children` and drives every `CSTVisitor` through `_visit_and_replace_children`,
which builds (and validates) a fresh copy of each node it passes, even when nothing is replaced.
memlint only reads trees, so this module lists a node's children straight from its fields, in the
exact order libcst visits them, and parses without re-validating nodes the parser itself produced.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator, Union

import libcst as cst
from libcst._nodes.base import CSTNode  # the class whose __post_init__ validates every new node

_SCALARS = (str, bytes, int, float, bool)


class _FieldRecorder(cst.CSTVisitor):
    """Notes which fields libcst's own traversal visits, in order, without descending into them."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: list[str] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        return False

    def on_leave(self, original_node: cst.CSTNode) -> None:
        pass

    def on_visit_attribute(self, node: cst.CSTNode, attribute: str) -> None:
        if attribute not in self.fields:
            self.fields.append(attribute)

    def on_leave_attribute(self, original_node: cst.CSTNode, attribute: str) -> None:
        pass


@dataclasses.dataclass(frozen=True)
class _Layout:
    fields: tuple[str, ...]  # visited by libcst, in visiting order
    # Fields libcst did not visit for the node this layout was learnt from but might visit for
    # another node of the type (libcst skips `format_spec` of an f-string part when it is None).
    conditional: tuple[str, ...]


_LAYOUTS: dict[type, _Layout] = {}


def _learn(node: cst.CSTNode) -> _Layout:
    recorder = _FieldRecorder()
    node._visit_and_replace_children(recorder)  # builds one throwaway node, once per node type
    visited = set(recorder.fields)
    conditional = tuple(
        f.name
        for f in dataclasses.fields(node)
        if f.name not in visited and not isinstance(getattr(node, f.name), _SCALARS) and _may_hold_nodes(f)
    )
    layout = _Layout(tuple(recorder.fields), conditional)
    _LAYOUTS[type(node)] = layout
    return layout


def _may_hold_nodes(field: dataclasses.Field) -> bool:
    """False for fields typed as plain values (`Optional[str]`); true when unsure."""
    return isinstance(field.type, str) or "libcst" in repr(field.type)


def _holds_nodes(value: object) -> bool:
    if isinstance(value, (list, tuple)):
        return any(isinstance(item, CSTNode) for item in value)
    return isinstance(value, CSTNode)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The same list as `node.children` (same nodes, same order), without rebuilding `node`."""
    layout = _LAYOUTS.get(type(node)) or _learn(node)
    if layout.conditional and any(_holds_nodes(getattr(node, name)) for name in layout.conditional):
        return list(node.children)  # a field this type visits only sometimes: let libcst decide
    result: list[cst.CSTNode] = []
    for name in layout.fields:
        value = getattr(node, name)
        kind = type(value)
        if kind is tuple or kind is list:
            result.extend(value)
        elif value is not None and kind is not cst.MaybeSentinel:
            result.append(value)
    return result


def descendants(node: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """Every node below `node`, in source order (pre-order); nodes of the `skip` types are yielded
    but not entered."""
    stack = children(node)
    stack.reverse()
    while stack:
        current = stack.pop()
        yield current
        if skip and isinstance(current, skip):
            continue
        below = children(current)
        below.reverse()
        stack.extend(below)


# ---------------------------------------------------------------------------- parsing


def _skip_validation(self: CSTNode) -> None:
    pass


def parse_module(source: Union[str, bytes]) -> cst.Module:
    """`libcst.parse_module` without re-validating each node the parser builds.

    libcst validates every node in `__post_init__`, which is there to catch hand-built trees that
    could not be printed back; a tree the parser built from real source is valid by construction,
    and the check costs about a third of the parse.  Validation is switched off only for the
    duration of the call (the tree is identical: tests/test_tree.py compares them).  Nodes that
    another thread builds during those milliseconds skip validation too, which only loses a
    safety net; memlint itself builds nodes for fixes after parsing, with validation on.
    """
    validate = CSTNode.__dict__["__post_init__"]
    CSTNode.__post_init__ = _skip_validation
    try:
        return cst.parse_module(source)
    finally:
        CSTNode.__post_init__ = validate
