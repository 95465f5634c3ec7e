"""Submodules reached through a module's `children()` / `modules()` and indexing: what a call of one
runs is a model.

Feature-map visualisations walk a pretrained network block by block (T2T-ViT's
visualization_vit.ipynb, the ResNet-50 one beside it):

    all_block = []
    for model_child in list(model.children()):
        if type(model_child) != nn.ModuleList:
            all_block.append(model_child)
        else:
            for sub_child in list(model_child.children()):
                all_block.append(sub_child)
    results = [all_block[0](img)]
    for i in range(1, len(all_block)):
        results.append(all_block[i](results[-1]))

A list of submodules is a name the scope (a function, or the module: a notebook's cells) binds only
to `[]` or to a source of submodules (`list(model.children())`), and grows only by `.append(x)` of a
submodule; nothing else may change it (`+=`, `extend`, `insert`, an element replaced: then None of
it is known).  A source of submodules is `X.children()` / `X.modules()` without arguments (or
`list(...)` of one): nn.Module's API, whatever X's name (a factory the analysis does not know,
`timm.create_model(...)`, `models.resnet50(pretrained=True)`, builds it).  The facts are asked of a
call (`all_block[i](x)`): an element of `children()` that is called is a module; no other library's
`children()` yields callables (AST and widget trees yield nodes).  A submodule is an
element of such a list or source (`all_block[i]`, the target of a `for` over one) or an element of a
submodule (`model_children[i][j]`: an nn.Sequential indexed).  Syntactic and scope-wide: a name
bound otherwise anywhere in the scope is none of these.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.bindings import exact_names_bound_by
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_SOURCE_METHODS = frozenset({"children", "modules"})


def is_submodule(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `expr` (`all_block[i]`, `model_children[i][j]`, a `for` target over `model.children()`) a
    submodule by the facts above, in the scope the traversal is in?"""
    if type(expr) is not cst.Subscript and type(expr) is not cst.Name:
        return False
    return _Facts.of(ctx).submodule(expr)


def is_submodule_source(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `expr` (`model.children()`, `list(...)` of one, a list of submodules) what a `for` over
    binds submodules from?"""
    return _Facts.of(ctx).source(expr)


class _Facts:
    def __init__(self, scope: cst.CSTNode, ctx: "Context") -> None:
        self.ctx = ctx
        if isinstance(scope, cst.FunctionDef):
            statements = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()
        else:
            statements = scope.body  # type: ignore[attr-defined]
        nodes: list = []
        for statement in statements:
            if type(statement) not in (cst.FunctionDef, cst.ClassDef):
                nodes.append(statement)
                nodes += code_descendants(statement, skip=(cst.FunctionDef, cst.ClassDef))
        self.bindings: dict[str, list] = {}  # name -> the values assigned, or the iterables of `for`s binding it
        self.appended: dict[str, list[cst.BaseExpression]] = {}
        self.changed: set[str] = set()
        for node in nodes:
            kind = type(node)
            if kind is cst.Assign:
                for target in node.targets:
                    self._bind(target.target, ("value", node.value))
            elif kind in (cst.AugAssign, cst.AnnAssign):
                self._bind(node.target, ("other", None))
            elif kind is cst.For:
                self._bind(node.target, ("for", node.iter))
            elif kind in (cst.WithItem, cst.CompFor, cst.NamedExpr, cst.ImportAlias):
                for name in exact_names_bound_by(node):
                    self.bindings.setdefault(name, []).append(("other", None))
            elif kind is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:
                name, method = node.func.value.value, node.func.attr.value
                if method == "append" and len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
                    self.appended.setdefault(name, []).append(node.args[0].value)
                elif method in ("extend", "insert", "__setitem__", "__iadd__"):
                    self.changed.add(name)
        self._lists: dict[str, bool] = {}
        self._targets: dict[str, bool] = {}

    @classmethod
    def of(cls, ctx: "Context") -> "_Facts":
        scope = ctx.function_node or ctx.module
        return ctx.memo(("submodules", id(scope)), lambda: cls(scope, ctx))  # type: ignore[return-value]

    def _bind(self, target: cst.BaseExpression, how: tuple) -> None:
        if type(target) is cst.Name:
            self.bindings.setdefault(target.value, []).append(how)
            return
        if type(target) is cst.Subscript and type(target.value) is cst.Name:
            self.changed.add(target.value.value)  # `blocks[0] = nn.Identity()`
        for node in code_descendants(target):
            if type(node) is cst.Name:
                self.bindings.setdefault(node.value, []).append(("other", None))

    # ------------------------------------------------------------------ the facts

    def submodule(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is cst.Subscript:
            return self._indexes_one(expr) and (self.is_list(expr.value) or self.submodule(expr.value))
        if type(expr) is cst.Name:
            return self._for_target(expr.value)
        return False

    def source(self, expr: cst.BaseExpression) -> bool:
        kind = type(expr)
        if kind is cst.Name:
            return self.is_list(expr)
        if kind is not cst.Call:
            return False
        func = expr.func
        if type(func) is cst.Name and func.value == "list" and self.ctx.is_builtin("list"):
            return len(expr.args) == 1 and not expr.args[0].star and expr.args[0].keyword is None and self.source(expr.args[0].value)
        if type(func) is cst.Attribute and func.attr.value in _SOURCE_METHODS and not expr.args:
            return type(func.value) in (cst.Name, cst.Attribute, cst.Subscript)  # (see the module docstring)
        return False

    def is_list(self, expr: cst.BaseExpression) -> bool:
        if type(expr) is not cst.Name:
            return False
        name = expr.value
        known = self._lists.get(name)
        if known is None:
            self._lists[name] = False  # (a list defined through itself is no evidence)
            known = self._lists[name] = self._list_by_bindings(name)
        return known

    def _list_by_bindings(self, name: str) -> bool:
        bound = self.bindings.get(name)
        if not bound or name in self.changed:
            return False
        for how, value in bound:
            if how != "value":
                return False
            if type(value) is cst.List and not value.elements:
                continue
            if not self.source(value):
                return False
        return all(self.submodule(v) for v in self.appended.get(name, ()))

    def _for_target(self, name: str) -> bool:
        known = self._targets.get(name)
        if known is None:
            self._targets[name] = False
            bound = self.bindings.get(name)
            known = bool(bound) and name not in self.appended and all(how == "for" and self.source(value) for how, value in bound)
            self._targets[name] = known
        return known

    @staticmethod
    def _indexes_one(expr: cst.Subscript) -> bool:
        """`blocks[i]`, not `blocks[1:]` (a slice of a list is a list)."""
        return len(expr.slice) == 1 and type(expr.slice[0].slice) is cst.Index
