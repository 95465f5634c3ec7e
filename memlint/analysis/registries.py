"""Registry dicts: a module-level dict whose entries are the project's classes or functions.

`REGISTRY = {}` then `REGISTRY["q_learner"] = QLearner` (or `MODELS = {"a": A, "b": B}`): a call
`REGISTRY[key](cfg, ...)` builds, or runs, one of the entries, whichever the key picks at run time.
The entries are known only where the file's code shows every way the dict is filled: its one
binding, a dict display of plain (dotted) names, and module-level `NAME["key"] = Name` statements;
every other mention reads it (`NAME[k]`, `NAME.get(k)`, `NAME.keys()`, `k in NAME`).  A registry
filled by a decorator (`def register(cls): REGISTRY[name] = cls`), updated, handed on, declared
`global` or bound twice is not one: its entries are not known.  Another file may still import the
dict (or its module) and fill it: the project pass drops a registry another file uses in any way
but reading an entry (`filled_imports`).

Works on CPython's AST (`memlint.prescreen.Source`), for the project pass's summaries."""

from __future__ import annotations

import ast
from typing import Optional

from memlint.analysis.naming import dotted

# Methods that read a dict without changing it.
_READING_METHODS = frozenset({"get", "keys", "values", "items", "__getitem__", "__contains__", "copy"})


def registry_dicts(source) -> dict[str, list[str]]:
    """Module-level registry dicts of the file: name -> its entries as written (dotted names), in
    the order the module adds them; only where every entry is a plain name (no lambda, no call)."""
    tree = source.tree
    candidates: dict[str, Optional[list[str]]] = {}  # None: bound or filled in a way not followed
    allowed: set[int] = set()  # ids of the Name nodes that bind or fill a candidate
    for statement in tree.body:
        if type(statement) is not ast.Assign or len(statement.targets) != 1:
            continue
        target, value = statement.targets[0], statement.value
        if type(target) is ast.Name:
            if target.id in candidates:
                candidates[target.id] = None  # bound twice
            elif type(value) is ast.Dict:
                entries = [dotted(v) if v is not None else None for v in value.values]
                known = all(entries) and all(type(k) is ast.Constant for k in value.keys)
                candidates[target.id] = entries if known else None  # type: ignore[assignment]
                allowed.add(id(target))
        elif type(target) is ast.Subscript and type(target.value) is ast.Name and candidates.get(target.value.id) is not None:
            entry = dotted(value)
            if type(target.slice) is not ast.Constant or entry is None:
                candidates[target.value.id] = None
                continue
            candidates[target.value.id].append(entry)  # type: ignore[union-attr]
            allowed.add(id(target.value))
    names = {name for name, entries in candidates.items() if entries}
    if not names:
        return {}
    for node in source.nodes(ast.Global, ast.Nonlocal):
        names -= set(node.names)  # type: ignore[attr-defined]
    for node in source.nodes(ast.Name):
        if node.id not in names or id(node) in allowed:  # type: ignore[attr-defined]
            continue
        if not _reads(node, source):
            names.discard(node.id)  # type: ignore[attr-defined]
    return {name: candidates[name] for name in sorted(names)}


def _reads(node: ast.AST, source) -> bool:
    """Is this mention of a registry's name one that only reads it?"""
    if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
        return False
    parent = next(source.ancestors(node), None)
    if type(parent) is ast.Subscript and parent.value is node:
        return type(parent.ctx) is ast.Load
    if type(parent) is ast.Attribute and parent.value is node:
        return parent.attr in _READING_METHODS
    if type(parent) is ast.Compare and node in parent.comparators:
        return all(type(op) in (ast.In, ast.NotIn) for op in parent.ops)
    return False


def filled_imports(source, imports: dict[str, list]) -> list[str]:
    """The imported names (or `module.NAME` chains of an imported module) the file uses in any way
    other than reading an entry (`NAME[key]`, `NAME[key](...)`): a registry another file adds
    entries to (`learners.REGISTRY["x"] = X`, `L.REGISTRY.update(...)`, `REGISTRY |= {...}`),
    hands on (`register(REGISTRY, "x", X)`) or declares `global` is not known from its own file.
    Every prefix followed by an attribute counts too: which of them is a registry the project
    pass decides (a module's name resolves to none)."""
    found: set[str] = set()
    if not imports:
        return []
    for node in source.nodes(ast.Name):
        if node.id not in imports:  # type: ignore[attr-defined]
            continue
        chain, written = node, node.id  # type: ignore[attr-defined]
        parent = next(source.ancestors(chain), None)
        while type(parent) is ast.Attribute and parent.value is chain:  # type: ignore[attr-defined]
            found.add(written)  # (`REGISTRY.update(...)`, `learners.REGISTRY`: learners resolves to no registry)
            chain, written = parent, f"{written}.{parent.attr}"  # type: ignore[attr-defined]
            parent = next(source.ancestors(chain), None)
        if type(parent) is ast.Subscript and parent.value is chain and type(parent.ctx) is ast.Load:  # type: ignore[attr-defined]
            continue  # an entry read
        if type(parent) is ast.Call and parent.func is chain:  # type: ignore[attr-defined]
            continue  # `module.function(...)`: a dict is not called
        found.add(written)
    for node in source.nodes(ast.Global):
        found.update(name for name in node.names if name in imports)  # type: ignore[attr-defined]
    return sorted(found)


def registry_callee(func: ast.AST) -> Optional[str]:
    """`REGISTRY[key]` or `pkg.REGISTRY[key]` as a callee: the dict as written, else None."""
    if type(func) is not ast.Subscript:
        return None
    return dotted(func.value)
