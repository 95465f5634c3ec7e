"""Loops that walk a dataset one item at a time, by index.

**walks a dataset by index** (`indexed_dataset(loop)`): `for idx in range(len(dataset))`,
`for i in range(rank, len(self.val_set), world_size)` (also in `tqdm(...)` / `enumerate(...)`) whose
body reads `dataset[idx]`: the iterable counts a collection named like a dataset (naming.DATASET_NAME)
and the body takes the item at the loop's index from that same collection.  Each iteration then
handles one sample of the split, as a loop over a loader handles one batch.  Both halves are needed:
a count of layers or files (`range(len(self.blocks))`) walks no data, and a dataset's length used
without reading its items (`range(len(dataset) // bs)`) may count anything.

The semantic model's loop scope (roles.loop_scope) asks it: such a loop that runs a model on its item
(in its own body, or through a function of the project that runs one) is a per-sample loop, a step.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.naming import DATASET_NAME
from memlint.analysis.walk import code_descendants

_WRAPPERS = frozenset({"tqdm", "enumerate", "trange"})


def indexed_dataset(loop: cst.CSTNode) -> Optional[cst.BaseExpression]:
    """The dataset `loop` walks item by item (`dataset` of `for idx in range(len(dataset)): x =
    dataset[idx]`), or None."""
    if type(loop) is not cst.For or type(loop.target) is not cst.Name:  # type: ignore[attr-defined]
        return None
    iterable = loop.iter  # type: ignore[attr-defined]
    while type(iterable) is cst.Call and _name(iterable.func) in _WRAPPERS and iterable.args:  # type: ignore[attr-defined]
        iterable = iterable.args[0].value  # type: ignore[attr-defined]
    if type(iterable) is not cst.Call or _name(iterable.func) != "range" or type(iterable.func) is not cst.Name:  # type: ignore[attr-defined]
        return None
    index = loop.target.value  # type: ignore[attr-defined]
    for arg in iterable.args:  # type: ignore[attr-defined]
        counted = _length_of(arg.value)
        if counted is not None and DATASET_NAME.search(_name(counted) or "") and _reads_item(loop.body, counted, index):  # type: ignore[attr-defined]
            return counted
    return None


def _length_of(expr: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`len(X)` -> X (a name or an attribute)."""
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "len" and len(expr.args) == 1:  # type: ignore[attr-defined]
        counted = expr.args[0].value  # type: ignore[attr-defined]
        if type(counted) in (cst.Name, cst.Attribute):
            return counted
    return None


def _reads_item(body: cst.CSTNode, collection: cst.BaseExpression, index: str) -> bool:
    """Does `body` read `collection[index]`?"""
    for node in code_descendants(body):
        if type(node) is not cst.Subscript or len(node.slice) != 1:  # type: ignore[attr-defined]
            continue
        element = node.slice[0].slice  # type: ignore[attr-defined]
        if type(element) is cst.Index and type(element.value) is cst.Name and element.value.value == index and node.value.deep_equals(collection):  # type: ignore[attr-defined]
            return True
    return False


def _name(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return None
