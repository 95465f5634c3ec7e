"""Which parts of a model class the file keeps: a model built only to be cut.

A pretrained network is often built whole only to load its weights and keep its feature layers
(SRGAN's content loss: `model = _FeatureExtractor(...)`, `model.load_state_dict(...)`, then
`create_feature_extractor(model, feature_nodes)`; or `nn.Sequential(*list(vgg.features.children())[:k])`,
or `self.vgg = vgg.features`).  The classifier it was built with never runs and is not kept: its
weights are freed with the whole model once the parts are taken.

`kept_parts(ctx, class_name)` answers, for a class of the file, from every place the file builds
it (and only when no other linted file imports it):
- None: some instance is used whole (called, returned, stored, handed to anything but a cutter,
  its `parameters()` taken) or the class is used otherwise (a base, a value): no fact;
- `KeptParts(attributes)`: every instance is only loaded, moved or put in a mode and then cut;
  `attributes` names the top-level attributes that are kept (`{"features"}`), or is None where a
  cutter's nodes are not literal (`create_feature_extractor(model, feature_nodes)`): which parts
  survive, the file does not say.

`never_runs(ctx, layer_call)` asks it for a layer built in `self.<attr> = ...` of such a class:
may that attribute be dropped?  Asked by ML005 (a classifier `Linear(512 * 7 * 7, 4096)` of a
model cut to its features costs nothing).  Computed only when asked, once per class.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.walk import code_descendants, code_with_parents

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Functions that keep part of the model they are given (torchvision's feature extraction).
CUTTERS = frozenset({"create_feature_extractor", "IntermediateLayerGetter"})
# Methods that load, move or set the mode of a model: they run none of its layers.
_NEUTRAL_METHODS = frozenset(
    {"load_state_dict", "eval", "train", "to", "cuda", "cpu", "half", "float", "double", "bfloat16", "requires_grad_"}
)  # fmt: skip


@dataclass(frozen=True)
class KeptParts:
    attributes: Optional[frozenset[str]]  # None: cut, but which parts are kept is not written out

    def may_drop(self, attribute: str) -> bool:
        return self.attributes is None or attribute not in self.attributes


def never_runs(ctx: "Context", call: cst.Call) -> bool:
    """Is `call` (a layer built in `self.<attr> = ...` of a module-level class of the file) part of
    what every instance of that class may have cut away?"""
    owner = _owner(ctx, call)
    if owner is None:
        return False
    class_name, attribute = owner
    if attribute in deleted_parts(ctx, class_name):
        return True
    kept = kept_parts(ctx, class_name)
    return kept is not None and kept.may_drop(attribute)


def deleted_parts(ctx: "Context", class_name: str) -> frozenset[str]:
    """The attributes that every instance the file builds of `class_name` loses to a `del` before
    anything runs it (unet-pytorch's `VGG16()`: `model = VGG(...)`, maybe `model.load_state_dict(...)`,
    then `del model.classifier`, `return model`): those layers never run and never reach a device.
    Empty where some instance is built otherwise, or another linted file may build one."""
    return ctx.memo(("deleted-parts", class_name), lambda: _deleted_parts(ctx, class_name))  # type: ignore[return-value]


def kept_parts(ctx: "Context", class_name: str) -> Optional[KeptParts]:
    return ctx.memo(("kept-parts", class_name), lambda: _kept_parts(ctx, class_name))  # type: ignore[return-value]


def _owner(ctx: "Context", call: cst.Call) -> Optional[tuple[str, str]]:
    """(class, attribute) of the `self.<attribute> = ...` in a module-level class that builds `call`."""
    for statement in ctx.module.body:
        if type(statement) is not cst.ClassDef:
            continue
        for node in code_descendants(statement):
            if type(node) is not cst.Assign or len(node.targets) != 1:  # type: ignore[attr-defined]
                continue
            target = node.targets[0].target  # type: ignore[attr-defined]
            if not (type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self"):
                continue
            value = node.value  # type: ignore[attr-defined]
            if value is call or any(inner is call for inner in code_descendants(value)):
                return statement.name.value, target.attr.value  # type: ignore[attr-defined]
    return None


def _kept_parts(ctx: "Context", class_name: str) -> Optional[KeptParts]:
    imported = ctx.project.imported_names
    if "*" in imported or class_name in imported:
        return None  # another linted file may build it whole
    definition = next((s for s in ctx.module.body if type(s) is cst.ClassDef and s.name.value == class_name), None)  # type: ignore[attr-defined]
    if definition is None:
        return None
    own_attributes = _self_attributes(definition)
    kept: Optional[set[str]] = set()
    built = False
    for node, parents in code_with_parents(ctx.module):
        if type(node) is not cst.Name or node.value != class_name or not parents:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if parent is definition:
            continue  # the class's own name in `class C(...)`
        if type(parent) is cst.Arg and len(parents) > 1 and _calls(parents[-2], "super"):
            continue  # `super(C, self).__init__()`
        if type(parent) is not cst.Call or parent.func is not node:  # type: ignore[attr-defined]
            return None  # a base of another class, a value handed around: used in ways not followed
        built = True
        found = _use_of_instance(ctx, parent, parents[:-1], own_attributes)
        if found is _WHOLE:
            return None
        if found is None or kept is None:
            kept = None
        else:
            kept |= found  # type: ignore[operator]
    if not built:
        return None
    return KeptParts(None if kept is None else frozenset(kept))


_WHOLE = object()  # the instance is used whole


def _deleted_parts(ctx: "Context", class_name: str) -> frozenset[str]:
    imported = ctx.project.imported_names
    if "*" in imported or class_name in imported:
        return frozenset()
    deleted: Optional[set[str]] = None
    for node, parents in code_with_parents(ctx.module):
        if type(node) is not cst.Name or node.value != class_name or not parents:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if type(parent) is cst.ClassDef or (type(parent) is cst.Arg and len(parents) > 1 and _calls(parents[-2], "super")):
            continue  # the class's own name, `super(C, self).__init__()`
        found = _deleted_after(parent, parents[:-1]) if type(parent) is cst.Call and parent.func is node else None  # type: ignore[attr-defined]
        if not found:
            return frozenset()
        deleted = set(found) if deleted is None else deleted & found
    return frozenset(deleted or ())


def _deleted_after(made: cst.Call, parents: tuple) -> Optional[set[str]]:
    """`name = C(...)` as a statement of a block, then statements that touch `name` only through
    methods that run nothing (`name.load_state_dict(...)`, also inside an `if`), then unconditional
    `del name.<attribute>` statements of the same block: the attributes deleted."""
    if len(parents) < 3 or type(parents[-1]) is not cst.Assign or type(parents[-2]) is not cst.SimpleStatementLine:
        return None
    assign, line = parents[-1], parents[-2]
    if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name or len(line.body) != 1:  # type: ignore[attr-defined]
        return None
    name = assign.targets[0].target.value  # type: ignore[attr-defined]
    block = parents[-3]
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or line not in body:
        return None
    deleted: set[str] = set()
    for statement in body[body.index(line) + 1:]:
        removed = _deleted_attributes(statement, name)
        if removed:
            deleted |= removed
            continue
        if deleted:
            break  # the deletions are done: what follows may use the rest of the instance
        if not _only_neutral_uses(statement, name):
            return None
    return deleted or None


def _deleted_attributes(statement: cst.CSTNode, name: str) -> set[str]:
    """`del name.a` or `del name.a, name.b` as one statement: {"a", "b"}; else empty."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1 or type(statement.body[0]) is not cst.Del:  # type: ignore[attr-defined]
        return set()
    target = statement.body[0].target  # type: ignore[attr-defined]
    targets = [e.value for e in target.elements] if type(target) in (cst.Tuple, cst.List) else [target]  # type: ignore[attr-defined]
    found = set()
    for each in targets:
        if not (type(each) is cst.Attribute and type(each.value) is cst.Name and each.value.value == name):  # type: ignore[attr-defined]
            return set()
        found.add(each.attr.value)  # type: ignore[attr-defined]
    return found


