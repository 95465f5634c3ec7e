"""How a file builds an `nn.Sequential`: its layers in order, and the lists and empty containers it
is filled from.

`nn.Sequential(a, b, c)`, `nn.Sequential(OrderedDict([("a", a), ...]))`, `nn.Sequential(*layers)`
over a list that is only extended (`layers.append(...)`, `layers += [...]`), and `net =
nn.Sequential()` filled by `net.add_module(name, layer)` statements.  Which layer follows which is
what a rule about adjacent layers asks (ML003: an activation right after a layer that keeps no
output); the name a Sequential is bound to is where an element change (`net[0] = nn.Identity()`,
module_changes) would reach it.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, bound_names, erring_names
from memlint.analysis.inventory import resolve_global, torch_nn_name
from memlint.analysis.walk import code_descendants, self_attr


def sequential_elements(call: cst.Call, ctx) -> list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
    """The layers of `nn.Sequential(...)` in order, each with the node whose comments belong to it."""
    if len(call.args) == 1 and not call.args[0].star and isinstance(call.args[0].value, cst.Call):
        inner = call.args[0].value
        if resolve_global(ctx, inner.func) in ("collections.OrderedDict", "typing.OrderedDict") and inner.args:
            display = inner.args[0].value
            if isinstance(display, (cst.List, cst.Tuple)):
                pairs = []
                for element in display.elements:
                    if isinstance(element.value, cst.Tuple) and len(element.value.elements) == 2:
                        pairs.append((element.value.elements[1].value, element))
                    else:
                        return []
                return pairs
            return []
    elements: list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]] = []
    for argument in call.args:
        if argument.keyword is not None:
            return []
        if argument.star == "*" and isinstance(argument.value, (cst.List, cst.Tuple, cst.BinaryOperation)):
            elements.extend(concatenated_layers(argument.value))
        elif argument.star:
            elements.append((argument.value, None))  # unknown layers: breaks adjacency
        else:
            elements.append((argument.value, argument))
    return elements


def concatenated_layers(expr: cst.BaseExpression) -> list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
    """The layers of a display or of a `+` of displays, in order: `(a, b) + [c]` -> a, b, c.  A part
    that is not a display (`((bn,) if use_bn else ())`, a name) stands as one unknown element: it may
    hold no layer or several, so it breaks adjacency (nothing is taken to follow it, or to come first
    because it may be empty: an activation after it is never reported)."""
    if isinstance(expr, (cst.List, cst.Tuple)) and all(isinstance(e, cst.Element) for e in expr.elements):
        return [(e.value, e) for e in expr.elements]
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return concatenated_layers(expr.left) + concatenated_layers(expr.right)
    return [(expr, None)]


def added_layer(statement: cst.CSTNode) -> Optional[tuple[str, str, cst.Call]]:
    """`layers.append(nn.ReLU())` -> ("append", "layers", the call); `net.add_module("relu", nn.ReLU())`
    -> ("add_module", "net", the call); `self.net.add_module(...)` -> ("add_module", "self.net", ...);
    `layers["relu1"] = nn.ReLU()` (also `layers["relu{}".format(i)]`, an f-string key) -> ("setitem",
    "layers", the call)."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.value, cst.Call):
        target = small.targets[0].target
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and key_template(target) is not None:
            return "setitem", target.value.value, small.value
        return None
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return None
    call = small.value
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in ("append", "add_module"):
        return None
    receiver = func.value
    if isinstance(receiver, cst.Name):
        text = receiver.value
    elif self_attr(receiver) is not None:
        text = "self." + self_attr(receiver)  # type: ignore[operator]
    else:
        return None
    position = 0 if func.attr.value == "append" else 1
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if len(positional) != position + 1 or len(call.args) != position + 1 or not isinstance(positional[position].value, cst.Call):
        return None
    return func.attr.value, text, positional[position].value  # type: ignore[return-value]


