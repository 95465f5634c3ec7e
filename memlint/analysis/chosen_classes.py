"""A local name bound to one of several torch.nn classes: `ReLU = nn.ReLU if onnx_compatible else
nn.ReLU6`, then `ReLU()` (pytorch-ssd's SeperableConv2d).  What a call of the name builds is one of
those classes; a rule that reports it must hold for every one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def chosen_classes(ctx: "Context", func: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> Optional[tuple[str, ...]]:
    """The torch.nn classes `func` (a plain name) may be in `function`, where every binding of it
    there is a plain assignment of such a class or a conditional expression between them (and it is
    no parameter); None otherwise."""
    if type(func) is not cst.Name or function is None:
        return None
    name = func.value
    return ctx.memo(("chosen-classes", id(function), name), lambda: _chosen(ctx, function, name))  # type: ignore[return-value]


def _chosen(ctx: "Context", function: cst.FunctionDef, name: str) -> Optional[tuple[str, ...]]:
    params = function.params
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return None
    if any(type(p) is cst.Param and p.name.value == name for p in (params.star_arg, params.star_kwarg)):
        return None
    kinds: list[str] = []
    bound = False
    for node in code_descendants(function.body, skip=_NESTED_SCOPES):  # a nested scope's names are its own
        kind = type(node)
        if kind is cst.Assign:
            targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
            if any(type(t) is cst.Name and t.value == name for t in targets):
                if len(targets) != 1:
                    return None
                choices = _choices(ctx, node.value)  # type: ignore[attr-defined]
                if choices is None:
                    return None
                kinds.extend(choices)
                bound = True
        elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.CompFor, cst.WithItem, cst.AsName, cst.Global, cst.Nonlocal):
            if any(type(n) is cst.Name and n.value == name for n in _target_names(node)):
                return None
    return tuple(dict.fromkeys(kinds)) if bound else None


def _choices(ctx: "Context", value: cst.BaseExpression) -> Optional[list[str]]:
    if type(value) is cst.IfExp:
        body, orelse = _choices(ctx, value.body), _choices(ctx, value.orelse)
        return None if body is None or orelse is None else [*body, *orelse]
    kind = torch_nn_name(ctx, value)
    return [kind] if kind is not None else None


def _target_names(node: cst.CSTNode) -> list[cst.CSTNode]:
    if type(node) in (cst.Global, cst.Nonlocal):
        return [n.name for n in node.names]  # type: ignore[attr-defined]
    if type(node) is cst.WithItem:
        target = node.asname.name if node.asname is not None else None  # type: ignore[attr-defined]
    elif type(node) is cst.AsName:
        target = node.name  # type: ignore[attr-defined]
    else:
        target = node.target  # type: ignore[attr-defined]
    if target is None:
        return []
    return [target, *code_descendants(target)]