def _only_neutral_uses(statement: cst.CSTNode, name: str) -> bool:
    """Every use of `name` in `statement` calls a method that runs none of its layers, and the
    statement does not bind it again."""
    for node, parents in code_with_parents(statement):
        if type(node) is not cst.Name or node.value != name or not parents:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if type(parent) is cst.Attribute and parent.attr is node:  # type: ignore[attr-defined]
            continue  # `x.name`: an attribute of something else
        if type(parent) is cst.Attribute and parent.attr.value in _NEUTRAL_METHODS and len(parents) > 1:  # type: ignore[attr-defined]
            call = parents[-2]
            if type(call) is cst.Call and call.func is parent and type(parents[-3] if len(parents) > 2 else None) is cst.Expr:  # type: ignore[attr-defined]
                continue  # `model.load_state_dict(...)` as a statement: its result is not kept
        return False
    return True


def _use_of_instance(ctx: "Context", made: cst.Call, parents: tuple, attributes: set[str]):
    """What is kept of the instance `made` builds: a set of attributes, None (cut to parts not
    written out), or _WHOLE."""
    parent = parents[-1] if parents else None
    kind = type(parent)
    if kind is cst.Attribute and parent.value is made:  # type: ignore[union-attr]
        return _part(parent.attr.value, parents[:-1], attributes)  # type: ignore[union-attr]
    if kind is cst.Arg:
        return _cut(parent, parents[:-1])
    if kind is cst.Assign and len(parent.targets) == 1 and type(parent.targets[0].target) is cst.Name:  # type: ignore[union-attr]
        scope = next((p for p in reversed(parents) if type(p) is cst.FunctionDef), ctx.module)
        return _uses_of_name(parent.targets[0].target.value, scope, attributes)  # type: ignore[union-attr]
    return _WHOLE


