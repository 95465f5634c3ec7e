"""What code binds, written once: `bound_by(node)` is the table of node kinds that bind a name
(`=`, `+=`, annotated, the walrus, `for` and comprehension targets, `with ... as`, `except ... as`,
imports, `def` / `class`, `match` captures, `del`; parameters and `global` / `nonlocal` where the
asker counts them), read as names in one of two ways:

- `target_names(target)`, exact: the names a target itself binds (`a, (b, *c)` -> a, b, c; `self.x`
  and `d[k]` bind none: they store into an object).  For scope resolution: which function's name
  a call reaches, whether a name means the module's.
- `erring_names(target)`, erring towards "bound": every name in the target, `d` and `k` of
  `d[k] = v`, `self` and `x` of `self.x = v` too.  For askers that trust a name's value or its
  absence of rebinding (a helper that may rebind the model, a value kept since an earlier line):
  when unsure, bound, and they stay silent.

Over a stretch of code (a statement, a function, a module), counted over the whole of it, not as far
as a traversal got: a helper of the file is judged by what its names mean when it runs, which is
after the module ran to its end (a `def` further down, a name bound under a module-level `if` or
`try`, a star import all count).  `module_bindings` counts every binding of each name at module
level (nested compound statements included, and the names functions declare `global`);
`local_names` lists what a function binds itself (parameters included), so that a call inside it to
a name it binds does not reach the module's function of that name; `bound_targets` / `bound_names`
what a statement binds anywhere inside it; `declared_global_values` the value of every binding of a
name functions bind through `global` (the Context resolves such a name where they all agree).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Iterator, Optional

import libcst as cst

from memlint.analysis.walk import SCOPES, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_ONE_TARGET = frozenset({cst.AugAssign, cst.AnnAssign, cst.NamedExpr, cst.For, cst.CompFor, cst.Del})
_NAMED = frozenset({cst.FunctionDef, cst.ClassDef, cst.MatchAs, cst.MatchStar})
_HANDLERS = frozenset({cst.ExceptHandler, cst.ExceptStarHandler})
_DECLARATIONS = frozenset({cst.Global, cst.Nonlocal})
_BINDERS = _ONE_TARGET | _NAMED | _HANDLERS | _DECLARATIONS | {cst.Assign, cst.WithItem, cst.ImportAlias, cst.MatchMapping, cst.Param}
# The nodes that may bind a name to something other than an imported module or object.
NON_IMPORT_BINDERS = _BINDERS - {cst.ImportAlias}


def bound_by(node: cst.CSTNode, parameters: bool = False, declarations: bool = False) -> tuple[cst.BaseExpression, ...]:
    """The targets one node binds in the scope it stands in (read the names off them with
    `target_names` or `erring_names`): `x = y = v` -> x, y; `import a.b` -> a; `def f` -> f; `case
    {**rest}` -> rest.  A parameter (`Param`) only with `parameters`, `global g` / `nonlocal g`
    only with `declarations` (they say the name is someone else's, which an asker that stays silent
    when a name may be rebound counts too).  A comprehension's `for` target is the comprehension's:
    an asker walking the scope around it leaves `CompFor` out itself if it must."""
    kind = type(node)
    if kind not in _BINDERS:
        return ()
    if kind is cst.Assign:
        return tuple(each.target for each in node.targets)  # type: ignore[attr-defined]
    if kind in _ONE_TARGET:
        return (node.target,)  # type: ignore[attr-defined]
    if kind in _NAMED:
        name = node.name  # type: ignore[attr-defined]
        return (name,) if name is not None else ()
    if kind is cst.WithItem or kind in _HANDLERS:
        alias = node.asname if kind is cst.WithItem else node.name  # type: ignore[attr-defined]
        return (alias.name,) if alias is not None else ()
    if kind is cst.ImportAlias:
        if node.asname is not None:  # type: ignore[attr-defined]
            return (node.asname.name,)  # type: ignore[attr-defined]
        bound = node.name  # type: ignore[attr-defined]
        while type(bound) is cst.Attribute:  # `import a.b` binds `a`
            bound = bound.value
        return (bound,)
    if kind is cst.MatchMapping:
        return (node.rest,) if node.rest is not None else ()  # type: ignore[attr-defined]
    if kind is cst.Param:
        return (node.name,) if parameters else ()  # type: ignore[attr-defined]
    return tuple(item.name for item in node.names) if declarations else ()  # type: ignore[attr-defined]


def alternatives(value: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The values a binding may take: each branch of a conditional expression (`a.encode if a2b
    else b.encode`, nested ones too), else the value itself.  (summaries' `_alternatives` reads the
    same fact on the AST.)"""
    if type(value) is cst.IfExp:
        return [*alternatives(value.body), *alternatives(value.orelse)]  # type: ignore[attr-defined]
    return [value]


