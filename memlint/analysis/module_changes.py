"""What in a file can change a module after its constructor built it, or see what its layers output:
attributes bound more than once (`self.fc = nn.Linear(4, 4)`, then `self.fc = nn.Identity()` in a
branch, or `model.fc = nn.Identity()` elsewhere), containers whose elements are replaced
(`features[0] = ...`, `del features[0]`, `features.insert(...)`), and hooks that see a layer's input
or output (`register_forward_hook`, a full backward hook, a feature extractor).

A rule that trusts "this attribute is the layer the constructor built" (ML003's `inplace=True` on a
fresh layer output) asks here first.  It is by name, and errs towards "may change": `self.fc` is
trusted in a class when the class and its subclasses in the file bind it once, and nothing else in
the file binds an attribute `fc` (`model.fc = ...`, `setattr(m, "fc", ...)`, `self.fc = ...` in a
function outside a class).  Code outside the file (another file replacing `model.fc`, hooking it)
is not seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Registrations of code that sees a module's input or output (or wraps the output, as full backward
# hooks do, which then refuse an in-place change of it), and tools that return intermediate outputs.
HOOK_REGISTRATIONS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_backward_hook", "register_module_forward_hook",
     "register_module_forward_pre_hook", "register_module_full_backward_hook",
     "register_module_full_backward_pre_hook", "register_module_backward_hook",
     "create_feature_extractor", "IntermediateLayerGetter"}
)  # fmt: skip
# Methods of nn.Sequential / nn.ModuleList / nn.ModuleDict that replace or remove elements.
_ELEMENT_CHANGES = frozenset({"insert", "pop", "__setitem__", "__delitem__"})
# Calls that bind an attribute by a name given as a string (a buffer or parameter cannot take the
# name of a submodule: torch refuses it).
_NAMED_BINDINGS = {"setattr": 1, "add_module": 0, "register_module": 0}
ANY = "*"  # an attribute bound by a name that is not a literal: every attribute may be


@dataclass(frozen=True)
class ModuleChanges:
    bindings: dict  # attribute name -> places binding it other than `self.<name>` in a class (ANY: a name unknown)
    own: dict  # class name -> attribute name -> how many `self.<name> = ...` the class binds
    subclasses: dict  # class name -> the classes of the file derived from it (by name, transitively)
    changed_elements: frozenset[str]  # last names of containers whose elements are replaced or removed
    hooked: bool  # the file registers a hook or extracts intermediate outputs

    def bound_once(self, attribute: str, class_name: str | None) -> bool:
        """Is `self.<attribute>` of the class bound in exactly one place (its constructor's), with
        no other binding of that name in the file, on another object or in a subclass?"""
        if ANY in self.bindings or self.bindings.get(attribute, 0) or class_name is None:
            return False
        classes = [class_name, *self.subclasses.get(class_name, ())]
        return sum(self.own.get(c, {}).get(attribute, 0) for c in classes) == 1

    def elements_changed(self, name: str) -> bool:
        return name in self.changed_elements or ANY in self.changed_elements


def module_changes(ctx: "Context") -> ModuleChanges:
    return ctx.memo("module-changes", lambda: _collect(ctx.module))  # type: ignore[return-value]


def _collect(module: cst.Module) -> ModuleChanges:
    bindings: dict[str, int] = {}
    changed: set[str] = set()
    hooked = False
    own, bases = _class_bindings(module)

    def bind(target: cst.BaseExpression) -> None:
        if type(target) is cst.Attribute:
            name = target.attr.value
            bindings[name] = bindings.get(name, 0) + 1
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:  # type: ignore[attr-defined]
                bind(element.value)
        elif type(target) is cst.StarredElement:
            bind(target.value)  # type: ignore[attr-defined]
        elif type(target) is cst.Subscript:
            changed.add(_last_name(target.value) or ANY)  # type: ignore[attr-defined]

    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.AssignTarget:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind in (cst.AugAssign, cst.AnnAssign):
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.For:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.WithItem and node.asname is not None:  # type: ignore[attr-defined]
            bind(node.asname.name)  # type: ignore[attr-defined]
        elif kind is cst.Del:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            called = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
            if called in HOOK_REGISTRATIONS:
                hooked = True
            elif called in _ELEMENT_CHANGES and type(func) is cst.Attribute:
                changed.add(_last_name(func.value) or ANY)
            elif called in _NAMED_BINDINGS:
                position = _NAMED_BINDINGS[called]
                args = node.args  # type: ignore[attr-defined]
                named = args[position].value if len(args) > position and not args[position].keyword else None
                if type(named) is cst.SimpleString and isinstance(named.evaluated_value, str):  # type: ignore[union-attr]
                    key = named.evaluated_value  # type: ignore[union-attr]
                    bindings[key] = bindings.get(key, 0) + 1
                elif called == "setattr" or (len(args) > position and position == 0):
                    bindings[ANY] = 1
    # `self.<name>` bound inside classes was counted above too: what is left is bound elsewhere.
    for counts in own.values():
        for name, count in counts.items():
            bindings[name] -= count
            if not bindings[name]:
                del bindings[name]
    return ModuleChanges(bindings, own, _subclasses(bases), frozenset(changed), hooked)


def _class_bindings(module: cst.Module) -> tuple[dict, dict]:
    """Per class of the file: how often its methods bind each `self.<name>` (`=`, `+=`, `for`,
    `with ... as`, `del`), and the last names of its bases."""
    own: dict[str, dict[str, int]] = {}
    bases: dict[str, list[str]] = {}
    for node in code_descendants(module):
        if type(node) is not cst.ClassDef:
            continue
        name = node.name.value  # type: ignore[attr-defined]
        bases.setdefault(name, []).extend(b for b in (_last_name(a.value) for a in node.bases) if b)  # type: ignore[attr-defined]
        counts = own.setdefault(name, {})
        for inner in code_descendants(node.body, skip=(cst.ClassDef,)):  # type: ignore[attr-defined]
            kind = type(inner)
            target = None
            if kind is cst.AssignTarget or kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.Del):
                target = inner.target  # type: ignore[attr-defined]
            elif kind is cst.WithItem and inner.asname is not None:  # type: ignore[attr-defined]
                target = inner.asname.name  # type: ignore[attr-defined]
            for attribute in _self_attributes(target):
                counts[attribute] = counts.get(attribute, 0) + 1
    return own, bases


def _self_attributes(target) -> list[str]:
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
        return [target.attr.value]
    if type(target) in (cst.Tuple, cst.List):
        return [a for e in target.elements for a in _self_attributes(e.value)]
    if type(target) is cst.StarredElement:
        return _self_attributes(target.value)
    return []


def _subclasses(bases: dict[str, list[str]]) -> dict[str, list[str]]:
    derived: dict[str, set[str]] = {}
    for name, parents in bases.items():
        for parent in parents:
            derived.setdefault(parent, set()).add(name)
    closed: dict[str, list[str]] = {}
    for name in derived:
        seen: set[str] = set()
        stack = list(derived[name])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(derived.get(current, ()))
        closed[name] = sorted(seen)
    return closed


def _last_name(expr: cst.BaseExpression) -> str | None:
    """`features` -> "features", `self.body` -> "body"; None for anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return None
