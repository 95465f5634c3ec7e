"""Which classes of a file are datasets: the evidence that `MyData(X, y)` is a dataset built from
the rows of `X`, as `TensorDataset(X, y)` or a class whose name ends in `Dataset` is.

A class of the file is a dataset when it derives (by name, through the file's other classes) from a
class whose name ends in `Dataset` (`torch.utils.data.Dataset`, `Dataset`, `data.Dataset`), or when
it defines both `__getitem__` and `__len__` (the map-style dataset protocol a DataLoader reads).
The semantic model's datasets fact (model.py) takes the first positional argument of such a call as
the rows it was built from.
"""

from __future__ import annotations

import libcst as cst

from memlint.analysis.walk import code_descendants, dotted_name

_PROTOCOL = frozenset({"__getitem__", "__len__"})


def dataset_classes(module: cst.Module) -> frozenset[str]:
    """Names of the file's classes that are datasets (one walk of the file)."""
    bases: dict[str, set[str]] = {}
    found: set[str] = set()
    for node in code_descendants(module, skip=(cst.FunctionDef,)):
        if type(node) is not cst.ClassDef:
            continue
        name = node.name.value  # type: ignore[attr-defined]
        parents = {(dotted_name(a.value) or "").rpartition(".")[2] for a in node.bases if a.keyword is None}  # type: ignore[attr-defined]
        bases.setdefault(name, set()).update(parents)
        methods = {s.name.value for s in node.body.body if type(s) is cst.FunctionDef}  # type: ignore[attr-defined]
        if _PROTOCOL <= methods or any(p.endswith("Dataset") for p in parents):
            found.add(name)
    grown = True
    while grown:  # `class Train(Base)` where `class Base(Dataset)`
        grown = False
        for name, parents in bases.items():
            if name not in found and parents & found:
                found.add(name)
                grown = True
    return frozenset(found)
