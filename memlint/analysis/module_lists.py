"""What the elements of a class's `nn.ModuleList` are: `self.fc_layers[i](y)` runs one of them.

    layers = [nn.Linear(d // 2**l, d // 2**(l + 1)) for l in range(L)]
    layers.append(nn.Linear(d // 2**L, out))
    self.fc_layers = nn.ModuleList(layers)

or `self.batch_norms = nn.ModuleList()` filled by `self.batch_norms.append(nn.BatchNorm1d(h))` in a
loop: every element is a layer of a known `torch.nn` class.  The classes are known when every way
an element enters the list is seen: the constructor's argument (nothing, a list display or
comprehension of layer calls, a `+` of such lists, or a name the same function binds to one and
only extends with `.append(layer)` / `.extend([...])`; an element may be a conditional expression
whose every branch is a layer call: nerf's `[nn.Linear(d, w)] + [nn.Linear(w, w) if i not in skips
else nn.Linear(w + d, w) for i in range(n)]`), and every `.append` / `.extend` on an attribute of that
name anywhere in the file.  Anything else the file does with the name's list (`+=`, `insert`, an
element replaced, the list passed elsewhere) leaves them unknown (None).  Whether the attribute
is bound once, and whether hooks see its elements, is module_changes' question.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from memlint.analysis.bindings import alternatives, bound_by, bound_targets, erring_names
from memlint.analysis.initialisers import built_layer
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.walk import code_descendants, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def element_classes(ctx: "Context", init: cst.FunctionDef, attribute: str, named: bool = False) -> Optional[frozenset[str]]:
    """The `torch.nn` classes of the elements of `self.<attribute> = nn.ModuleList(...)` (or of a
    plain list, `self.<attribute> = []`) bound in `init` (a constructor); None where an element may
    be anything else.  With `named`, an element the constructor appends may also be a name it binds
    once to a layer call (PointRend's `fc = nn.Linear(...)`, `self.add_module("fc1", fc)`,
    `self.fcs.append(fc)`): that layer is reachable by another name too, so the asker makes sure no
    hook of the file may see it."""
    made = _constructed(init, attribute, ctx)
    if made is None:
        return None
    call, classes = made
    extra = _added_in_file(ctx, attribute, names=_layer_names(init, ctx) if named else None)
    if extra is None:
        return None
    return frozenset(classes | extra)


_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


class _Named(NamedTuple):
    """Names a constructor binds once to a layer call, and the calls inside that constructor (an
    `.append(name)` elsewhere appends whatever that function's own `name` is)."""

    layers: dict
    inside: frozenset


def _layer_names(init: cst.FunctionDef, ctx: "Context") -> _Named:
    counts: dict[str, int] = {}
    values: dict[str, cst.Call] = {}
    for target, value in bound_targets(init.body):
        for name in erring_names(target):
            counts[name] = counts.get(name, 0) + 1
            if type(target) is cst.Name and type(value) is cst.Call:
                values[name] = value  # type: ignore[assignment]
    parameters = {p.name.value for p in _parameters(init)}
    layers = {n: v for n, v in values.items() if counts[n] == 1 and n not in parameters}
    # (a comprehension is a scope of its own: `[self.fcs.append(fc) for fc in extra]` appends its own `fc`)
    inside = frozenset(id(n) for n in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda) + _COMPREHENSIONS) if type(n) is cst.Call)
    return _Named(layers, inside)


def nested_element_classes(ctx: "Context", init: cst.FunctionDef, attribute: str) -> Optional[frozenset[str]]:
    """The `torch.nn` classes of the elements of the elements of `self.<attribute>`, a ModuleList
    of ModuleLists (pointnet2's `bns = nn.ModuleList()` filled with `bns.append(nn.BatchNorm2d(c))`,
    then `self.bn_blocks.append(bns)`: `self.bn_blocks[i][j]` is a BatchNorm2d).  Every element of
    the outer list is such a local list of `init`; nothing in the file adds to an inner list
    through the outer one (`self.bn_blocks[i].append(...)`).  None where that is not known."""
    made = _constructed(init, attribute, ctx, init)
    if made is None or _inner_lists_extended(ctx, attribute):
        return None
    extra = _added_in_file(ctx, attribute, init)
    if extra is None:
        return None
    return frozenset(made[1] | extra)


