"""Where an `nn.Sequential` that no name holds lives, and whether that container only ever runs its
elements whole.

motion-diffusion-model builds one small MLP per joint and keeps each in a container of the class:

    self.mini_mlps = nn.ModuleList()
    for _ in names:
        self.mini_mlps.append(nn.Sequential(*layers))      # later: self.mini_mlps[i](x)
    self.emb = nn.ParameterDict({n: nn.Sequential(...) for n in names})
                                                            # later: layer = self.emb[n]; layer(x)

The Sequential's home is the attribute of the `nn.ModuleList` / `nn.ModuleDict` / `nn.ParameterDict`
it is stored in: appended to `self.<home>`, or an element of the list display or comprehension, or
a value of the dict display or comprehension, given to the container's constructor bound to
`self.<home>`.  The container runs its elements whole when every mention of an attribute of that
name anywhere in the file (on any object: by name, erring towards "may be it") is its one binding
to such a container, an `.append(...)` to it, `len(...)` of it, or takes one element by one index
and calls it (`self.<home>[i](x)`), or binds one element, or each in a loop or comprehension
(`for m in self.<home>`, `.values()`, `enumerate(...)`), to a name that the function only calls.
Then no layer of an element runs apart from its neighbours, no element's layers are replaced,
and nothing iterates its layers: the layers follow one another as built (ML003's activations in
the Sequential).  Asked only for a Sequential that no name holds, where the file changes some
container's elements (a whole-file walk, rare).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.module_changes import bound_by_prefix, built_name_prefix
from memlint.analysis.walk import code_descendants, code_with_parents, self_attr

_CONTAINERS = frozenset({"ModuleList", "ModuleDict", "ParameterDict"})
# Scopes a name bound to an element may be called in (its mentions are counted there).
_SCOPES = (cst.FunctionDef, cst.Module)


def sequential_home(ctx, call: cst.Call) -> Optional[str]:
    """The attribute of the container `call` (an `nn.Sequential(...)`) is stored in, or None."""
    return _homes(ctx).get(id(call))


def _homes(ctx) -> dict[int, str]:
    return _found(ctx)[0]


def _found(ctx) -> tuple[dict[int, str], frozenset[str]]:
    """The Sequentials' homes, and every attribute of `self` the file binds to such a container."""
    return ctx.memo("sequential-homes", lambda: _collect_homes(ctx))  # type: ignore[return-value]


def _collect_homes(ctx) -> tuple[dict[int, str], frozenset[str]]:
    homes: dict[int, str] = {}
    containers: set[str] = set()
    for node in code_descendants(ctx.module):
        kind = type(node)
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value == "append" and len(node.args) == 1:  # type: ignore[attr-defined]
                home = self_attr(func.value)
                if home is not None and _is_sequential(ctx, node.args[0].value):  # type: ignore[attr-defined]
                    homes[id(node.args[0].value)] = home  # type: ignore[attr-defined]
        elif kind is cst.Assign and len(node.targets) == 1:  # type: ignore[attr-defined]
            home = self_attr(node.targets[0].target)  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            if home is None or type(value) is not cst.Call or not _is_container(ctx, value):
                continue
            containers.add(home)
            for element in _stored(value):
                if _is_sequential(ctx, element):
                    homes[id(element)] = home
    return homes, frozenset(containers)


def _stored(container: cst.Call) -> list[cst.BaseExpression]:
    """The expressions a container's constructor stores as its elements (displays and comprehensions)."""
    if len(container.args) != 1 or container.args[0].keyword is not None or container.args[0].star:
        return []
    given = container.args[0].value
    kind = type(given)
    if kind in (cst.List, cst.Tuple):
        return [e.value for e in given.elements if type(e) is cst.Element]  # type: ignore[attr-defined]
    if kind in (cst.ListComp, cst.GeneratorExp):
        return [given.elt]  # type: ignore[attr-defined]
    if kind is cst.Dict:
        return [e.value for e in given.elements if type(e) is cst.DictElement]  # type: ignore[attr-defined]
    if kind is cst.DictComp:
        return [given.value]  # type: ignore[attr-defined]
    return []


