"""A local name bound to one of several torch.nn classes: `ReLU = nn.ReLU if onnx_compatible else
nn.ReLU6`, then `ReLU()` (pytorch-ssd's SeperableConv2d).  What a call of the name builds is one of
those classes; a rule that reports it must hold for every one of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, erring_names, parameter_names
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.walk import own_nodes

if TYPE_CHECKING:
    from memlint.analysis.context import Context

def chosen_classes(ctx: "Context", func: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> Optional[tuple[str, ...]]:
    """The torch.nn classes `func` (a plain name) may be in `function`, where every binding of it
    there is a plain assignment of such a class or a conditional expression between them (and it is
    no parameter); None otherwise."""
    if type(func) is not cst.Name or function is None:
        return None
    name = func.value
    return ctx.memo(("chosen-classes", id(function), name), lambda: _chosen(ctx, function, name))  # type: ignore[return-value]


def _chosen(ctx: "Context", function: cst.FunctionDef, name: str) -> Optional[tuple[str, ...]]:
    if name in parameter_names(function):
        return None
    kinds: list[str] = []
    bound = False
    for node in own_nodes(function):  # a nested scope's names are its own
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
        elif any(name in erring_names(target) for target in bound_by(node, declarations=True)):
            return None  # bound otherwise
    return tuple(dict.fromkeys(kinds)) if bound else None


def _choices(ctx: "Context", value: cst.BaseExpression) -> Optional[list[str]]:
    if type(value) is cst.IfExp:
        body, orelse = _choices(ctx, value.body), _choices(ctx, value.orelse)
        return None if body is None or orelse is None else [*body, *orelse]
    kind = torch_nn_name(ctx, value)
    return [kind] if kind is not None else None
