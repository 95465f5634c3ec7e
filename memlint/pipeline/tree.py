"""Fast read-only access to libcst trees.

libcst answers `node.children` and drives every `CSTVisitor` through `_visit_and_replace_children`,
which builds (and validates) a fresh copy of each node it passes, even when nothing is replaced.
memlint only reads trees, so this module lists a node's children straight from its fields, in the
exact order libcst visits them, and parses without re-validating nodes the parser itself produced.

Two thirds of a tree are LAYOUT nodes (whitespace, comments, operators, brackets), which never hold a
name, a call or a statement: the `code_` forms leave them out, and the engine's traversal and most
analyses walk only those.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import inspect
import operator
import typing
from typing import Callable, Iterator, Optional, Union

import libcst as cst
import libcst._nodes.op as _op_nodes
import libcst._nodes.whitespace as _whitespace_nodes
from libcst._nodes.base import CSTNode  # the class whose __post_init__ validates every new node

_SCALARS = (str, bytes, int, float, bool)


def _node_classes(module) -> frozenset[type]:
    return frozenset(
        value
        for value in vars(module).values()
        if inspect.isclass(value) and issubclass(value, cst.CSTNode) and value.__module__ == module.__name__
    )


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


# ---------------------------------------------------------------------------- listing children

# Whitespace and comments contain only whitespace; operators and brackets contain only whitespace.
WHITESPACE = _node_classes(_whitespace_nodes)
PUNCTUATION = _node_classes(_op_nodes) | {
    cst.LeftParen, cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket,
    cst.LeftCurlyBrace, cst.RightCurlyBrace,
}  # fmt: skip
# Nodes that only lay code out: no name, call or statement is ever found below one.
LAYOUT = WHITESPACE | PUNCTUATION
_ABSENT = frozenset({type(None), cst.MaybeSentinel})
_NOT_CODE = LAYOUT | _ABSENT
_LAYOUT_BASES = frozenset(base for cls in LAYOUT for base in cls.__mro__)  # classes a LAYOUT node is an instance of

Lister = Callable[[CSTNode], list]
_LISTERS: dict[type, Lister] = {}  # every child, as libcst lists them
_CODE_LISTERS: dict[type, Lister] = {}  # the same without LAYOUT nodes


def _lister(cls: type, node: CSTNode, code_only: bool) -> Lister:
    """The function listing the children of nodes of type `cls`, built once per type from the
    fields libcst visits; the code-only one reads no field that can only hold LAYOUT nodes."""
    layout = _LAYOUTS.get(cls) or _learn(node)
    fields: list[str] = []
    filtered = False  # does some kept sequence field admit LAYOUT elements (`Call.args` does not)?
    hints = _field_types(cls) if code_only else {}
    for name in layout.fields:
        hint = hints.get(name)
        if code_only and hint is not None and _admits_only_layout(hint):
            continue  # `whitespace_after_func`, `lpar`, `comma`: never code
        fields.append(name)
        filtered = filtered or (code_only and (hint is None or _may_admit_layout(hint)))
    plain = _read_fields(tuple(fields), code_only, filtered)
    if layout.conditional:
        conditional = layout.conditional

        def guarded(node: CSTNode) -> list:
            if any(_holds_nodes(getattr(node, name)) for name in conditional):
                every = list(node.children)  # a field this type visits only sometimes: let libcst decide
                return [c for c in every if type(c) not in LAYOUT] if code_only else every
            return plain(node)

        lister = guarded
    else:
        lister = plain
    (_CODE_LISTERS if code_only else _LISTERS)[cls] = lister
    return lister


def no_children(node: CSTNode) -> list:
    """The lister of a type whose nodes have no children (code-only: `Name`, `Integer`, ...)."""
    return []


def _read_fields(fields: tuple[str, ...], code_only: bool, filtered: bool) -> Lister:
    """Children from these fields in this order: a sequence field contributes its elements, a node
    field itself; None, MaybeSentinel and (code only) LAYOUT nodes are left out."""
    skip = _NOT_CODE if code_only else _ABSENT
    if not fields:
        return no_children
    if len(fields) == 1:
        (name,) = fields

        def one_field(node: CSTNode) -> list:
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or kind is list:
                return [c for c in value if type(c) not in LAYOUT] if filtered else list(value)
            return [] if kind in skip else [value]

        return one_field
    read = operator.attrgetter(*fields)

    def several_fields(node: CSTNode) -> list:
        out: list = []
        for value in read(node):
            kind = type(value)
            if kind is tuple or kind is list:
                if filtered:
                    out.extend([c for c in value if type(c) not in LAYOUT])
                else:
                    out.extend(value)
            elif kind not in skip:
                out.append(value)
        return out

    return several_fields


def _field_types(cls: type) -> dict[str, object]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # unresolvable annotations: every field is then filtered at run time
        return {}


def _classes_in(hint: object) -> Optional[list[type]]:
    """The classes a field annotation admits (`Sequence[X]` admits X), or None when unsure."""
    origin = typing.get_origin(hint)
    if origin is Union:
        result: list[type] = []
        for arg in typing.get_args(hint):
            inner = _classes_in(arg)
            if inner is None:
                return None
            result += inner
        return result
    if origin in (collections.abc.Sequence, list, tuple):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return _classes_in(Union[tuple(args)]) if args else None
    if isinstance(hint, type) and origin is None:
        return [hint]
    return None


def _admits_only_layout(hint: object) -> bool:
    """Can a field of this annotation hold only LAYOUT nodes, None or MaybeSentinel?"""
    classes = _classes_in(hint)
    return classes is not None and all(any(base in _NOT_CODE for base in c.__mro__) for c in classes)


def _may_admit_layout(hint: object) -> bool:
    """Might a field of this annotation hold a LAYOUT node (a LAYOUT class, one of its bases)?"""
    classes = _classes_in(hint)
    return classes is None or any(c in _LAYOUT_BASES or any(base in LAYOUT for base in c.__mro__) for c in classes)


def lister(node: cst.CSTNode, code_only: bool) -> Lister:
    """The function `code_children` (or `children`) uses for nodes of this node's type."""
    cls = type(node)
    return (_CODE_LISTERS if code_only else _LISTERS).get(cls) or _lister(cls, node, code_only)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The same list as `node.children` (same nodes, same order), without rebuilding `node`."""
    cls = type(node)
    lister = _LISTERS.get(cls) or _lister(cls, node, False)
    return lister(node)


def code_children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """`children(node)` without the LAYOUT nodes (whitespace, comments, operators, brackets)."""
    cls = type(node)
    lister = _CODE_LISTERS.get(cls) or _lister(cls, node, True)
    return lister(node)


def descendants(node: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """Every node below `node`, in source order (pre-order); nodes of the `skip` types are yielded
    but not entered."""
    return _descendants(node, skip, _LISTERS, False)


def code_descendants(node: cst.CSTNode, skip: tuple[type, ...] = ()) -> Iterator[cst.CSTNode]:
    """`descendants(node, skip)` without the LAYOUT nodes, about three times fewer: for searches
    that look for names, calls or statements, never for comments or operators.  A node of the file
    being analysed (`index_code_nodes`) is read from its pre-order list instead of walked again."""
    index = _INDEX
    if index is not None:
        start = index.positions.get(id(node))
        if start is not None and index.nodes[start] is node:
            return index.below(start, skip)
    return _descendants(node, skip, _CODE_LISTERS, True)


class _PreOrder:
    """The code nodes of one module in pre-order (`code_descendants`' order) and, for each, the
    position just past its subtree: every later search below any of its nodes is a slice of one
    list, not a walk that lists each node's children again (the analysis of a file searches parts
    of it many times: hooks, bindings, evaluation regions, layers)."""

    __slots__ = ("nodes", "ends", "positions")

    def __init__(self, module: cst.Module) -> None:
        nodes: list = []
        ends: list[int] = []
        get = _CODE_LISTERS.get
        stack: list = [module]
        while stack:
            current = stack.pop()
            if type(current) is int:  # every node below the one at this position is listed
                ends[current] = len(nodes)
                continue
            stack.append(len(nodes))
            nodes.append(current)
            ends.append(0)
            cls = type(current)
            below = (get(cls) or _lister(cls, current, True))(current)
            if below:
                below.reverse()
                stack.extend(below)
        self.nodes = nodes
        self.ends = ends
        self.positions = {id(n): i for i, n in enumerate(nodes)}

    def below(self, start: int, skip: tuple[type, ...]) -> Iterator[cst.CSTNode]:
        end = self.ends[start]
        if not skip:
            return iter(self.nodes[start + 1 : end])
        return self._skipping(start + 1, end, skip)

    def _skipping(self, position: int, end: int, skip: tuple[type, ...]) -> Iterator[cst.CSTNode]:
        nodes, ends = self.nodes, self.ends
        exact = _exact_types(skip)
        while position < end:
            current = nodes[position]
            yield current
            if type(current) in exact if exact is not None else isinstance(current, skip):
                position = ends[position]  # yielded, not entered
            else:
                position += 1


# The file being analysed (one at a time per process; a thread analysing another file finds its
# nodes missing here, checked by identity, and walks them as before).
_INDEX: Optional[_PreOrder] = None


def index_code_nodes(module: cst.Module) -> None:
    """Make `code_descendants` of this module's nodes a slice of its pre-order (see `_PreOrder`);
    the previous module's index is dropped."""
    global _INDEX
    _INDEX = None
    _INDEX = _PreOrder(module)


