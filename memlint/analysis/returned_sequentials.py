"""Which attribute of `self` holds an `nn.Sequential` a method builds and returns.

deep-person-reid's OSNet builds its embedding head in a helper method and stores it in the
constructor:

    def _construct_fc_layer(self, fc_dims, input_dim, dropout_p=None):
        if fc_dims is None or fc_dims < 0:
            return None
        layers = []
        for dim in fc_dims:
            layers.append(nn.Linear(input_dim, dim)); layers.append(nn.BatchNorm1d(dim)); layers.append(nn.ReLU())
        return nn.Sequential(*layers)

    self.fc = self._construct_fc_layer(fc_dims, 512)        # in __init__

The Sequential is no name's in the helper, but it lands in `self.fc` of the class and nowhere else,
so what the file does to `self.fc` (its elements replaced, parts run apart, hooks, other uses) is
all that can happen to it.  Evidence, all of it required: the method is defined directly in a
top-level class, takes `self`, carries no decorator; the Sequential is the value of one of its
`return` statements and every other `return` gives back nothing (`return`, `return None`); and
every mention of the method's name in the file (on any object, by name or by a literal string) is
`self.<method>(...)` in a method of that class, the whole value of `self.<attribute> = ...`, always
the same attribute.  (Calls from other files are not seen, as no fact about a file sees them.)
Asked by ML003 for the layers appended to a list the method unpacks into the Sequential.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.walk import code_descendants, code_with_parents

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def attribute_holding_returned(ctx, function: Optional[cst.FunctionDef], sequential: Optional[cst.Call]) -> Optional[tuple[str, str]]:
    """(the class, the attribute of `self`) that the Sequential `function` returns is stored in
    (see above); None where that is not certain."""
    if function is None or sequential is None or function.decorators:
        return None
    owner = _owning_class(ctx.module, function)
    if owner is None or not _receives_self(function) or not _returns_only(function, sequential):
        return None
    mentions = ctx.memo("method-mentions", lambda: _mentions(ctx.module))
    return ctx.memo(("returned-sequential-home", id(function)), lambda: _stored_in(mentions, owner, function.name.value))  # type: ignore[return-value]


def _owning_class(module: cst.Module, function: cst.FunctionDef) -> Optional[cst.ClassDef]:
    for statement in module.body:
        if type(statement) is cst.ClassDef and any(s is function for s in statement.body.body):  # type: ignore[attr-defined]
            return statement
    return None


def _receives_self(method: cst.FunctionDef) -> bool:
    params = method.params.params
    return bool(params) and params[0].name.value == "self"


def _returns_only(function: cst.FunctionDef, sequential: cst.Call) -> bool:
    """Is `sequential` the value of a `return` of the function, every other giving back nothing?"""
    found = False
    for node in code_descendants(function.body, skip=_SCOPES):
        if type(node) is not cst.Return:
            continue
        value = node.value  # type: ignore[attr-defined]
        if value is sequential:
            found = True
        elif value is not None and not (type(value) is cst.Name and value.value == "None"):  # type: ignore[attr-defined]
            return False
    return found


def _mentions(module: cst.Module) -> dict:
    """Per name of a method defined in a top-level class, every node of the file that may mention
    it (a name, an attribute so named, a string of that text), with its parents, in the file's
    order: one walk of the file for all the methods `_stored_in` asks about."""
    names = {
        s.name.value for c in module.body if type(c) is cst.ClassDef
        for s in c.body.body if type(s) is cst.FunctionDef  # type: ignore[attr-defined]
    }  # fmt: skip
    found: dict[str, list] = {}
    for node, parents in code_with_parents(module):
        kind = type(node)
        if kind is cst.SimpleString:
            text = node.evaluated_value  # type: ignore[attr-defined]
            if text in names:
                found.setdefault(text, []).append((node, parents))
        elif kind is cst.Name and node.value in names:  # type: ignore[attr-defined]
            found.setdefault(node.value, []).append((node, parents))  # type: ignore[attr-defined]
        elif kind is cst.Attribute and node.attr.value in names:  # type: ignore[attr-defined]
            found.setdefault(node.attr.value, []).append((node, parents))  # type: ignore[attr-defined]
    return found


def _stored_in(mentions: dict, owner: cst.ClassDef, method: str) -> Optional[tuple[str, str]]:
    methods = {id(s) for s in owner.body.body if type(s) is cst.FunctionDef and _receives_self(s)}  # type: ignore[attr-defined]
    attributes: set[str] = set()
    for node, parents in mentions.get(method, ()):
        kind = type(node)
        if kind is cst.SimpleString and node.evaluated_value == method:  # type: ignore[attr-defined]
            return None  # `getattr(self, "_construct_fc_layer")`: a use not followed
        if kind is cst.Name and node.value == method:  # type: ignore[attr-defined]
            # the `def`'s own name, or the attribute of a mention checked below
            if any(p is owner for p in parents) and type(parents[-1]) is cst.FunctionDef and parents[-1].name is node:  # type: ignore[attr-defined]
                continue
            if type(parents[-1]) is cst.Attribute and parents[-1].attr is node:  # type: ignore[attr-defined]
                continue
            return None
        if kind is not cst.Attribute or node.attr.value != method:  # type: ignore[attr-defined]
            continue
        attribute = _stored_call(node, parents)
        inside = next((i for i, p in enumerate(parents) if p is owner), None)
        # in a method of the class, not in a class nested there (whose `self` is its own)
        if attribute is None or inside is None or inside + 2 >= len(parents) or id(parents[inside + 2]) not in methods:
            return None
        if any(type(p) is cst.ClassDef for p in parents[inside + 1 :]):
            return None
        attributes.add(attribute)
    if len(attributes) != 1:
        return None
    return owner.name.value, attributes.pop()


def _stored_call(mention: cst.Attribute, parents: tuple) -> Optional[str]:
    """`<attribute>` where the mention is `self.<method>` called as the whole value of one
    `self.<attribute> = self.<method>(...)`; None otherwise."""
    if type(mention.value) is not cst.Name or mention.value.value != "self" or len(parents) < 2:  # type: ignore[attr-defined]
        return None
    call, assign = parents[-1], parents[-2]
    if type(call) is not cst.Call or call.func is not mention or type(assign) is not cst.Assign or assign.value is not call:  # type: ignore[attr-defined]
        return None
    if len(assign.targets) != 1:  # type: ignore[attr-defined]
        return None
    target = assign.targets[0].target  # type: ignore[attr-defined]
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":  # type: ignore[attr-defined]
        return target.attr.value  # type: ignore[attr-defined]
    return None