def _part(attribute: str, parents: tuple, attributes: set[str]):
    """`instance.<attribute>`: a part kept (one of the attributes the class assigns on self), a
    method that runs nothing (`load_state_dict`, `eval`, `to`), or anything else (whole)."""
    if attribute in attributes:
        return {attribute}
    parent = parents[-1] if parents else None
    if attribute in _NEUTRAL_METHODS and type(parent) is cst.Call:
        return set()
    return _WHOLE


def _cut(arg: cst.Arg, parents: tuple):
    """The instance is an argument: the first of a cutter (its nodes, when literal), or whole."""
    call = parents[-1] if parents else None
    if type(call) is not cst.Call or arg.keyword is not None or not call.args or call.args[0] is not arg:  # type: ignore[union-attr]
        return _WHOLE
    func = call.func  # type: ignore[union-attr]
    name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None  # type: ignore[union-attr]
    if name not in CUTTERS:
        return _WHOLE
    nodes = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("return_nodes", "return_layers")), None)  # type: ignore[union-attr]
    if nodes is None and len(call.args) > 1 and call.args[1].keyword is None:  # type: ignore[union-attr]
        nodes = call.args[1].value  # type: ignore[union-attr]
    return _literal_roots(nodes)


def _literal_roots(nodes: Optional[cst.BaseExpression]) -> Optional[set[str]]:
    """The top-level attributes named by literal nodes (`["features.35"]`, `{"layer4": "out"}`), or
    None when they are not written out."""
    if type(nodes) in (cst.List, cst.Tuple, cst.Set):
        strings = [e.value for e in nodes.elements]  # type: ignore[union-attr]
    elif type(nodes) is cst.Dict:
        strings = [e.key for e in nodes.elements if type(e) is cst.DictElement]  # type: ignore[union-attr]
    else:
        return None
    roots = set()
    for value in strings:
        if type(value) is not cst.SimpleString:
            return None
        roots.add(value.evaluated_value.partition(".")[0])  # type: ignore[union-attr]
    return roots


def _uses_of_name(name: str, scope: cst.CSTNode, attributes: set[str]):
    """What the uses of `name` in `scope` keep of the instance bound to it (every use: a part, a
    method that runs nothing, a cutter), or _WHOLE."""
    kept: Optional[set[str]] = set()
    for node, parents in code_with_parents(scope):
        if type(node) is not cst.Name or node.value != name or not parents:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if type(parent) is cst.AssignTarget:
            continue  # a binding (`model = model.to(device)`, another branch's model)
        if type(parent) is cst.Attribute and parent.attr is node:  # type: ignore[attr-defined]
            continue  # `x.name`: an attribute of something else
        if type(parent) is cst.Attribute:
            found = _part(parent.attr.value, parents[:-1], attributes)  # type: ignore[attr-defined]
        elif type(parent) is cst.Arg:
            found = _cut(parent, parents[:-1])
        else:
            return _WHOLE
        if found is _WHOLE:
            return _WHOLE
        if found is None or kept is None:
            kept = None
        else:
            kept |= found  # type: ignore[operator]
    return kept


def _self_attributes(definition: cst.ClassDef) -> set[str]:
    """The attributes the class's methods assign on self (`self.features = ...`)."""
    found = set()
    for node in code_descendants(definition):
        if type(node) is cst.AssignTarget:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
                found.add(target.attr.value)
    return found


def _calls(node: cst.CSTNode, name: str) -> bool:
    return type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == name  # type: ignore[attr-defined]
