"""Which names a stretch of code binds, counted over the whole of it, not as far as a traversal got.

A helper of the file is judged by what its names mean when it runs, which is after the module ran
to its end: a `def` further down, a name bound under a module-level `if` or `try`, a star import
all count.  `module_bindings` counts every binding of each name at module level (nested compound
statements included, and the names functions declare `global`); `local_names` lists what a
function binds itself (parameters included), so that a call inside it to a name it binds does not
reach the module's function of that name.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Iterator

import libcst as cst

from memlint.analysis.walk import code_with_parents, target_names

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


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
    for node, parents in code_with_parents(function.body):
        if any(isinstance(p, _SCOPES) for p in parents):
            continue  # inside a nested scope: its own names (its name itself is counted below)
        if isinstance(node, (cst.Global, cst.Nonlocal)):
            declared.update(n.name.value for n in node.names)
        names.update(names_bound_by(node))
    return names - declared


def binds(statement: cst.CSTNode, name: str) -> bool:
    """Does `statement` bind `name` anywhere in it, outside nested functions and classes?"""
    for node, parents in code_with_parents(statement):
        if not any(isinstance(p, _SCOPES) for p in parents) and name in names_bound_by(node):
            return True
    return name in names_bound_by(statement)


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
    for node, parents in code_with_parents(module):
        if isinstance(node, cst.Global):
            names = [n.name.value for n in node.names]  # a function that rebinds a module name
        elif any(isinstance(p, _SCOPES) for p in parents):
            continue
        else:
            names = list(names_bound_by(node))
        counts.update(names)
        if not isinstance(node, cst.ImportAlias):
            not_imports.update(names)
    return counts, not_imports


def names_bound_by(node: cst.CSTNode) -> Iterator[str]:
    """The names one node binds in the scope it belongs to."""
    kind = type(node)
    if kind is cst.AssignTarget or kind in (cst.For, cst.CompFor):
        yield from target_names(node.target)  # type: ignore[attr-defined]
    elif kind in (cst.AugAssign, cst.AnnAssign, cst.NamedExpr):
        if type(node.target) is cst.Name:  # type: ignore[attr-defined]
            yield node.target.value  # type: ignore[attr-defined]
    elif kind in (cst.FunctionDef, cst.ClassDef):
        yield node.name.value  # type: ignore[attr-defined]
    elif kind is cst.ImportAlias:
        if node.asname is not None:  # type: ignore[attr-defined]
            yield from target_names(node.asname.name)  # type: ignore[attr-defined]
        else:
            name = node.name  # type: ignore[attr-defined]
            while type(name) is cst.Attribute:
                name = name.value
            if type(name) is cst.Name:
                yield name.value
    elif kind in (cst.WithItem, cst.ExceptHandler, cst.ExceptStarHandler):
        alias = node.asname if kind is cst.WithItem else node.name  # type: ignore[attr-defined]
        if alias is not None:
            yield from target_names(alias.name)
    elif kind in (cst.MatchAs, cst.MatchStar):
        if node.name is not None:  # type: ignore[attr-defined]
            yield node.name.value  # type: ignore[attr-defined]
    elif kind is cst.MatchMapping and node.rest is not None:  # type: ignore[attr-defined]
        yield node.rest.value  # type: ignore[attr-defined]
