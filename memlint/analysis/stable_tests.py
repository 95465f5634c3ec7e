"""Branch tests whose value one run of a function cannot change: `if self.has_embedding:` twice in a
`forward` is true both times or false both times.

open-reid's heads bind a value under a flag and use it under the same flag further down:

    if self.has_embedding:
        x = self.feat(x)
        x = self.feat_bn(x)
    if self.norm:
        x = F.normalize(x)
    elif self.has_embedding:
        x = F.relu(x)

A test counts when it is a parameter of the function that the function never binds again (nor a
function nested in it: `nonlocal`), or `self.<attr>` where `self` is the function's first parameter,
never rebound, and every binding of `.<attr>` in the file (on any object, also by `setattr`, `del`,
augmented or unpacked assignment) is `self.<attr> = ...` in a function named `__init__`, which runs
before any method of the instance; not where the file writes attributes in ways no name can be read
off (`__dict__`, `vars(...)`, `__setattr__`, `setattr` with a name not written out) or defines a
function of that name (a property may compute it afresh at each read).  Two tests are the same test
when they are the same name or the same attribute of `self`.  Asked by analysis/reaching.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_names, parameter_names
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def condition_key(test: cst.BaseExpression) -> Optional[tuple[str, str]]:
    """("name", n) for a bare name, ("self", attr) for `self.<attr>`; None for any other test."""
    if type(test) is cst.Name:
        return ("name", test.value)  # type: ignore[attr-defined]
    if type(test) is cst.Attribute and type(test.value) is cst.Name and test.value.value == "self":  # type: ignore[attr-defined]
        return ("self", test.attr.value)  # type: ignore[attr-defined]
    return None


def stable_test(key: tuple[str, str], function: cst.FunctionDef, ctx: "Context") -> bool:
    """Is the test `key` (`condition_key`) the same value wherever `function` evaluates it?"""
    kind, name = key
    if kind == "name":
        return name in parameter_names(function) and name not in _rebound(function, ctx)
    params = (*function.params.posonly_params, *function.params.params)
    if not params or params[0].name.value != "self" or "self" in _rebound(function, ctx):
        return False
    return name in ctx.memo("constructor-only-attributes", lambda: _constructor_only(ctx.module))  # type: ignore[operator]


def _rebound(function: cst.FunctionDef, ctx: "Context") -> frozenset[str]:
    """The names `function` (or a function nested in it) binds, or declares `global`/`nonlocal`:
    found once per function (a review timed a rescan per test at 34 s on 1,000 test pairs)."""
    return ctx.memo(("stable-tests-rebound", id(function)), lambda: _names_rebound(function))  # type: ignore[return-value]


def _names_rebound(function: cst.FunctionDef) -> frozenset[str]:
    declared = {a.name.value for n in code_descendants(function.body) if type(n) in (cst.Global, cst.Nonlocal) for a in n.names}  # type: ignore[attr-defined]
    return frozenset(bound_names(function.body, nested=True)) | declared


def _constructor_only(module: cst.Module) -> frozenset[str]:
    """The attribute names every binding of which in the file is `self.<attr> = ...` in an
    `__init__` (one walk of the file)."""
    inside: set[str] = set()
    outside: set[str] = set()
    functions: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
    while stack:
        node, in_init = stack.pop()
        kind = type(node)
        if kind is cst.FunctionDef:
            functions.add(node.name.value)  # type: ignore[attr-defined]
            in_init = node.name.value == "__init__"  # type: ignore[attr-defined]
        elif kind is cst.Attribute and node.attr.value in ("__dict__", "__setattr__"):  # type: ignore[attr-defined]
            return frozenset()
        elif kind is cst.Call and type(node.func) is cst.Name and node.func.value in ("vars", "setattr"):  # type: ignore[attr-defined]
            args = node.args  # type: ignore[attr-defined]
            if node.func.value == "vars" or len(args) < 2 or args[1].star or type(args[1].value) is not cst.SimpleString:  # type: ignore[attr-defined]
                return frozenset()
            outside.add(args[1].value.evaluated_value)  # type: ignore[attr-defined]
        elif kind is cst.Assign and in_init:
            for target in node.targets:  # type: ignore[attr-defined]
                t = target.target
                if type(t) is cst.Attribute and type(t.value) is cst.Name and t.value.value == "self":
                    inside.add(t.attr.value)
                else:
                    outside.update(_attributes_in(t))
        else:
            outside.update(attr for target in _targets(node) for attr in _attributes_in(target))
        stack.extend((child, in_init) for child in code_children(node))
    return frozenset(inside - outside - functions)


def _targets(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """What an assignment-like node binds (a plain `=` in `__init__` is read apart)."""
    kind = type(node)
    if kind is cst.Assign:
        return [t.target for t in node.targets]  # type: ignore[attr-defined]
    if kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del):
        return [node.target]  # type: ignore[attr-defined]
    if kind is cst.AsName:
        return [node.name]  # type: ignore[attr-defined]
    return []


def _attributes_in(target: cst.BaseExpression) -> list[str]:
    return [n.attr.value for n in (target, *code_descendants(target)) if type(n) is cst.Attribute]  # type: ignore[attr-defined]