def target_names(target: cst.BaseExpression) -> list[str]:
    """The names a target binds, exactly, in source order: `x` -> ["x"]; `a, (b, *c)` -> ["a", "b",
    "c"].  An attribute or subscript target (`self.x`, `d[k]`) binds no name: it stores into an
    object the names only read."""
    return [name.value for name in target_name_nodes(target)]


def target_name_nodes(target: cst.BaseExpression) -> list[cst.Name]:
    """`target_names`, as the Name nodes themselves (to tell a binding occurrence from a read)."""
    found: list[cst.Name] = []
    stack = [target]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            found.append(node)  # type: ignore[arg-type]
        elif kind is cst.Tuple or kind is cst.List:
            stack.extend(reversed([e.value for e in node.elements]))  # type: ignore[attr-defined]
        elif kind is cst.StarredElement:
            stack.append(node.value)  # type: ignore[attr-defined]
    return found


def erring_names(target: cst.BaseExpression) -> list[str]:
    """Every name in a target, erring towards "bound": `d[k]` -> d, k; `self.x` -> self, x."""
    if type(target) is cst.Name:
        return [target.value]  # type: ignore[attr-defined]
    return [n.value for n in (target, *code_descendants(target)) if type(n) is cst.Name]  # type: ignore[attr-defined]


def exact_names_bound_by(node: cst.CSTNode, parameters: bool = False, declarations: bool = False) -> list[str]:
    """The names one node binds in the scope it stands in, exactly (`bound_by`, `target_names`)."""
    return [name for target in bound_by(node, parameters, declarations) for name in target_names(target)]