def empty_sequential_target(statement: cst.CSTNode, ctx) -> Optional[tuple[str, Optional[str]]]:
    """`net = nn.Sequential()` -> ("net", None); `self.body = nn.Sequential()` -> ("self.body", "body")."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return None
    small = statement.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1 or not isinstance(small.value, cst.Call):
        return None
    if small.value.args or torch_nn_name(ctx, small.value.func) != "Sequential":
        return None
    target = small.targets[0].target
    if isinstance(target, cst.Name):
        return target.value, None
    attribute = self_attr(target)
    return ("self." + attribute, attribute) if attribute is not None else None


def unpacked_into_sequential_only(scope: cst.CSTNode, name: str, ctx, helper: Optional[tuple[str, int]] = None) -> bool:
    """Is the list `name` turned into `nn.Sequential(*name)` in `scope` (a function's body, or a
    module) and otherwise only extended?  With `helper` (a function's name, a parameter position),
    a call of that function given the list there extends it too (list_helpers.py).  Where a line of
    the scope's own body rebinds the name to that Sequential (`mlp = nn.Sequential(*mlp)`, not in a
    loop or branch, and nothing binds the name after it), the name is the list only up to that line:
    after it, it is the Sequential, whose uses are a Sequential's (as `net = nn.Sequential(*layers)`)."""
    # once per scope and name: an asker may ask it for every pair of layers the scope adds
    return ctx.memo(("unpacked-into-sequential-only", id(scope), name, helper), lambda: _unpacked_into_sequential_only(scope, name, ctx, helper))  # type: ignore[return-value]


def _unpacked_into_sequential_only(scope: cst.CSTNode, name: str, ctx, helper: Optional[tuple[str, int]] = None) -> bool:
    nodes = _list_lifetime(scope, name, ctx)
    if nodes is None:
        nodes = list(code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)) if isinstance(scope, cst.Module) else code_descendants(scope))
    # `type(...) is` for isinstance: libcst's concrete node classes have no subclasses.
    if not any(
        type(node) is cst.Call
        and any(a.star == "*" and type(a.value) is cst.Name and a.value.value == name for a in node.args)
        and torch_nn_name(ctx, node.func) == "Sequential"
        for node in nodes
    ):
        return False
    for node in nodes:
        kind = type(node)
        if kind is cst.Call and any(type(a.value) is cst.Name and a.value.value == name for a in node.args):
            if torch_nn_name(ctx, node.func) != "Sequential" and not _extends_through(node, name, helper):
                return False  # passed somewhere else as well
        elif kind is cst.Subscript and type(node.value) is cst.Name and node.value.value == name:
            return False  # `layers[-1]` replaced or read
        elif kind is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:
            if node.attr.value not in ("append", "extend"):
                return False
    return True


def _list_lifetime(scope: cst.CSTNode, name: str, ctx) -> Optional[list[cst.CSTNode]]:
    """The nodes of `scope` where `name` is still the list: every line of its own body before `name
    = nn.Sequential(*name)` and that line's value; None where no such line (or the name is bound
    again after it: a second list)."""
    statements = scope.body if type(scope) in (cst.Module, cst.IndentedBlock) else ()  # type: ignore[attr-defined]
    for index, statement in enumerate(statements):
        value = _rebinds_to_its_sequential(statement, name, ctx)
        if value is None:
            continue
        if any(name in bound_names(later, nested=True) for later in statements[index + 1 :]):
            return None
        skip = (cst.FunctionDef, cst.ClassDef) if type(scope) is cst.Module else ()
        return [n for earlier in statements[:index] for n in (earlier, *code_descendants(earlier, skip=skip))] + [value, *code_descendants(value)]
    return None