def _inner_lists_extended(ctx: "Context", attribute: str) -> bool:
    for node in code_descendants(ctx.module):
        if type(node) is cst.Call and type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
            receiver = node.func.value  # type: ignore[attr-defined]
            if type(receiver) is cst.Subscript and type(receiver.value) is cst.Attribute and receiver.value.attr.value == attribute:  # type: ignore[attr-defined]
                return True
    return False


def _constructed(init: cst.FunctionDef, attribute: str, ctx: "Context", lists_of: Optional[cst.FunctionDef] = None) -> Optional[tuple[cst.Call, set[str]]]:
    found: list[tuple[cst.Call, set[str]]] = []
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Assign or len(node.targets) != 1:  # type: ignore[attr-defined]
            continue
        target = node.targets[0].target  # type: ignore[attr-defined]
        if not (type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self" and target.attr.value == attribute):
            continue
        value = node.value  # type: ignore[attr-defined]
        if type(value) is cst.List and not value.elements and lists_of is None:  # type: ignore[attr-defined]
            found.append((value, set()))  # a plain list the file fills by `.append` (PointRend's `self.fcs = []`)
            continue
        if type(value) is not cst.Call or torch_nn_name(ctx, value.func) != "ModuleList" or ctx.resolve(value.func) is None:
            return None
        if not value.args:
            found.append((value, set()))
            continue
        if len(value.args) != 1 or value.args[0].keyword is not None or value.args[0].star:
            return None
        classes = _list_classes(value.args[0].value, init, ctx, lists_of)
        if classes is None:
            return None
        found.append((value, classes))
    return found[0] if len(found) == 1 else None


def _list_classes(
    expr: cst.BaseExpression, scope: cst.FunctionDef, ctx: "Context", lists_of: Optional[cst.FunctionDef] = None
) -> Optional[set[str]]:
    """The layer classes of a list display, a list comprehension, or a name `scope` binds once to one
    of those (or to an empty `nn.ModuleList()`) and otherwise only extends with layers and hands to
    the ModuleList.  With `lists_of`, the elements are names of such lists of that function, and
    the classes are those of their elements."""
    kind = type(expr)
    if kind in (cst.List, cst.Tuple):
        return _classes_of([e.value for e in expr.elements], ctx, lists_of)  # type: ignore[attr-defined]
    if kind in (cst.ListComp, cst.GeneratorExp):
        return _classes_of([expr.elt], ctx, lists_of)  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:  # `[nn.Linear(i, w)] + [nn.Linear(w, w) for _ in range(n)]`: both parts' elements
        return _concatenated_classes(expr, scope, ctx, lists_of)  # type: ignore[arg-type]
    if kind is not cst.Name:
        return None
    name = expr.value  # type: ignore[attr-defined]
    classes: set[str] = set()
    bound = 0
    for node in code_descendants(scope.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):  # type: ignore[attr-defined]
            bound += 1
            value = node.value  # type: ignore[attr-defined]
            if len(node.targets) != 1:  # type: ignore[attr-defined]
                return None
            if type(value) is cst.Call and not value.args and torch_nn_name(ctx, value.func) == "ModuleList":  # type: ignore[attr-defined]
                continue  # `bns = nn.ModuleList()`: only its extensions add elements
            if type(value) not in (cst.List, cst.ListComp) and not _is_concatenation(value):
                return None
            inner = _list_classes(value, scope, ctx, lists_of)
            if inner is None:
                return None
            classes |= inner
    if bound != 1:
        return None
    uses = [n for n in code_descendants(scope.body) if type(n) is cst.Name and n.value == name]  # type: ignore[attr-defined]
    extended = _extensions(scope.body, lambda receiver: type(receiver) is cst.Name and receiver.value == name, ctx, lists_of)  # type: ignore[attr-defined]
    if extended is None:
        return None
    added, count = extended
    # every use: its binding, its extensions, and the ModuleList's argument
    return classes | added if len(uses) == 1 + count + 1 else None


def _is_concatenation(expr: cst.BaseExpression) -> bool:
    """`a + b` of list displays and comprehensions (nested: `a + b + c`)."""
    if type(expr) is not cst.BinaryOperation or type(expr.operator) is not cst.Add:  # type: ignore[attr-defined]
        return False
    return all(type(part) in (cst.List, cst.ListComp) or _is_concatenation(part) for part in (expr.left, expr.right))  # type: ignore[attr-defined]


def _concatenated_classes(
    expr: cst.BinaryOperation, scope: cst.FunctionDef, ctx: "Context", lists_of: Optional[cst.FunctionDef]
) -> Optional[set[str]]:
    """The layer classes of a `+` of list displays and comprehensions (nerf's `[nn.Linear(i, w)] +
    [nn.Linear(w, w) ... for i in range(d - 1)]`): a list holding the elements of each part; None
    where a part is anything else (a name, a call: what it holds is not read here)."""
    if not _is_concatenation(expr):
        return None
    classes: set[str] = set()
    for part in (expr.left, expr.right):
        inner = _list_classes(part, scope, ctx, lists_of)
        if inner is None:
            return None
        classes |= inner
    return classes


def _added_in_file(ctx: "Context", attribute: str, lists_of: Optional[cst.FunctionDef] = None, names: Optional[_Named] = None) -> Optional[set[str]]:
    """The classes `.append` / `.extend` add to any `<x>.<attribute>` of the file; None where another
    method changes such a list (`insert`, `+=` and element replacement are module_changes' to see,
    but a list handed on could be changed anywhere)."""
    def receiver_is(receiver: cst.BaseExpression) -> bool:
        return type(receiver) is cst.Attribute and receiver.attr.value == attribute  # type: ignore[attr-defined]

    extended = _extensions(ctx.module, receiver_is, ctx, lists_of, names)
    if extended is None:
        return None
    added, _ = extended
    for node in code_descendants(ctx.module):
        if type(node) is cst.AugAssign and receiver_is(node.target):  # type: ignore[attr-defined]
            return None
    return added


def _extensions(
    scope: cst.CSTNode, receiver_is, ctx: "Context", lists_of: Optional[cst.FunctionDef] = None, names: Optional[_Named] = None
) -> Optional[tuple[set[str], int]]:
    """The classes of the layers `.append(layer)` / `.extend([layers])` add to the receivers
    `receiver_is` accepts, and how many such calls there are; None where one adds anything else."""
    classes: set[str] = set()
    count = 0
    for node in code_descendants(scope):
        if type(node) is not cst.Call or type(node.func) is not cst.Attribute or not receiver_is(node.func.value):  # type: ignore[attr-defined]
            continue
        method = node.func.attr.value  # type: ignore[attr-defined]
        args = node.args  # type: ignore[attr-defined]
        if method not in ("append", "extend") or len(args) != 1 or args[0].keyword is not None or args[0].star:
            continue  # another method: `insert` / `pop` are element changes (module_changes)
        value = args[0].value
        if method == "append" and type(value) is cst.Name and names is not None and id(node) in names.inside and value.value in names.layers:  # type: ignore[attr-defined]
            value = names.layers[value.value]  # type: ignore[attr-defined]
        inner = _classes_of([value], ctx, lists_of) if method == "append" else (
            _classes_of([e.value for e in value.elements], ctx, lists_of) if type(value) in (cst.List, cst.Tuple) else None  # type: ignore[attr-defined]
        )
        if inner is None:
            return None
        classes |= inner
        count += 1
    return classes, count


def _classes_of(elements: list[cst.BaseExpression], ctx: "Context", lists_of: Optional[cst.FunctionDef] = None) -> Optional[set[str]]:
    """The layer classes of `elements`; with `lists_of`, of the elements of the lists they name
    there (an inner list's own elements are layers)."""
    classes: set[str] = set()
    for element in elements:
        if lists_of is not None:
            inner = _list_classes(element, lists_of, ctx) if type(element) is cst.Name else None
            if inner is None:
                return None
            classes |= inner
            continue
        for choice in alternatives(element):  # `nn.Linear(w, w) if i not in skips else nn.Linear(w + d, w)`: either
            if type(choice) is not cst.Call:
                return None
            kind = torch_nn_name(ctx, built_layer(ctx, choice).func)  # type: ignore[arg-type]
            if kind is None:
                return None
            classes.add(kind)
    return classes


class ListElement(NamedTuple):
    """An element of `self.<attribute>` (depth 1) or of one of its elements (depth 2)."""

    attribute: str
    depth: int


def element_list(function: cst.FunctionDef, name: str, at: Optional[cst.CSTNode] = None) -> Optional[ListElement]:
    """The attribute whose elements `name` holds wherever it is read in `function`: the one binding
    of the name there is the target of `for name in self.<attribute>:`, a position of
    `for a, name in zip(self.<x>, self.<attribute>):` (hifi-gan's `for l in self.convs: x = l(x)`),
    or `name = self.<attribute>[i]` (pointnet2's `bn = self.mlp_bns[i]`, also `self.bn_blocks[i][j]`),
    and it is no parameter.  None where anything else binds it.  With `at` (a node that reads the
    name), where every binding is such a loop (PointRend's `for layer in self.conv_layers: ...`, then
    `for layer in self.fcs: x = F.relu(layer(x))`): the one whose body holds `at`, where nothing
    else in that body binds the name (there the loop's own target is what the name holds)."""
    if any(p.name.value == name for p in _parameters(function)):
        return None
    found: Optional[ListElement] = None
    bindings = 0
    loops: list[tuple[cst.For, ListElement]] = []
    for node in code_descendants(function.body):
        kind = type(node)
        if kind is cst.For:
            attribute = _element_source(node.target, node.iter, name)  # type: ignore[attr-defined]
            if attribute is not None:
                found, bindings = ListElement(attribute, 1), bindings + 1
                loops.append((node, found))  # type: ignore[arg-type]
            elif name in erring_names(node.target):  # type: ignore[attr-defined]
                return None
        elif kind is cst.Assign:
            targets = node.targets  # type: ignore[attr-defined]
            if not any(name in erring_names(t.target) for t in targets):
                continue
            element = indexed_element(node.value) if len(targets) == 1 and type(targets[0].target) is cst.Name else None  # type: ignore[attr-defined]
            if element is None:
                return None
            found, bindings = element, bindings + 1
        elif any(name in erring_names(target) for target in bound_by(node, declarations=True)):
            return None  # bound otherwise (`with ... as`, `+=`, an import, `del`, `global`, ...)
    if bindings > 1 and at is not None and len(loops) == bindings:
        return _loop_binding(loops, name, at)
    return found if bindings == 1 else None


def _loop_binding(loops: list, name: str, at: cst.CSTNode) -> Optional[ListElement]:
    """The element of the one loop of `loops` whose body holds `at` and binds `name` nowhere else."""
    holding = [
        (loop, element) for loop, element in loops
        if any(n is at for n in code_descendants(loop.body))
    ]  # fmt: skip
    if len(holding) != 1:
        return None  # (nested loops binding the same name: which one is not read here)
    loop, element = holding[0]
    for node in code_descendants(loop.body):
        if any(name in erring_names(target) for target in bound_by(node, declarations=True)):
            return None
    return element


def indexed_element(expr: cst.BaseExpression) -> Optional[ListElement]:
    """`self.<attribute>[i]` (depth 1) or `self.<attribute>[i][j]` (depth 2, an element of an
    element): one element whichever the index is (a slice is a list, not an element)."""
    depth = 0
    while type(expr) is cst.Subscript:
        parts = expr.slice  # type: ignore[attr-defined]
        if len(parts) != 1 or type(parts[0].slice) is not cst.Index or parts[0].slice.star is not None:
            return None
        expr, depth = expr.value, depth + 1  # type: ignore[attr-defined]
    attribute = self_attr(expr)
    return ListElement(attribute, depth) if attribute is not None and 1 <= depth <= 2 else None


def _element_source(target: cst.BaseExpression, iterable: cst.BaseExpression, name: str) -> Optional[str]:
    """`for name in self.<attribute>` / `for ..., name, ... in zip(self.<a>, self.<attribute>, ...)`."""
    if type(target) is cst.Name:
        return self_attr(iterable) if target.value == name else None  # type: ignore[attr-defined]
    if type(target) not in (cst.Tuple, cst.List) or type(iterable) is not cst.Call:
        return None
    func = iterable.func  # type: ignore[attr-defined]
    if type(func) is not cst.Name or func.value != "zip" or any(a.keyword or a.star for a in iterable.args):  # type: ignore[attr-defined]
        return None
    elements = target.elements  # type: ignore[attr-defined]
    if len(elements) != len(iterable.args):  # type: ignore[attr-defined]
        return None
    for element, argument in zip(elements, iterable.args):  # type: ignore[attr-defined]
        if type(element.value) is cst.Name and element.value.value == name:
            return self_attr(argument.value)
    return None


def _parameters(function: cst.FunctionDef):
    params = function.params
    yield from params.posonly_params
    yield from params.params
    yield from params.kwonly_params
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            yield star
