"""Calls that return the layer they are given: initialisers and weight reparameterisations.

`self.conv1 = layer_init(nn.Conv2d(...))`, `init_(nn.Linear(...))`, `weight_norm(nn.Linear(...))`
build the inner layer: what the file knows of `nn.Conv2d(...)` it knows of the wrapped call.  A
helper of the file counts when every definition of it returns its first parameter (or is a lambda
over such a helper); an imported helper (also one that only a star import can bring, `from
.network_utils import *`) when it is named as an initialiser (`init`, `init_`, `layer_init`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, erring_names, exact_names_bound_by, local_names, parameter_names
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Weight reparameterisations that return the layer they are given (its output is still not needed
# for backward: they change how the weight is computed, not what the layer saves).
REPARAMETRIZATIONS = frozenset(
    {"torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm", "torch.nn.utils.parametrizations.weight_norm",
     "torch.nn.utils.parametrizations.spectral_norm", "torch.nn.utils.parametrizations.orthogonal",
     "torch.nn.utils.weight_norm.weight_norm", "torch.nn.utils.spectral_norm.spectral_norm"}
)  # fmt: skip


def unwrapped_layer(ctx: "Context", layer: cst.Call) -> cst.Call:
    """The call inside initialisers and reparameterisations that return it (up to four deep);
    `layer` itself when it is not such a wrapper."""
    for _ in range(4):
        inner = layer.args[0].value if layer.args and layer.args[0].keyword is None and not layer.args[0].star else None
        if not isinstance(inner, cst.Call) or not returns_its_argument(ctx, layer.func):
            return layer
        layer = inner
    return layer


def built_layer(ctx: "Context", call: cst.Call, functions: Optional[list[cst.FunctionDef]] = None) -> cst.Call:
    """The layer call a call builds: through the wrappers of `unwrapped_layer`, and through a
    factory of the file whose every definition returns a call of one and the same `torch.nn` class
    (`def conv1x1(i, o): return nn.Conv2d(i, o, 1, bias=False)`): what the file knows of that
    returned call it knows of the factory's call.  `call` itself (unwrapped) otherwise, also where
    a function around the call binds the called name itself (`def seq(d, Linear)`: a parameter
    hides the file's `Linear`): `functions`, those around it, by default the traversal's."""
    layer = unwrapped_layer(ctx, call)
    if not isinstance(layer.func, cst.Name):
        return layer
    name = layer.func.value
    if bound_around(ctx, name, functions):
        return layer
    returned = ctx.memo(("factory-layer", name), lambda: _factory_layer(ctx, name))
    return unwrapped_layer(ctx, returned) if returned is not None else layer  # type: ignore[arg-type]


def bound_around(ctx: "Context", name: str, functions: Optional[list[cst.FunctionDef]] = None) -> bool:
    """Does one of `functions` (by default those the traversal is in) bind `name` in its own scope
    (a parameter, a local), so that a read of `name` there is not the module's?"""
    if functions is None:
        functions = [f.node for f in getattr(ctx, "frames", ()) if f.kind == "function" and isinstance(f.node, cst.FunctionDef)]  # type: ignore[misc]
    return any(name in ctx.memo(("non-def-local-names", id(f)), lambda f=f: _bound_not_by_def(f)) for f in functions)  # type: ignore[operator]


def _bound_not_by_def(function: cst.FunctionDef) -> set[str]:
    """`local_names` less the names only a nested `def` binds: a factory defined inside a
    constructor (`def conv1x1(i, o): ...` in `__init__`) is one of the file's definitions."""
    names = local_names(function)
    defs = {n.name.value for n in code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.FunctionDef}  # type: ignore[attr-defined]
    others = set(parameter_names(function))
    for node in code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.FunctionDef:
            others.update(exact_names_bound_by(node))
    return names - (defs - others)


def _factory_layer(ctx: "Context", name: str) -> Optional[cst.Call]:
    definitions = _definitions(ctx).get(name)
    if not definitions:
        return None
    calls: list[cst.Call] = []
    for definition in definitions:
        if not isinstance(definition, cst.FunctionDef) or definition.decorators:
            return None
        returned = _returned_calls(definition)
        if not returned or None in returned:
            return None
        calls.extend(returned)  # type: ignore[arg-type]
    built = {resolve_global(ctx, unwrapped_layer(ctx, c).func) for c in calls}
    if len(built) != 1:
        return None
    (qualified,) = built
    return calls[0] if qualified is not None and qualified.startswith("torch.nn.") else None


# What a factory may do to the layer it built before returning it: initialise its parameters.
_INITIALISED = frozenset({"weight", "bias"})


def _returned_calls(definition: cst.FunctionDef) -> list[Optional[cst.Call]]:
    """The call each `return` of a factory gives back (None where one gives back something else):
    `return nn.Conv2d(...)`, or `return m` where the function binds `m` once, to a call (`m =
    nn.Linear(i, o)`), and mentions it otherwise only to initialise its parameters
    (`nn.init.xavier_uniform_(m.weight)`, `m.bias.data.zero_()`): it returns that very layer, not
    wrapped, hooked or replaced.  One walk of the factory's own statements, and one of the whole
    function only where a `return` gives back a name."""
    own = list(code_descendants(definition.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)))
    values = [n.value for n in own if type(n) is cst.Return]  # type: ignore[attr-defined]
    names = {v.value for v in values if type(v) is cst.Name}  # type: ignore[union-attr]
    kept: dict[str, Optional[cst.Call]] = {}
    if names:
        bindings: dict[str, list[cst.CSTNode]] = {}
        for node in own:
            for bound in exact_names_bound_by(node, parameters=True, declarations=True):
                if bound in names:
                    bindings.setdefault(bound, []).append(node)
        counts = {name: [0, 0, 0] for name in names}  # mentions, initialised, returned
        for node in code_descendants(definition):  # nested functions too: a closure over it is a use
            kind = type(node)
            if kind is cst.Name and node.value in counts:  # type: ignore[attr-defined]
                counts[node.value][0] += 1  # type: ignore[attr-defined]
            elif kind is cst.Attribute and type(node.value) is cst.Name and node.value.value in counts and node.attr.value in _INITIALISED:  # type: ignore[attr-defined]
                counts[node.value.value][1] += 1  # type: ignore[attr-defined]
            elif kind is cst.Return and type(node.value) is cst.Name and node.value.value in counts:  # type: ignore[attr-defined]
                counts[node.value.value][2] += 1  # type: ignore[attr-defined]
        parameters = parameter_names(definition)
        for name in names:
            kept[name] = _kept_layer(name, parameters, bindings.get(name, []), counts[name])
    return [v if type(v) is cst.Call else kept.get(v.value) if type(v) is cst.Name else None for v in values]  # type: ignore[misc,union-attr]


