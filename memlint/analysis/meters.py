"""Running meters: objects whose `update(value)` / `add(value)` keeps what it is given (`AverageMeter`,
`SmoothedValue`), so that a value with history handed to one every step stays reachable from it.
A fact of the semantic model (model.py: `SemanticModel.is_meter`), found once per file.

Evidence: the object was made (`losses = AverageMeter("Loss")`, `self.meter = ...`) by a class of
this file whose `update` / `add` adds a parameter to `self` as it is (`self.sum += val * n`, not after
`.item()` / `float()`), by such a class of another file of the project (the project pass reads its
summary: `keeps`), or by an imported class named like the classic helpers.
"""

from __future__ import annotations

import re
from typing import Optional

import libcst as cst

from memlint.analysis.tables import METER_METHODS
from memlint.pipeline.tree import code_descendants

__all__ = ["METER_METHODS", "Meters", "written"]

# An imported class named like the classic `AverageMeter`; a class of the file is judged by its
# `update` body instead (deit's `MetricLogger` converts tensors with `.item()`).
_METER_CLASS = re.compile(r"^(?:AverageMeter|AvgMeter|AverageValueMeter|RunningAverage|Averager)$")


class Meters:
    def __init__(self, module: cst.Module, project_meters: frozenset[str] = frozenset()) -> None:
        self.constructors = _constructors(module)
        self.accumulating, self.defined = _accumulating_classes(module)
        # classes of other files of the project, as this file imports them, whose `update` / `add`
        # keeps a parameter (the project pass: FileView.meter_classes)
        self.project_meters = project_meters

    def is_meter(self, receiver: cst.BaseExpression) -> bool:
        """Was `receiver` (a name or `self.<attr>`) last made by a running meter's class?"""
        made_by = self.constructors.get(written(receiver))  # type: ignore[arg-type]
        if made_by is None:
            return False
        if made_by in self.defined:
            return made_by in self.accumulating
        return made_by in self.project_meters or _METER_CLASS.match(made_by) is not None


def written(expr: cst.BaseExpression) -> Optional[str]:
    """`losses` -> "losses", `self.meter` -> "self.meter"; None for anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":  # type: ignore[attr-defined]
        return "self." + expr.attr.value  # type: ignore[attr-defined]
    return None


def _constructors(module: cst.Module) -> dict[str, str]:
    """Names and `self.<attr>`s of the file, each with the capitalised class name it was last made
    from (`losses = AverageMeter(...)` -> "AverageMeter")."""
    found: dict[str, str] = {}
    for node in code_descendants(module):
        if type(node) is not cst.Assign or type(node.value) is not cst.Call or len(node.targets) != 1:  # type: ignore[attr-defined]
            continue
        func = node.value.func  # type: ignore[attr-defined]
        name = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None
        target = written(node.targets[0].target)  # type: ignore[attr-defined]
        if name is not None and target is not None and name[:1].isupper():
            found[target] = name
    return found


def _accumulating_classes(module: cst.Module) -> tuple[set[str], set[str]]:
    """(classes of this file with an `update` / `add` method that adds a parameter to `self` as it
    is, without `.item()` / `float()` first; every class name of this file)."""
    found: set[str] = set()
    defined: set[str] = set()
    for node in code_descendants(module):
        if type(node) is not cst.ClassDef:
            continue
        defined.add(node.name.value)  # type: ignore[attr-defined]
        if not isinstance(node.body, cst.IndentedBlock):  # type: ignore[attr-defined]
            continue
        for method in node.body.body:  # type: ignore[attr-defined]
            if type(method) is not cst.FunctionDef or method.name.value not in METER_METHODS:
                continue
            params = {p.name.value for p in method.params.params[1:]}
            inside = list(code_descendants(method))
            if any(type(n) is cst.Call and _converts(n) for n in inside):
                continue  # `val = val.item()`: numbers are kept, not tensors
            for inner in inside:
                if (
                    type(inner) is cst.AugAssign
                    and _on_self(inner.target)  # type: ignore[attr-defined]
                    and any(type(n) is cst.Name and n.value in params for n in (inner.value, *code_descendants(inner.value)))  # type: ignore[attr-defined]
                ):
                    found.add(node.name.value)  # type: ignore[attr-defined]
    return found, defined


def _on_self(expr: cst.BaseExpression) -> bool:
    """`self.sum`, `self.stats["loss"]`."""
    while type(expr) is cst.Subscript:
        expr = expr.value  # type: ignore[attr-defined]
    return type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self"  # type: ignore[attr-defined]


def _converts(call: cst.Call) -> bool:
    func = call.func
    if type(func) is cst.Attribute:
        return func.attr.value in ("item", "tolist", "detach")
    return type(func) is cst.Name and func.value in ("float", "int")
