"""Layers a class keeps in a plain dict: `self.convs[key](x)` runs one of them.

    self.convs = OrderedDict()
    self.convs["squeeze"] = nn.Conv2d(c, 256, 1)
    self.convs[("pose", 0)] = nn.Conv2d(256, 256, 3, 1, 1)
    self.net = nn.ModuleList(list(self.convs.values()))   # registers them

An attribute bound once, in the constructor, to an empty `OrderedDict()`, `{}` or `nn.ModuleDict()`,
whose entries the constructor sets to layers of `torch.nn` classes, is a dict of layers in the sense
of an `nn.ModuleDict`: calling an entry runs one of those layers (a missing key raises; it never
returns another value).  Known only where every `.<attribute>` reference of the file that may be
this class's is one of: that binding, an entry set in the constructor to such a layer, an entry
called (`<x>.<attribute>[key](...)`), or its `.values()` / `.keys()` read.  Anything else (an
entry set elsewhere or to something else, `update`, `pop`, `del`, the dict handed on, an entry's
attribute) leaves it unknown, and so does any hook in the file (the layers may be hooked under the
name of another container that shares them), and so does a file that relates classes in ways
their plain-named bases do not show (`Base = Decoder` then `class Lite(Base)`: any class's
`self.<attribute>` may be this one's) or names `_modules`, `__dict__`, `__setattr__` (an entry may be
replaced unseen), as for the layers of a ModuleList (module_changes).  ML003 asks it through class_layers: a fresh layer
output an activation may overwrite.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.initialisers import bound_around, built_layer
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.module_changes import module_changes
from memlint.analysis.walk import code_descendants, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Reading these of the dict hands out its keys or its layers, changing nothing in it.
_READS = frozenset({"values", "keys"})


def dict_layer_classes(ctx: "Context", class_node: cst.ClassDef, init: Optional[cst.FunctionDef]) -> dict[str, frozenset[str]]:
    """attribute -> the `torch.nn` classes of the layers in `self.<attribute>`, for each plain dict
    of layers of the class (see the module's docstring); {} where there is none."""
    if init is None:
        return {}
    candidates = _empty_dicts(ctx, init)
    if not candidates:
        return {}
    changes = module_changes(ctx)
    if changes.hooked_unknown or changes.hooked_names or changes.relations_unknown or changes.rebinds_unseen:
        return {}
    class_name = class_node.name.value
    related = changes.related(class_name)
    found: dict[str, frozenset[str]] = {}
    for attribute in candidates:
        if not changes.bound_once(attribute, class_name):
            continue
        classes = _entry_classes(ctx, init, attribute)
        if not classes:
            continue
        references, reads = _references(_reference_counts(ctx), related, attribute)
        if references == 1 + _entry_count(init, attribute) + reads:
            found[attribute] = frozenset(classes)
    return found


def _empty_dicts(ctx: "Context", init: cst.FunctionDef) -> list[str]:
    """The attributes the constructor binds to an empty dict (a statement of its own body)."""
    found = []
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Assign or len(node.targets) != 1:  # type: ignore[attr-defined]
            continue
        attribute = self_attr(node.targets[0].target)  # type: ignore[attr-defined]
        if attribute is not None and _is_empty_dict(ctx, node.value):  # type: ignore[attr-defined]
            found.append(attribute)
    return found


def _is_empty_dict(ctx: "Context", value: cst.BaseExpression) -> bool:
    if type(value) is cst.Dict:
        return not value.elements  # type: ignore[attr-defined]
    if type(value) is not cst.Call or value.args:  # type: ignore[attr-defined]
        return False
    func = value.func  # type: ignore[attr-defined]
    return ctx.resolve(func) == "collections.OrderedDict" or (torch_nn_name(ctx, func) == "ModuleDict" and ctx.resolve(func) is not None)


def _entries(init: cst.FunctionDef, attribute: str):
    """The constructor's `self.<attribute>[key] = value` statements' values."""
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Assign and len(node.targets) == 1:  # type: ignore[attr-defined]
            target = node.targets[0].target  # type: ignore[attr-defined]
            if _single_key(target) and self_attr(target.value) == attribute:  # type: ignore[attr-defined]
                yield node.value  # type: ignore[attr-defined]


def _entry_count(init: cst.FunctionDef, attribute: str) -> int:
    return sum(1 for _ in _entries(init, attribute))


def _entry_classes(ctx: "Context", init: cst.FunctionDef, attribute: str) -> Optional[set[str]]:
    """The classes of the layers the constructor's entries are; None where one may be anything else."""
    classes: set[str] = set()
    for value in _entries(init, attribute):
        if type(value) is not cst.Call:
            return None
        layer = built_layer(ctx, value, [init])  # type: ignore[arg-type]
        if type(layer.func) is cst.Name and bound_around(ctx, layer.func.value, [init]):
            return None  # (a parameter of the constructor named like a torch class is not that class)
        kind = torch_nn_name(ctx, layer.func)
        if kind is None or ctx.resolve(layer.func) is None:
            return None
        classes.add(kind)
    return classes


def _references(counts: "_ReferenceCounts", related: set[str], attribute: str) -> tuple[int, int]:
    """How many `.<attribute>` references of the file may name this class's dict (all but
    `self.<attribute>` in the methods of a class unrelated to it), and how many of those are entry
    calls or `.values()` / `.keys()` reads in the methods of the related classes."""
    references = counts.not_self.get(attribute, 0)
    reads = 0
    for class_name in related:
        references += counts.self_in.get(class_name, {}).get(attribute, 0)
        reads += counts.reads_in.get(class_name, {}).get(attribute, 0)
    return references, reads


class _ReferenceCounts:
    """The file's `.<attribute>` references, counted for every attribute in one walk (asking per
    candidate dict walked the file once per candidate: quadratic in large files).  `not_self`: the
    references that count whichever class asks (outside classes, or not through `self`);
    `self_in[class][attribute]`: the `self.<attribute>` ones in that top-level class's methods
    (they count only for the classes related to it); `reads_in[class][attribute]`: entry calls and
    `.values()` / `.keys()` reads there."""

    __slots__ = ("not_self", "self_in", "reads_in")

    def __init__(self) -> None:
        self.not_self: dict[str, int] = {}
        self.self_in: dict[str, dict[str, int]] = {}
        self.reads_in: dict[str, dict[str, int]] = {}


def _reference_counts(ctx: "Context") -> _ReferenceCounts:
    return ctx.memo("layer-dict-references", lambda: _count_references(ctx.module))  # type: ignore[return-value]


def _count_references(module: cst.Module) -> _ReferenceCounts:
    counts = _ReferenceCounts()
    not_self = counts.not_self
    for statement in module.body:
        class_name = statement.name.value if type(statement) is cst.ClassDef else None  # type: ignore[attr-defined]
        own_self = counts.self_in.setdefault(class_name, {}) if class_name is not None else not_self
        reads = counts.reads_in.setdefault(class_name, {}) if class_name is not None else None
        for node in code_descendants(statement):
            kind = type(node)
            if kind is cst.Attribute:
                name = node.attr.value  # type: ignore[attr-defined]
                value = node.value  # type: ignore[attr-defined]
                target = own_self if type(value) is cst.Name and value.value == "self" else not_self
                target[name] = target.get(name, 0) + 1
            elif reads is not None and kind is cst.Call:
                func = node.func  # type: ignore[attr-defined]
                if type(func) is cst.Subscript and _single_key(func) and type(func.value) is cst.Attribute:  # type: ignore[attr-defined]
                    name = func.value.attr.value  # type: ignore[attr-defined]
                elif type(func) is cst.Attribute and func.attr.value in _READS and not node.args and type(func.value) is cst.Attribute:  # type: ignore[attr-defined]
                    name = func.value.attr.value  # type: ignore[attr-defined]
                else:
                    continue
                reads[name] = reads.get(name, 0) + 1
    return counts


def _single_key(expr: cst.BaseExpression) -> bool:
    if type(expr) is not cst.Subscript or len(expr.slice) != 1:  # type: ignore[attr-defined]
        return False
    index = expr.slice[0].slice  # type: ignore[attr-defined]
    return type(index) is cst.Index and index.star is None  # type: ignore[attr-defined]


def _named(expr: cst.BaseExpression, attribute: str) -> bool:
    return type(expr) is cst.Attribute and expr.attr.value == attribute  # type: ignore[attr-defined]