def _kept_layer(name: str, parameters: set[str], bindings: list[cst.CSTNode], counts: list[int]) -> Optional[cst.Call]:
    """The call `name` is bound to where the factory binds it once, to a call, and mentions it
    otherwise only to initialise it and return it."""
    if name in parameters or len(bindings) != 1 or type(bindings[0]) is not cst.Assign:
        return None
    assign = bindings[0]
    if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name or type(assign.value) is not cst.Call:  # type: ignore[attr-defined]
        return None
    mentions, initialised, returned = counts
    return assign.value if mentions == 1 + initialised + returned else None  # type: ignore[attr-defined,return-value]


def returns_its_argument(ctx: "Context", func: cst.BaseExpression, depth: int = 0) -> bool:
    qualified = resolve_global(ctx, func)
    if qualified in REPARAMETRIZATIONS:
        return True
    if not isinstance(func, cst.Name) or depth > 3:
        return False
    definitions = _definitions(ctx).get(func.value)
    if definitions:
        return all(_identity(ctx, d, depth) for d in definitions)
    # an imported helper (`from utils import init`, or one only a star import can bring, `from
    # .network_utils import *`): named as an initialiser, it returns its module
    imported = qualified is not None and not qualified.startswith("torch.")
    return (imported or ctx.from_star_import(func.value)) and named_like_initialiser(func.value)