def _rebinds_to_its_sequential(statement: cst.CSTNode, name: str, ctx) -> Optional[cst.Call]:
    """`name = nn.Sequential(*name)` as a whole line: the call; else None."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return None
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
        return None
    call = small.value
    if small.targets[0].target.value != name or type(call) is not cst.Call:  # type: ignore[attr-defined]
        return None
    if not any(a.star == "*" and type(a.value) is cst.Name and a.value.value == name for a in call.args):  # type: ignore[attr-defined]
        return None
    return call if torch_nn_name(ctx, call.func) == "Sequential" else None  # type: ignore[return-value]


def groups_unpacked_into_sequential_only(scope: cst.CSTNode, name: str, ctx) -> bool:
    """Is `name` a list of layer groups, each turned into its own `nn.Sequential(*name[i])` in `scope`
    (SPADE's discriminator: `sequence = [[conv, act]]`, `sequence += [[...]]`, then one Sequential per
    group, to read every group's output), and otherwise only extended and measured (`len(name)`)?
    Then each group's layers follow one another as listed."""
    nodes = list(code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)) if isinstance(scope, cst.Module) else code_descendants(scope))
    unpacked: set[int] = set()
    for node in nodes:
        if type(node) is cst.Call and torch_nn_name(ctx, node.func) == "Sequential":  # type: ignore[attr-defined]
            for argument in node.args:  # type: ignore[attr-defined]
                value = argument.value
                if argument.star == "*" and type(value) is cst.Subscript and type(value.value) is cst.Name and value.value.value == name:
                    if len(node.args) != 1:  # type: ignore[attr-defined]
                        return False  # other layers around the group: its first layer may follow one of them
                    unpacked.add(id(value))
    if not unpacked:
        return False
    for node in nodes:
        kind = type(node)
        if kind is cst.Call and any(type(a.value) is cst.Name and a.value.value == name for a in node.args):  # type: ignore[attr-defined]
            if not (type(node.func) is cst.Name and node.func.value == "len" and len(node.args) == 1):  # type: ignore[attr-defined]
                return False  # passed somewhere else as well
        elif kind is cst.Subscript and type(node.value) is cst.Name and node.value.value == name and id(node) not in unpacked:  # type: ignore[attr-defined]
            return False  # a group read, replaced or changed (`sequence[0][0] = ...`)
        elif kind is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:  # type: ignore[attr-defined]
            if node.attr.value not in ("append", "extend"):  # type: ignore[attr-defined]
                return False
    return True


def key_template(target: cst.Subscript) -> Optional[str]:
    """The literal part of a string key: `d["relu1"]` -> "relu1", `d["relu{}".format(i)]` -> "relu{}",
    `d[f"relu{i}"]` -> "relu{}"; None for any other key."""
    if len(target.slice) != 1 or not isinstance(target.slice[0].slice, cst.Index):
        return None
    key = target.slice[0].slice.value
    if isinstance(key, cst.SimpleString) and isinstance(key.evaluated_value, str):
        return "=" + key.evaluated_value
    if (
        isinstance(key, cst.Call) and isinstance(key.func, cst.Attribute) and key.func.attr.value == "format"
        and isinstance(key.func.value, cst.SimpleString) and isinstance(key.func.value.evaluated_value, str)
    ):  # fmt: skip
        return "{" + key.func.value.evaluated_value
    if isinstance(key, cst.FormattedString):
        return "{" + "".join(p.value if isinstance(p, cst.FormattedStringText) else "{}" for p in key.parts)
    return None


def dict_given_to_sequential_only(scope: cst.CSTNode, name: str, ctx) -> Optional[str]:
    """Is `name` bound once in `scope`, to an empty `OrderedDict()`, given only to `nn.Sequential(name)`
    and otherwise only filled by `name[<string key>] = ...` with keys of pairwise different literal
    parts (so that no key can move a layer: an OrderedDict keeps a key where it was first set)?
    Returns the name the Sequential is bound to ("" where it is not bound once), None where not."""
    nodes = list(code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)) if isinstance(scope, cst.Module) else code_descendants(scope))
    made = given = 0
    templates: dict[str, str] = {}
    bound: list[str] = []
    filled: set[int] = set()
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            value, targets = node.value, [t.target for t in node.targets]  # type: ignore[attr-defined]
            for target in targets:
                if type(target) is cst.Name and target.value == name:  # type: ignore[attr-defined]
                    if not (type(value) is cst.Call and not value.args and _ordered_dict(value.func, ctx)):  # type: ignore[attr-defined]
                        return None
                    made += 1
                elif type(target) is cst.Subscript and type(target.value) is cst.Name and target.value.value == name:  # type: ignore[attr-defined]
                    template = key_template(target)  # type: ignore[arg-type]
                    if template is None:
                        return None
                    # one template, one statement: `d["fc{}".format(i)]` in a loop sets a new key each turn
                    if templates.setdefault(template, str(id(node))) != str(id(node)):
                        return None
                    filled.add(id(target))
            if type(value) is cst.Call and torch_nn_name(ctx, value.func) == "Sequential":  # type: ignore[attr-defined]
                args = value.args  # type: ignore[attr-defined]
                if any(type(a.value) is cst.Name and a.value.value == name for a in args):
                    if len(args) != 1 or args[0].keyword is not None or args[0].star or len(targets) != 1:
                        return None
                    named = targets[0].value if type(targets[0]) is cst.Name else self_attr(targets[0])  # type: ignore[attr-defined]
                    bound.append(named or "")
        elif any(name in erring_names(target) for target in bound_by(node)):
            return None  # bound otherwise
    for node in nodes:
        kind = type(node)
        if kind is cst.Call and any(type(a.value) is cst.Name and a.value.value == name for a in node.args):  # type: ignore[attr-defined]
            if torch_nn_name(ctx, node.func) != "Sequential":  # type: ignore[attr-defined]
                return None  # passed somewhere else as well
            given += 1
        elif kind is cst.Subscript and type(node.value) is cst.Name and node.value.value == name and id(node) not in filled:  # type: ignore[attr-defined]
            return None  # read or deleted
        elif kind is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:  # type: ignore[attr-defined]
            return None  # `d.pop(...)`, `d.move_to_end(...)`, `d.update(...)`
    if made != 1 or given < 1:
        return None
    return bound[0] if len(bound) == 1 else ""


