"""What in a file can change a module after its constructor built it, or see what its layers output:
attributes bound more than once (`self.fc = nn.Linear(4, 4)`, then `self.fc = nn.Identity()` in a
branch, or `model.fc = nn.Identity()` elsewhere), containers whose elements are replaced
(`features[0] = ...`, `del features[0]`, `features.insert(...)`), and hooks that see a layer's input
or output (`register_forward_hook`, a full backward hook, a feature extractor).

A rule that trusts "this attribute is the layer the constructor built" (ML003's `inplace=True` on a
fresh layer output) asks here first.  Everything is by name over the whole file, so it errs towards
"may change": an attribute `fc` bound twice anywhere, on any object, is not trusted on any class.
Code outside the file (another file replacing `model.fc`, hooking it) is not seen.
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
# Calls that bind an attribute by a name given as a string.
_NAMED_BINDINGS = {"setattr": 1, "add_module": 0, "register_module": 0, "register_buffer": 0, "register_parameter": 0}
ANY = "*"  # an attribute bound by a name that is not a literal: every attribute may be


@dataclass(frozen=True)
class ModuleChanges:
    bindings: dict  # attribute name -> how many places bind it (ANY: some binding's name is unknown)
    changed_elements: frozenset[str]  # last names of containers whose elements are replaced or removed
    hooked: bool  # the file registers a hook or extracts intermediate outputs

    def bound_once(self, attribute: str) -> bool:
        """Is `<x>.<attribute>` bound in exactly one place of the file (the constructor's)?"""
        return ANY not in self.bindings and self.bindings.get(attribute, 0) == 1

    def elements_changed(self, name: str) -> bool:
        return name in self.changed_elements or ANY in self.changed_elements


def module_changes(ctx: "Context") -> ModuleChanges:
    return ctx.memo("module-changes", lambda: _collect(ctx.module))  # type: ignore[return-value]


def _collect(module: cst.Module) -> ModuleChanges:
    bindings: dict[str, int] = {}
    changed: set[str] = set()
    hooked = False

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
    return ModuleChanges(bindings, frozenset(changed), hooked)


def _last_name(expr: cst.BaseExpression) -> str | None:
    """`features` -> "features", `self.body` -> "body"; None for anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return None
