"""Module classes of the file that only forward to the module they are given.

BigGAN's reference `SpectralNorm(nn.Module)` stores its constructor's argument (`self.module =
module`) and its `forward` ends in `return self.module.forward(*args)`: `SpectralNorm(nn.Conv2d(...))`
outputs what the convolution outputs, a fresh tensor nothing else holds.  A class counts when, in
the file:

- it is defined once, at module level, on `nn.Module` alone, and no class of the file derives from it;
- its constructor binds `self.<a>` to its first parameter, and nothing else in the file binds that
  attribute (module_changes' `bound_once`) or hooks a module reached through it;
- every `return` of its one `forward` returns `self.<a>(...)` or `self.<a>.forward(...)`, and it
  defines no `__call__`.

What the wrapper's `forward` does before that (recompute a weight) changes no output it returns.
A class of another file that the project pass finds forwarding so (summaries.forwarded_attribute,
the same conditions on CPython's tree, its attribute bound once in its own class) and that this file
imports counts too (FileView.wrapper_classes: SAGAN's `from spectral import SpectralNorm`).

`owned_layer` answers the same question for a class that builds its layer itself (StyleGAN's
`EqualConv2d`: `conv = nn.Conv2d(*args, **kwargs)`, `self.conv = equal_lr(conv)`, and `forward`
returns `self.conv(input)`): the same conditions on the class and the attribute, with the
constructor binding `self.<a>` to one layer call (through helpers that return their argument, also
by a local name the constructor binds once to that call).  `EqualConv2d(...)` outputs what that
layer outputs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, erring_names
from memlint.analysis.initialisers import returns_its_argument, unwrapped_layer
from memlint.analysis.inventory import single_module_classes, torch_nn_name
from memlint.analysis.module_changes import module_changes
from memlint.analysis.walk import code_descendants, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def wrapped_layer(ctx: "Context", call: cst.Call) -> Optional[cst.BaseExpression]:
    """The module a call of such a class wraps (`nn.Conv2d(...)` of `SpectralNorm(nn.Conv2d(...))`);
    None where the call builds no such class."""
    if type(call.func) is not cst.Name or not call.args:
        return None
    first = call.args[0]
    if first.keyword is not None or first.star:
        return None
    name = call.func.value  # type: ignore[attr-defined]
    # Also a class of another file the project pass found forwarding so (FileView.wrapper_classes:
    # SAGAN's `from spectral import SpectralNorm`, summaries.forwarded_attribute).
    return first.value if name in forwarding_classes(ctx) or name in ctx.project.wrapper_classes else None


def owned_layer(ctx: "Context", call: cst.Call) -> Optional[cst.Call]:
    """The layer call whose output a call of such a class returns (`nn.Conv2d(*args, **kwargs)` of
    `EqualConv2d(3, 8, 1)`); None where the call builds no such class."""
    if type(call.func) is not cst.Name:
        return None
    return owning_classes(ctx).get(call.func.value)  # type: ignore[attr-defined]


def owning_classes(ctx: "Context") -> dict:
    """The file's classes whose `forward` returns the output of a layer their constructor builds,
    each with that layer's call (memoised)."""
    return ctx.memo("owning-classes", lambda: _collect_owners(ctx))  # type: ignore[return-value]


def _collect_owners(ctx: "Context") -> dict:
    found: dict[str, cst.Call] = {}
    changes = None
    for node in single_module_classes(ctx):
        methods = _methods(node)
        if "__call__" in methods or len(methods.get("__init__", ())) != 1 or len(methods.get("forward", ())) != 1:
            continue
        init, forward = methods["__init__"][0], methods["forward"][0]
        if init.decorators or forward.decorators:
            continue
        attribute = _returned_attribute(forward)
        if attribute is None:
            continue
        layer = _layer_bound(ctx, init, attribute)
        if layer is None or torch_nn_name(ctx, layer.func) is None:
            continue
        changes = changes or module_changes(ctx)
        name = node.name.value
        if changes.subclasses.get(name) or not changes.bound_once(attribute, name) or changes.hooks_may_see([attribute]):
            continue
        found[name] = layer
    return found


def _methods(node: cst.ClassDef) -> dict[str, list[cst.FunctionDef]]:
    methods: dict[str, list[cst.FunctionDef]] = {}
    for statement in node.body.body:  # type: ignore[attr-defined]
        if type(statement) is cst.FunctionDef:
            methods.setdefault(statement.name.value, []).append(statement)
    return methods