def runs_elements_whole(ctx, home: str) -> bool:
    """Does every mention of an attribute named `home` in the file keep its elements whole (see
    above)?  Asked of any container the file binds to `self.<home>` (a Sequential subclass's
    instances kept in one: analysis/sequential_subclasses.py), not only a Sequential's home."""
    return ctx.memo(("elements-whole", home), lambda: _runs_elements_whole(ctx, home))  # type: ignore[return-value]


def _mentions(ctx) -> dict[str, list]:
    """Every home's mentions in the file, (the Attribute, its parents), found in one walk for all
    homes (a file with many containers is walked once, not once per home)."""
    return ctx.memo("sequential-home-mentions", lambda: _collect_mentions(ctx))  # type: ignore[return-value]


def _collect_mentions(ctx) -> dict[str, list]:
    found_homes, containers = _found(ctx)
    homes = set(found_homes.values()) | containers
    found: dict[str, list] = {home: [] for home in homes}
    for node, parents in code_with_parents(ctx.module):
        kind = type(node)
        if kind is cst.Attribute and node.attr.value in homes:  # type: ignore[attr-defined]
            found[node.attr.value].append((node, parents))  # type: ignore[attr-defined]
        elif kind is cst.Call and type(node.func) is cst.Name and node.func.value == "getattr" and len(node.args) >= 2:  # type: ignore[attr-defined]
            # `getattr(self, "heads")`, `getattr(self, name)`: a mention of a home not followed here
            # (of those a name built at run time may be: DensePose's `getattr(self, layer_name)`, its
            # name "body_conv_fcn" and a number, is none of `convs`: module_changes.built_name_prefix)
            label = node.args[1].value  # type: ignore[attr-defined]
            literal = label.evaluated_value if type(label) is cst.SimpleString else None  # type: ignore[attr-defined]
            if isinstance(literal, str):
                named = {literal} & homes
            else:
                owner = parents[1].name.value if len(parents) > 1 and type(parents[1]) is cst.ClassDef else None  # type: ignore[attr-defined]
                prefix = built_name_prefix(ctx, label, node, owner)  # type: ignore[arg-type]
                named = {home for home in homes if bound_by_prefix(home, prefix)} if prefix else homes
            for home in named:
                found[home].append((node, parents))
    return found