def indexed_subtree(node: cst.CSTNode) -> Optional[tuple[list, list[int], int]]:
    """(the pre-order list of code nodes, each one's end position, `node`'s position) where `node`
    is a node of the indexed file (`index_code_nodes`), else None."""
    index = _INDEX
    if index is None:
        return None
    start = index.positions.get(id(node))
    if start is None or index.nodes[start] is not node:
        return None
    return index.nodes, index.ends, start


_EXACT: dict[tuple, Optional[frozenset]] = {}


def _exact_types(types: tuple[type, ...]) -> Optional[frozenset]:
    """`types` as a set when none of them has subclasses, so that `type(x) in` equals isinstance
    (true of libcst's concrete node classes; isinstance on their ABC bases is slow)."""
    if types not in _EXACT:
        _EXACT[types] = None if any(t.__subclasses__() for t in types) else frozenset(types)
    return _EXACT[types]


def _descendants(node: cst.CSTNode, skip: tuple[type, ...], listers: dict, code_only: bool) -> Iterator[cst.CSTNode]:
    get = listers.get
    cls = type(node)
    stack = (get(cls) or _lister(cls, node, code_only))(node)
    stack.reverse()
    pop, extend = stack.pop, stack.extend
    exact = _exact_types(skip) if skip else None
    while stack:
        current = pop()
        yield current
        cls = type(current)
        if skip and (cls in exact if exact is not None else isinstance(current, skip)):
            continue
        below = (get(cls) or _lister(cls, current, code_only))(current)
        if below:
            below.reverse()
            extend(below)


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
