"""Where does a class bind each attribute of `self`?

`self.logits = self.fc(feats)` in `batch_forward`, `self.logits = self.logits.cpu()` in `to_host`,
`del self.logits` in `clear`: every statement of the class's own methods that binds (assigns, augments,
annotates or deletes) `self.<attr>`, by attribute, with the method it is in.  A rule that takes what
one method leaves in `self.<attr>` for what a caller finds there asks how many bindings there are: with
another one anywhere in the class, the caller may find something else.  Indexed once per class (and
once per loop for the methods it calls), so a rule asking for each statement pays no re-walk.
Syntactic; asked by ML014 (outputs held in `self` attributes, running concatenations into them).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.pipeline.tree import code_descendants
from memlint.analysis.walk import self_attr

_BINDINGS = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Del)
# (the node indexed, its bindings): the node is held so that its id is not reused
_CLASS_INDEX: dict[int, tuple[cst.CSTNode, dict[str, list[str]]]] = {}
_LOOP_INDEX: dict[int, tuple[cst.CSTNode, dict[str, int], frozenset[str]]] = {}
_LIMIT = 4096


def enclosing_class(ctx) -> Optional[cst.ClassDef]:
    """The class whose method the context is in, if any."""
    for frame in reversed(ctx.frames):
        if frame.kind == "class" and type(frame.node) is cst.ClassDef:
            return frame.node
    return None


def class_bindings(cls: cst.ClassDef) -> dict[str, list[str]]:
    """attribute -> the method of each statement of `cls` that binds `self.<attribute>` (one entry
    per statement; nested classes are their own)."""
    known = _CLASS_INDEX.get(id(cls))
    if known is not None and known[0] is cls:
        return known[1]
    found: dict[str, list[str]] = {}
    for statement in getattr(cls.body, "body", ()):
        if type(statement) is not cst.FunctionDef:
            continue
        for node in code_descendants(statement, skip=(cst.ClassDef,)):
            if type(node) in _BINDINGS:
                for attribute in _bound_attributes(node):
                    found.setdefault(attribute, []).append(statement.name.value)
    _remember(_CLASS_INDEX, cls, (cls, found))
    return found


def loop_bindings(loop: cst.CSTNode) -> tuple[dict[str, int], frozenset[str]]:
    """(attribute -> how many statements of the loop's body bind `self.<attribute>`, the methods of
    `self` the body calls)."""
    known = _LOOP_INDEX.get(id(loop))
    if known is not None and known[0] is loop:
        return known[1], known[2]
    counts: dict[str, int] = {}
    called: set[str] = set()
    for node in code_descendants(loop.body):  # type: ignore[attr-defined]
        kind = type(node)
        if kind in _BINDINGS:
            for attribute in _bound_attributes(node):
                counts[attribute] = counts.get(attribute, 0) + 1
        elif kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and self_attr(func) is not None:
                called.add(func.attr.value)
    frozen = frozenset(called)
    _remember(_LOOP_INDEX, loop, (loop, counts, frozen))
    return counts, frozen


def _bound_attributes(statement: cst.CSTNode) -> set[str]:
    """The attributes of `self` one binding statement binds (`self.a, self.b = ...` binds both)."""
    if type(statement) is cst.Assign:
        targets = [t.target for t in statement.targets]  # type: ignore[attr-defined]
    elif type(statement) is cst.Del:
        targets = [statement.target]  # type: ignore[attr-defined]
    else:
        targets = [statement.target]  # type: ignore[attr-defined]
    found: set[str] = set()
    while targets:
        target = targets.pop()
        if type(target) in (cst.Tuple, cst.List):
            targets.extend(e.value for e in target.elements)  # type: ignore[attr-defined]
        elif type(target) is cst.StarredElement:
            targets.append(target.value)  # type: ignore[attr-defined]
        elif (attribute := self_attr(target)) is not None:
            found.add(attribute)
    return found


def _remember(index: dict, node: cst.CSTNode, entry: tuple) -> None:
    if len(index) >= _LIMIT:
        index.clear()
    index[id(node)] = entry