def _runs_elements_whole(ctx, home: str) -> bool:
    bindings = 0
    aliases: list[tuple[cst.CSTNode, str, int]] = []  # (scope, name, id of the binding Name)
    for node, parents in _mentions(ctx).get(home, ()):
        parent = parents[-1]
        grand = parents[-2] if len(parents) > 1 else None
        if type(parent) is cst.AssignTarget and parent.target is node:  # type: ignore[attr-defined]
            if type(grand) is not cst.Assign or type(grand.value) is not cst.Call or not _is_container(ctx, grand.value):  # type: ignore[attr-defined]
                return False
            bindings += 1
        elif type(parent) is cst.Attribute and parent.value is node:  # type: ignore[attr-defined]
            if parent.attr.value == "append" and type(grand) is cst.Call and grand.func is parent:  # type: ignore[attr-defined]
                continue
            if parent.attr.value == "values" and type(grand) is cst.Call and not grand.args:  # type: ignore[attr-defined]
                alias = _loop_alias(grand, parents[:-2])
                if alias is None:
                    return False
                aliases.append(alias)
                continue
            return False
        elif type(parent) is cst.Arg and not parent.star and parent.keyword is None and type(grand) is cst.Call:  # type: ignore[attr-defined]
            called = grand.func.value if type(grand.func) is cst.Name else None  # type: ignore[attr-defined]
            if called == "len" and len(grand.args) == 1:  # type: ignore[attr-defined]
                continue
            if called == "enumerate" and grand.args[0] is parent:  # type: ignore[attr-defined]
                alias = _loop_alias(grand, parents[:-2], position=1)
                if alias is None:
                    return False
                aliases.append(alias)
                continue
            return False
        elif type(parent) is cst.Subscript and parent.value is node and _one_index(parent):  # type: ignore[attr-defined]
            if type(grand) is cst.Call and grand.func is parent:  # type: ignore[attr-defined]
                continue  # `self.<home>[i](x)`: one element, run whole
            if type(grand) is cst.Assign and grand.value is parent and len(grand.targets) == 1 and type(grand.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
                scope = _scope(parents)
                if scope is None:
                    return False
                aliases.append((scope, grand.targets[0].target.value, id(grand.targets[0].target)))  # type: ignore[attr-defined]
                continue
            return False
        elif type(parent) in (cst.For, cst.CompFor) and parent.iter is node:  # type: ignore[attr-defined]
            alias = _loop_alias(node, parents)
            if alias is None:
                return False
            aliases.append(alias)
        else:
            return False
    return bindings == 1 and all(_only_called(ctx, scope, name, binding) for scope, name, binding in aliases)


def _loop_alias(iterated: cst.CSTNode, parents: tuple, position: Optional[int] = None) -> Optional[tuple[cst.CSTNode, str, int]]:
    """`for m in <iterated>` (or a comprehension's): (its scope, `m`, id of that Name); with
    `position`, the target is a tuple and `m` its element there (`for i, m in enumerate(...)`)."""
    loop = parents[-1] if parents else None
    if type(loop) not in (cst.For, cst.CompFor) or loop.iter is not iterated:  # type: ignore[attr-defined]
        return None
    target = loop.target  # type: ignore[attr-defined]
    if position is not None:
        if type(target) is not cst.Tuple or len(target.elements) <= position:  # type: ignore[attr-defined]
            return None
        target = target.elements[position].value  # type: ignore[attr-defined]
    scope = _scope(parents)
    if type(target) is not cst.Name or scope is None:
        return None
    return scope, target.value, id(target)  # type: ignore[attr-defined]


def _only_called(ctx, scope: cst.CSTNode, name: str, binding: int) -> bool:
    """Is every mention of `name` in `scope`, but the binding itself, the callee of a call?"""
    return all(called or mention == binding for mention, called in _name_uses(ctx, scope).get(name, ()))


def _name_uses(ctx, scope: cst.CSTNode) -> dict[str, list[tuple[int, bool]]]:
    """Each name's mentions in `scope`, (id of the Name, whether it is a call's callee): one walk of
    the scope for all the names asked about there."""
    return ctx.memo(("sequential-home-name-uses", id(scope)), lambda: _collect_name_uses(scope))  # type: ignore[return-value]


def _collect_name_uses(scope: cst.CSTNode) -> dict[str, list[tuple[int, bool]]]:
    uses: dict[str, list[tuple[int, bool]]] = {}
    for node, parents in code_with_parents(scope, nearest=1):
        if type(node) is cst.Name:
            parent = parents[-1]
            uses.setdefault(node.value, []).append((id(node), type(parent) is cst.Call and parent.func is node))  # type: ignore[attr-defined]
    return uses


def _scope(parents: tuple) -> Optional[cst.CSTNode]:
    for ancestor in reversed(parents):
        if type(ancestor) in _SCOPES:
            return ancestor
        if type(ancestor) in (cst.ClassDef, cst.Lambda):
            return None
    return None


def _one_index(subscript: cst.Subscript) -> bool:
    return len(subscript.slice) == 1 and type(subscript.slice[0].slice) is cst.Index


def _is_sequential(ctx, expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Call and torch_nn_name(ctx, expr.func) == "Sequential"  # type: ignore[attr-defined]


def _is_container(ctx, call: cst.Call) -> bool:
    return torch_nn_name(ctx, call.func) in _CONTAINERS