def _returned_attribute(forward: cst.FunctionDef) -> Optional[str]:
    """The `a` of `self.<a>(...)` / `self.<a>.forward(...)` that every `return` of `forward` returns."""
    returns = [n for n in code_descendants(forward.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.Return]
    attributes = set()
    for r in returns:
        value = r.value  # type: ignore[attr-defined]
        if type(value) is not cst.Call:
            return None
        func = value.func
        if type(func) is cst.Attribute and func.attr.value == "forward" and self_attr(func.value) is not None:
            func = func.value
        attribute = self_attr(func)
        if attribute is None:
            return None
        attributes.add(attribute)
    return attributes.pop() if len(attributes) == 1 else None


def _layer_bound(ctx: "Context", init: cst.FunctionDef, attribute: str) -> Optional[cst.Call]:
    """The one layer call the constructor binds `self.<attribute>` to: `self.conv = nn.Conv2d(...)`,
    `self.conv = equal_lr(nn.Conv2d(...))`, or `conv = nn.Conv2d(...)` then `self.conv = equal_lr(conv)`."""
    values: list[cst.BaseExpression] = []
    locals_: dict[str, list[cst.BaseExpression]] = {}
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:  # type: ignore[attr-defined]
                if self_attr(target.target) == attribute:
                    values.append(node.value)  # type: ignore[attr-defined]
                elif type(target.target) is cst.Name:
                    locals_.setdefault(target.target.value, []).append(node.value)  # type: ignore[attr-defined]
                elif erring_names(target.target):
                    for name in erring_names(target.target):
                        locals_.setdefault(name, []).append(cst.Name("_"))  # bound otherwise: unknown
        else:
            for name in [name for target in bound_by(node) for name in erring_names(target)]:
                locals_.setdefault(name, []).append(cst.Name("_"))  # bound otherwise: unknown
    if len(values) != 1:
        return None
    value = values[0]
    for _ in range(4):
        if type(value) is cst.Name:
            bound = locals_.get(value.value, [])  # type: ignore[attr-defined]
            if len(bound) != 1:
                return None
            value = bound[0]
            continue
        if type(value) is not cst.Call:
            return None
        inner = value.args[0].value if value.args and value.args[0].keyword is None and not value.args[0].star else None  # type: ignore[attr-defined]
        if type(inner) is cst.Name and returns_its_argument(ctx, value.func):  # type: ignore[attr-defined]
            value = inner  # `equal_lr(conv)`: the helper returns the layer it is given
            continue
        return unwrapped_layer(ctx, value)  # type: ignore[arg-type]
    return None


def forwarding_classes(ctx: "Context") -> frozenset[str]:
    """The names of the file's classes that return the output of the module they are given (memoised)."""
    return ctx.memo("forwarding-classes", lambda: _collect(ctx))  # type: ignore[return-value]


def _collect(ctx: "Context") -> frozenset[str]:
    candidates = single_module_classes(ctx)
    if not candidates:
        return frozenset()
    changes = module_changes(ctx)
    found = set()
    for node in candidates:
        name = node.name.value
        if changes.subclasses.get(name):
            continue
        attribute = _forwarded_attribute(node)
        if attribute is not None and changes.bound_once(attribute, name) and not changes.hooks_may_see([attribute]):
            found.add(name)
    return frozenset(found)


def _forwarded_attribute(node: cst.ClassDef) -> Optional[str]:
    methods: dict[str, list[cst.FunctionDef]] = {}
    for statement in node.body.body:  # type: ignore[attr-defined]
        if type(statement) is cst.FunctionDef:
            methods.setdefault(statement.name.value, []).append(statement)
    if "__call__" in methods or len(methods.get("__init__", ())) != 1 or len(methods.get("forward", ())) != 1:
        return None
    init, forward = methods["__init__"][0], methods["forward"][0]
    params = [*init.params.posonly_params, *init.params.params]
    if len(params) < 2 or init.decorators or forward.decorators:
        return None
    argument = params[1].name.value
    stored = _stored_as(init, argument)
    if stored is None:
        return None
    returns = [n for n in code_descendants(forward.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.Return]
    if not returns or not all(_calls_attribute(r.value, stored) for r in returns):  # type: ignore[attr-defined]
        return None
    return stored


def _stored_as(init: cst.FunctionDef, argument: str) -> Optional[str]:
    """`self.<a> = argument` (also one target of `self.a, self.b = argument, b`): the one such `a`,
    where nothing else in the constructor binds the argument's name."""
    found: list[str] = []
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        kind = type(node)
        if kind is cst.Assign and len(node.targets) == 1:  # type: ignore[attr-defined]
            target, value = node.targets[0].target, node.value  # type: ignore[attr-defined]
            pairs = (
                list(zip((e.value for e in target.elements), (e.value for e in value.elements)))
                if type(target) is cst.Tuple and type(value) is cst.Tuple and len(target.elements) == len(value.elements)
                else [(target, value)]
            )  # fmt: skip
            for left, right in pairs:
                if type(left) is cst.Name and left.value == argument:
                    return None  # the name rebound: `self.<a>` may hold something else
                if type(right) is cst.Name and right.value == argument and self_attr(left) is not None:
                    found.append(self_attr(left))  # type: ignore[arg-type]
        elif kind is not cst.Assign and any(argument in erring_names(target) for target in bound_by(node)):
            return None  # bound otherwise
    return found[0] if len(found) == 1 else None


def _calls_attribute(value: Optional[cst.BaseExpression], attribute: str) -> bool:
    """`self.<attribute>(...)` or `self.<attribute>.forward(...)`."""
    if type(value) is not cst.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    if type(func) is cst.Attribute and func.attr.value == "forward" and self_attr(func.value) == attribute:
        return True
    return self_attr(func) == attribute