def named_like_initialiser(name: str) -> bool:
    """`init`, `init_`, `layer_init`, `initialize`: a helper that initialises a layer and returns it."""
    return any(token in ("init", "initialize", "initialise") for token in name.lower().split("_"))


def _identity(ctx: "Context", definition: cst.CSTNode, depth: int) -> bool:
    """`def layer_init(layer, ...): ...; return layer`, or `init_ = lambda m: init(m, ...)` over such
    a function (or one named as an initialiser)."""
    if isinstance(definition, cst.FunctionDef):
        params = definition.params.params
        if not params or definition.decorators:
            return False
        first = params[0].name.value
        returns = [n for n in code_descendants(definition.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.Return]
        return bool(returns) and all(isinstance(r.value, cst.Name) and r.value.value == first for r in returns)
    if isinstance(definition, cst.IfExp):  # `weight_norm if c else spectral_norm`
        return all(
            isinstance(branch, (cst.Name, cst.Attribute)) and returns_its_argument(ctx, branch, depth + 1)
            for branch in (definition.body, definition.orelse)
        )
    if isinstance(definition, cst.Lambda):
        params = definition.params.params
        if not params:
            return False
        first, body = params[0].name.value, definition.body
        if isinstance(body, cst.Name):
            return body.value == first
        if isinstance(body, cst.Call) and body.args and isinstance(body.args[0].value, cst.Name) and body.args[0].value.value == first:
            callee = body.func
            return returns_its_argument(ctx, callee, depth + 1) or (isinstance(callee, cst.Name) and named_like_initialiser(callee.value))
    return False


def _definitions(ctx: "Context") -> dict[str, list[cst.CSTNode]]:
    """Functions defined anywhere and lambdas assigned to a name anywhere, by name (once per file)."""
    return ctx.memo("initialiser-definitions", lambda: _collect_definitions(ctx.module))  # type: ignore[return-value]


def _collect_definitions(module: cst.Module) -> dict[str, list[cst.CSTNode]]:
    found: dict[str, list[cst.CSTNode]] = {}
    for node in code_descendants(module):
        if type(node) is cst.FunctionDef:
            found.setdefault(node.name.value, []).append(node)
        elif type(node) is cst.Assign and type(node.value) in (cst.Lambda, cst.IfExp):
            for target in node.targets:
                if isinstance(target.target, cst.Name):
                    found.setdefault(target.target.value, []).append(node.value)
    # A name chosen between two wrappers (hifi-gan's `norm_f = weight_norm if ... else
    # spectral_norm`) counts only where nothing else in the file binds it: any other binding is
    # kept too, as a definition that is no wrapper.
    chosen = {name for name, nodes in found.items() if any(type(n) is cst.IfExp for n in nodes)}
    if chosen:
        for node in code_descendants(module):
            if type(node) is cst.FunctionDef or (type(node) is cst.Assign and type(node.value) in (cst.Lambda, cst.IfExp)):  # type: ignore[attr-defined]
                continue  # (listed above)
            for target in bound_by(node, parameters=True):
                for name in erring_names(target):
                    if name in chosen:
                        found[name].append(node)
    return found


def resolve_global(ctx: "Context", expr: cst.BaseExpression) -> Optional[str]:
    """What a module-level import makes of `expr` (`nn.Conv2d` -> "torch.nn.Conv2d"), or None.
    Defined here, where the inventory's initialisers need it first; the inventory imports it."""
    if isinstance(expr, cst.Name):
        binding = ctx.module_binding(expr.value)
        return binding.qualified if binding else None
    if isinstance(expr, cst.Attribute):
        base = resolve_global(ctx, expr.value)
        return f"{base}.{expr.attr.value}" if base else None
    return None
