"""Layers built through a name that stands for a normalisation layer, where the file does not name
torch's class itself: a constructor parameter (`norm_layer(c)`, deeplab's `BatchNorm(planes)`) or a
project class named as a torch norm (`SynchronizedBatchNorm2d`, also through a module-level alias
`BatchNorm2d = SynchronizedBatchNorm2d`).

Why a rule may rely on it: torch's norm layers (BatchNorm, SyncBatchNorm, InstanceNorm, GroupNorm,
LayerNorm) keep their input and statistics for backward, never their output, so an activation right
after one may overwrite that output (ML003).  The role is read from the name (the project pass does
not say which classes another file passes in); every value the file itself shows for the parameter
can veto it: its default, what the function rebinds it to, and what every call of the function (or
of the class whose constructor it is) in the file passes, followed through the callers' own
parameters.  A parameter the file shows no value for counts only where its name is a torch norm
class's (deeplab's `BatchNorm`): a generic `norm_layer` may be a norm-and-activation layer of the
caller's (timm's `BatchNormAct2d`), whose activation may keep its output.  `None` is no value (the call cannot run with it); anything that is not a norm class
(`nn.Identity`, a factory, an expression the file cannot resolve) makes the answer unknown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import exact_names_bound_by
from memlint.analysis.initialisers import resolve_global
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.tables import NORM_CLASS_NAME, NORM_PARAMETER_NAME, TORCH_NORM_CLASSES
from memlint.analysis.walk import own_nodes
from memlint.pipeline.tree import code_children

if TYPE_CHECKING:
    from memlint.analysis.context import Context

TORCH_NORMS = TORCH_NORM_CLASSES
_NORM_CLASS, _NORM_PARAMETER = NORM_CLASS_NAME, NORM_PARAMETER_NAME
_MAX_DEPTH = 3


@dataclass(frozen=True)
class NormLayer:
    kinds: tuple[str, ...]  # the norm classes the file shows ("BatchNorm2d", "SynchronizedBatchNorm2d"); () where none
    described: str  # for a message: "`norm_layer(...)` (`nn.BatchNorm2d` or `nn.InstanceNorm2d`)"


def norm_built(ctx: "Context", call: cst.Call, function: Optional[cst.FunctionDef]) -> Optional[NormLayer]:
    """The norm layer `call` builds where its callee is a name that stands for one (see the module
    docstring); None where it is not such a call or a value the file shows is something else.
    `function`: the function the call is in (its parameters are the names looked at)."""
    func = call.func
    if type(func) is not cst.Name:
        return None
    name = func.value
    if function is not None and _parameter(function, name) is not None:
        if not _NORM_PARAMETER.search(name):
            return None
        kinds = _parameter_values(ctx, function, name, 0)
        if kinds is None or (not kinds and not _NORM_CLASS.search(name)):
            return None  # `norm_layer` with no value in the file may be anything a caller makes (a norm + act layer)
        shown = " or ".join(f"`nn.{k}`" if k in TORCH_NORMS else f"`{k}`" for k in kinds) if kinds else "a norm layer passed in"
        return NormLayer(kinds, f"`{name}(...)` ({shown})")
    project = _project_norm(ctx, func)
    if project is None:
        return None
    return NormLayer((project,), f"`{name}` (`{project}`, a project norm class)")


def _parameter(function: cst.FunctionDef, name: str) -> Optional[cst.Param]:
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return param
    return None


def _norm_class(ctx: "Context", expr: cst.BaseExpression) -> Optional[str]:
    """The norm class `expr` names (`nn.BatchNorm2d`, `partial(nn.GroupNorm, 32)`, a project norm class)."""
    if type(expr) is cst.Call and (resolve_global(ctx, expr.func) or "").endswith("functools.partial") and expr.args:
        return _norm_class(ctx, expr.args[0].value)
    kind = torch_nn_name(ctx, expr)
    if kind is not None:
        return kind if kind in TORCH_NORMS else None
    return _project_norm(ctx, expr)


def _project_norm(ctx: "Context", expr: cst.BaseExpression) -> Optional[str]:
    qualified = resolve_global(ctx, expr)
    if qualified is None or qualified.startswith("torch."):
        return None
    last = qualified.rsplit(".", 1)[-1]
    return last if last[:1].isupper() and _NORM_CLASS.search(last) else None


def _parameter_values(ctx: "Context", function: cst.FunctionDef, name: str, depth: int) -> Optional[tuple[str, ...]]:
    """The norm classes the parameter may hold, as far as the file shows; None where one value is not a norm."""
    found: list[str] = []
    param = _parameter(function, name)
    values: list[cst.BaseExpression] = []
    if param is not None and param.default is not None:
        values.append(param.default)
    for node in own_nodes(function):
        if type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):
            value = node.value
            if type(value) is cst.BooleanOperation and type(value.operator) is cst.Or:  # `norm_layer or nn.BatchNorm2d`
                values.extend(v for v in (value.left, value.right) if not (type(v) is cst.Name and v.value == name))
            else:
                values.append(value)
        elif type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr) and name in exact_names_bound_by(node):
            return None
    for value in values:
        if type(value) is cst.Name and value.value == "None":
            continue
        kind = _norm_class(ctx, value)
        if kind is None:
            return None
        found.append(kind)
    for caller, argument in _arguments_passed(ctx, function, name):
        if argument is None:
            return None  # `*args` / `**kwargs`: what it passes is not known
        if type(argument) is cst.Name and argument.value == "None":
            continue
        if type(argument) is cst.Name and caller is not None and _parameter(caller, argument.value) is not None:
            if depth >= _MAX_DEPTH:
                return None
            passed = _parameter_values(ctx, caller, argument.value, depth + 1)
            if passed is None:
                return None
            found.extend(passed)
            continue
        kind = _norm_class(ctx, argument)
        if kind is None:
            return None
        found.append(kind)
    return tuple(dict.fromkeys(found))


def _arguments_passed(ctx: "Context", function: cst.FunctionDef, name: str) -> list[tuple[Optional[cst.FunctionDef], Optional[cst.BaseExpression]]]:
    """Per call of `function` in the file (by its name, or by its class's name for `__init__`): the
    function the call is in and the argument bound to the parameter `name` (None where a star
    argument may bind it; calls that leave it to its default are left out)."""
    owner = _owners(ctx).get(id(function))
    callee = owner if function.name.value == "__init__" and owner is not None else function.name.value
    params = [*function.params.posonly_params, *function.params.params]
    if function.name.value == "__init__" or (owner is not None and params and params[0].name.value in ("self", "cls")):
        params = params[1:]
    position = next((i for i, p in enumerate(params) if p.name.value == name), None)
    passed: list[tuple[Optional[cst.FunctionDef], Optional[cst.BaseExpression]]] = []
    if function.name.value == "__init__" and owner in _extended(ctx):
        passed.append((None, None))  # a subclass's constructor passes its own values through `super().__init__(...)`
    for call, caller in _calls(ctx).get(callee, ()):
        if any(a.star for a in call.args):
            passed.append((caller, None))
            continue
        keyword = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None)
        positional = [a.value for a in call.args if a.keyword is None]
        if keyword is not None:
            passed.append((caller, keyword))
        elif position is not None and position < len(positional):
            passed.append((caller, positional[position]))
    return passed


def _calls(ctx: "Context") -> dict[str, list[tuple[cst.Call, Optional[cst.FunctionDef]]]]:
    """Calls of a plain name in the file, by that name, each with the function it is in (once per file)."""
    return _indexed(ctx)[0]


def _extended(ctx: "Context") -> frozenset[str]:
    """Names of the file's classes that a class of the file derives from and defines `__init__` in (once per file)."""
    return _indexed(ctx)[2]


def _owners(ctx: "Context") -> dict[int, str]:
    """id(method) -> the name of the class it is defined in (once per file)."""
    return _indexed(ctx)[1]


def _indexed(ctx: "Context") -> tuple[dict, dict, frozenset[str]]:
    return ctx.memo("norm-layers-index", lambda: _index(ctx.module))  # type: ignore[return-value]


def _index(module: cst.Module) -> tuple[dict, dict, frozenset[str]]:
    calls: dict[str, list[tuple[cst.Call, Optional[cst.FunctionDef]]]] = {}
    owners: dict[int, str] = {}
    extended: set[str] = set()
    stack: list[tuple[cst.CSTNode, Optional[cst.FunctionDef], Optional[str]]] = [(module, None, None)]
    while stack:
        node, function, klass = stack.pop()
        kind = type(node)
        if kind is cst.Call and type(node.func) is cst.Name:  # type: ignore[attr-defined]
            calls.setdefault(node.func.value, []).append((node, function))  # type: ignore[attr-defined]
        if kind is cst.FunctionDef:
            if klass is not None:
                owners[id(node)] = klass
            function, klass = node, None  # type: ignore[assignment]
        elif kind is cst.ClassDef:
            klass = node.name.value  # type: ignore[attr-defined]
            body = node.body.body if type(node.body) is cst.IndentedBlock else ()  # type: ignore[attr-defined]
            if any(type(s) is cst.FunctionDef and s.name.value == "__init__" for s in body):
                extended.update(b.value.value for b in node.bases if type(b.value) is cst.Name)  # type: ignore[attr-defined]
        stack.extend((child, function, klass) for child in code_children(node))
    return calls, owners, frozenset(extended)


def norm_attributes(ctx: "Context", class_node: cst.ClassDef) -> frozenset[str]:
    """The attributes the class's constructor binds to such a norm layer (`self.bn = BatchNorm(planes)`),
    in its body or a branch of it (whether it is bound once in the file is the caller's question).
    Once per class: every method of the class asks."""
    return ctx.memo(("norm-attributes", id(class_node)), lambda: _norm_attributes(ctx, class_node))  # type: ignore[return-value]


def _norm_attributes(ctx: "Context", class_node: cst.ClassDef) -> frozenset[str]:
    init = next(
        (s for s in class_node.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None
    ) if type(class_node.body) is cst.IndentedBlock else None
    if init is None:
        return frozenset()
    found: set[str] = set()
    for node in own_nodes(init):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.value) is not cst.Call:
            continue
        target = node.targets[0].target
        if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
            if norm_built(ctx, node.value, init) is not None:  # type: ignore[arg-type]
                found.add(target.attr.value)
    return frozenset(found)