def _ordered_dict(func: cst.BaseExpression, ctx) -> bool:
    return ctx.resolve(func) in ("collections.OrderedDict", "typing.OrderedDict")


def sequential_bound_to(scope: cst.CSTNode, name: str, ctx) -> Optional[str]:
    """The name the one `nn.Sequential(*name)` of `scope` is bound to (`self.mlp = nn.Sequential(*layers)`
    -> "mlp", `net = ...` -> "net"): the name whose element changes (`self.mlp[0] = ...`) would
    change its layers; None where it is not bound so once (then any element change of the file counts)."""
    # once per scope and name: an asker may ask it for every pair of layers the scope adds
    return ctx.memo(("sequential-bound-to", id(scope), name), lambda: _sequential_bound_to(scope, name, ctx))  # type: ignore[return-value]


def _sequential_bound_to(scope: cst.CSTNode, name: str, ctx) -> Optional[str]:
    bound: list[str] = []
    for node in code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)) if isinstance(scope, cst.Module) else code_descendants(scope):
        if type(node) is not cst.Assign or type(node.value) is not cst.Call:  # type: ignore[attr-defined]
            continue
        call = node.value  # type: ignore[attr-defined]
        if not any(a.star == "*" and type(a.value) is cst.Name and a.value.value == name for a in call.args):
            continue
        if torch_nn_name(ctx, call.func) != "Sequential" or len(node.targets) != 1:  # type: ignore[attr-defined]
            return None
        target = node.targets[0].target  # type: ignore[attr-defined]
        named = target.value if type(target) is cst.Name else self_attr(target)
        if named is None:
            return None
        bound.append(named)
    return bound[0] if len(bound) == 1 else None


def sequential_unpacking(scope: cst.CSTNode, name: str, ctx) -> Optional[cst.Call]:
    """The one `nn.Sequential(*name)` of `scope` (a function's body), wherever its value goes
    (`self.mlps.append(nn.Sequential(*layers))`); None where there is not exactly one."""
    # once per scope and name: an asker may ask it for every pair of layers the scope adds
    return ctx.memo(("sequential-unpacking", id(scope), name), lambda: _sequential_unpacking(scope, name, ctx))  # type: ignore[return-value]


def _sequential_unpacking(scope: cst.CSTNode, name: str, ctx) -> Optional[cst.Call]:
    found = [
        node for node in code_descendants(scope)
        if type(node) is cst.Call and any(a.star == "*" and type(a.value) is cst.Name and a.value.value == name for a in node.args)  # type: ignore[attr-defined]
        and torch_nn_name(ctx, node.func) == "Sequential"  # type: ignore[attr-defined]
    ]  # fmt: skip
    return found[0] if len(found) == 1 else None  # type: ignore[return-value]


def _extends_through(call: cst.Call, name: str, helper: Optional[tuple[str, int]]) -> bool:
    """Is `call` the helper's, given the list `name` at the helper's list position only?"""
    if helper is None or type(call.func) is not cst.Name or call.func.value != helper[0]:
        return False
    given = [i for i, a in enumerate(call.args) if type(a.value) is cst.Name and a.value.value == name]
    return given == [helper[1]] and not any(a.star or a.keyword is not None for a in call.args[: helper[1] + 1])
