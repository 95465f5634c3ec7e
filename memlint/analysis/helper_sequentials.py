"""Attributes holding an `nn.Sequential` that a method of the class fills with blocks and returns.

fast-autoaugment's Shake-Shake networks build each stage in a helper method:

    def _make_layer(self, n_units, in_ch, out_ch, stride=1):
        layers = []
        for i in range(int(n_units)):
            layers.append(ShakeBlock(in_ch, out_ch, stride=stride))
        return nn.Sequential(*layers)

    self.layer3 = self._make_layer(n_units, in_chs[2], in_chs[3], 2)      # in __init__

Calling `self.layer3(h)` returns what its last block returns, or `h` itself where the loop added
none.  This module says which classes a stage may hold; whether their outputs are fresh (and what
an empty stage's input is) is the asker's (analysis/class_layers.py, analysis/fresh_values.py).

Evidence, all of it required: the constructor binds `self.<attribute> = self.<method>(...)`; the
method is defined directly in the class body, takes `self` and carries no decorator; every
`return` in it is `nn.Sequential(*<list>)` of one local list that the method binds once, to
`[]`, and otherwise only extends by `<list>.append(<Class>(...))` statements, each a call of a
class named by a plain name (`Block(...)`, not a factory or a parameter); and every mention of
the method's name in the file that may be this class's (analysis/attribute_owners.py) is such a
constructor binding.  What else the file does with the attribute (its uses, hooks, rebindings) is
the asker's to check.  Asked by ML003 through `ClassLayers.stage_layers`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.attribute_owners import attribute_uses
from memlint.analysis.bindings import local_names
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.walk import code_descendants, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def helper_sequential_elements(ctx: "Context", class_node: cst.ClassDef) -> dict[str, frozenset[str]]:
    """attribute -> the classes its helper-built Sequential's elements may be (see above): a
    `torch.nn` class by its name ("Linear"), a class the file names `Block` as "local:Block"; for
    the attributes of `class_node` bound so (memoised per class)."""
    return ctx.memo(("helper-sequentials", id(class_node)), lambda: _collect(ctx, class_node))  # type: ignore[return-value]


def _collect(ctx: "Context", class_node: cst.ClassDef) -> dict[str, frozenset[str]]:
    methods = {s.name.value: s for s in class_node.body.body if type(s) is cst.FunctionDef}  # type: ignore[attr-defined]
    init = methods.get("__init__")
    if init is None:
        return {}
    found: dict[str, frozenset[str]] = {}
    calls: dict[str, int] = {}  # method -> constructor bindings calling it
    bound: dict[str, str] = {}  # attribute -> method
    for node in code_descendants(init.body, skip=_SCOPES):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.value) is not cst.Call:  # type: ignore[attr-defined]
            continue
        target, func = node.targets[0].target, node.value.func  # type: ignore[attr-defined]
        attribute, method = self_attr(target), self_attr(func)
        if attribute is None or method is None or method not in methods:
            continue
        calls[method] = calls.get(method, 0) + 1
        bound[attribute] = method
    for attribute, method in bound.items():
        if attribute_uses(ctx, class_node.name.value, method) != calls[method]:
            continue  # the method is named elsewhere too (handed on, called by another method)
        classes = _returned_elements(ctx, methods[method])
        if classes:
            found[attribute] = classes
    return found


def _returned_elements(ctx: "Context", method: cst.FunctionDef) -> Optional[frozenset[str]]:
    """The classes of the blocks `method` appends to the list it returns as `nn.Sequential(*list)`."""
    params = method.params.params
    if method.decorators or not params or params[0].name.value != "self" or type(method.body) is not cst.IndentedBlock:
        return None
    listed: Optional[str] = None
    returns = 0
    for node in code_descendants(method.body, skip=_SCOPES):
        if type(node) is not cst.Return:
            continue
        name = _unpacked_into_sequential(ctx, node.value)  # type: ignore[attr-defined]
        if name is None or listed not in (None, name):
            return None
        listed, returns = name, returns + 1
    if listed is None:
        return None
    bindings = appended = 0
    classes: set[str] = set()
    local = local_names(method)
    for node in code_descendants(method.body, skip=_SCOPES):
        if type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == listed for t in node.targets):  # type: ignore[attr-defined]
            if len(node.targets) != 1 or type(node.value) is not cst.List or node.value.elements:  # type: ignore[attr-defined]
                return None
            bindings += 1
        elif type(node) is cst.Expr and type(node.value) is cst.Call:  # type: ignore[attr-defined]
            call = node.value  # type: ignore[attr-defined]
            func = call.func
            if not (type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == listed):
                continue
            block = call.args[0].value if len(call.args) == 1 and not call.args[0].star and call.args[0].keyword is None else None
            if func.attr.value != "append" or type(block) is not cst.Call:
                return None
            kind = torch_nn_name(ctx, block.func)  # type: ignore[attr-defined]
            if kind is None:
                named = block.func  # type: ignore[attr-defined]
                if type(named) is not cst.Name or named.value in local:
                    return None  # a factory's result, or `block(...)` of a parameter: whatever the caller gives
                kind = f"local:{named.value}"
            classes.add(kind)
            appended += 1
    mentions = sum(1 for n in code_descendants(method.body) if type(n) is cst.Name and n.value == listed)  # type: ignore[attr-defined]
    if bindings != 1 or not appended or mentions != bindings + appended + returns:
        return None
    return frozenset(classes)


def _unpacked_into_sequential(ctx: "Context", value: Optional[cst.BaseExpression]) -> Optional[str]:
    """`nn.Sequential(*layers)` -> "layers"; else None."""
    if type(value) is not cst.Call or torch_nn_name(ctx, value.func) != "Sequential" or len(value.args) != 1:  # type: ignore[attr-defined]
        return None
    arg = value.args[0]  # type: ignore[attr-defined]
    if arg.star != "*" or arg.keyword is not None or type(arg.value) is not cst.Name:
        return None
    return arg.value.value  # type: ignore[attr-defined]