def own_scope(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """`node` and the nodes under it that bind in the scope it stands in: of a `def`, `class` or
    lambda only itself (its name); of anything else, all but the insides of those."""
    if isinstance(node, SCOPES):
        return (node,)
    return (node, *code_descendants(node, skip=SCOPES))


def module_bindings(ctx: "Context") -> Counter:
    """name -> how many times the module binds it at module level (0 for a name it never binds)."""
    return _module_facts(ctx)[0]


def module_imports_only(ctx: "Context", name: str) -> bool:
    """Is every module-level binding of `name` an import (`import torch`, `import torch.nn as nn`)?"""
    counts, not_imports = _module_facts(ctx)
    return counts[name] > 0 and name not in not_imports


def _module_facts(ctx: "Context") -> tuple:
    return ctx.memo("module-bindings", lambda: _count_module_bindings(ctx.module))  # type: ignore[return-value]


def local_names(function: cst.FunctionDef | cst.Lambda) -> set[str]:
    """The names `function` binds in its own scope: its parameters and what its body binds (the
    names of nested functions and classes, not what they bind inside), less those declared
    `global` or `nonlocal`."""
    names = parameter_names(function)
    if isinstance(function, cst.Lambda):
        return names
    declared: set[str] = set()
    for node in code_descendants(function.body, skip=SCOPES):
        if type(node) in _DECLARATIONS:
            declared.update(n.name.value for n in node.names)  # type: ignore[attr-defined]
        names.update(exact_names_bound_by(node))
    return names - declared


def binds(statement: cst.CSTNode, name: str) -> bool:
    """Does `statement` bind `name` anywhere in it, exactly, outside nested functions and classes?"""
    return any(name in exact_names_bound_by(node) for node in own_scope(statement))


def parameter_names(function: cst.FunctionDef | cst.Lambda) -> set[str]:
    """Every parameter of `function`, `*args` and `**kwargs` included."""
    params = function.params
    names = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            names.add(star.name.value)
    return names


def _count_module_bindings(module: cst.Module) -> tuple[Counter, set[str]]:
    """(name -> module-level bindings, the names some binding of which is no import)."""
    counts: Counter = Counter()
    not_imports: set[str] = set()
    for node in code_descendants(module, skip=SCOPES):
        names = exact_names_bound_by(node)
        counts.update(names)
        if type(node) is not cst.ImportAlias:
            not_imports.update(names)
    for node in code_descendants(module):
        if type(node) is cst.Global:  # a function that rebinds a module name
            names = [n.name.value for n in node.names]  # type: ignore[attr-defined]
            counts.update(names)
            not_imports.update(names)
    return counts, not_imports


def bound_targets(node: cst.CSTNode, nested: bool = False) -> Iterator[tuple[cst.BaseExpression, Optional[cst.BaseExpression]]]:
    """What `node` (a statement, a block, a module) binds, anywhere inside it (`bound_by`): each
    target with the value of a plain `target = value` (else None).  A target is an expression (`x`,
    `a, b`, `self.net`, `d[k]`); `bound_names` reads the names off them.  Without `nested`, not
    what the bodies of nested functions, classes and lambdas bind, nor a comprehension's loop
    targets (scopes of their own); with it, those too, and their parameters."""
    skip = () if nested else SCOPES
    for inner in (node, *code_descendants(node, skip=skip)):
        kind = type(inner)
        if kind not in _BINDERS or (kind is cst.CompFor and not nested):
            continue
        value = inner.value if kind is cst.Assign else None  # type: ignore[attr-defined]
        for target in bound_by(inner, parameters=nested):
            yield target, value


def bound_names(node: cst.CSTNode, nested: bool = False) -> set[str]:
    """Every name in a target `node` binds (`bound_targets`), erring towards "bound"
    (`erring_names`): `d[k] = v` and `self.x = v` count `d`, `k` and `self` too (an asker that
    trusts a name's value stays silent)."""
    return {name for target, _ in bound_targets(node, nested) for name in erring_names(target)}


def declared_global_values(module: cst.Module) -> dict[str, list[Optional[cst.BaseExpression]]]:
    """For each name some function (or class body) of the file declares `global` (`global BN`),
    every binding of that module name in the file, as its value: at module level and in every scope
    that declares it, each `name = value` (`BN = nn.BatchNorm2d`, also in a branch) gives `value`,
    any other binding (`del`, a loop target, an import, `def`) None.  A function body runs whenever
    it is called, so the name may hold any of these values when read: an asker resolves the name
    only where they all agree (Context: such a global resolves to the one class every binding names).
    A name some other scope binds for itself (a parameter, a local, a loop or comprehension target,
    a lambda's parameter, a class attribute, a `match` capture) gets None too: a read of it there is
    that scope's, and an asker that cannot tell which scope a read stands in stays silent.  One walk
    over the file (each scope's own statements once)."""
    scopes: list[cst.CSTNode] = [node for node in code_descendants(module) if type(node) in SCOPES]
    declared: dict[str, list[int]] = {}  # name -> the scopes (by position, 0 = module) that declare it
    bindings: list[list[tuple[str, Optional[cst.BaseExpression], bool]]] = []  # per scope: (name, value, a comprehension's)
    for position, scope in enumerate((module, *scopes)):
        own: list[tuple[str, Optional[cst.BaseExpression], bool]] = []
        if type(scope) is cst.FunctionDef or type(scope) is cst.Lambda:
            own.extend((name, None, True) for name in parameter_names(scope))  # type: ignore[arg-type]
        body = scope if type(scope) is cst.Module else scope.body  # type: ignore[attr-defined]
        for node in code_descendants(body, skip=SCOPES):
            kind = type(node)
            if kind is cst.Global:
                for item in node.names:  # type: ignore[attr-defined]
                    declared.setdefault(item.name.value, []).append(position)
                continue
            if kind not in _BINDERS:
                continue
            value = node.value if kind is cst.Assign else None  # type: ignore[attr-defined]
            for name in exact_names_bound_by(node):
                own.append((name, value, kind is cst.CompFor))
        bindings.append(own)
    found: dict[str, list[Optional[cst.BaseExpression]]] = {}
    if not declared:
        return found
    for position, own in enumerate(bindings):
        for name, value, foreign in own:
            if name not in declared:
                continue
            if foreign or (position != 0 and position not in declared[name]):
                value = None  # another scope's own name: the asker cannot tell which a read means
            found.setdefault(name, []).append(value)
    for name in declared:
        found.setdefault(name, [])
    return found
