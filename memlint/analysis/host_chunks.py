"""Does a stride loop send the device chunks of a collection that lives on the host?

`for i in range(0, num_text, text_bs): text = texts[i:i + text_bs]; ids = tokenizer(text).to(device)`:
the loop walks a collection by its own index in steps named like a batch size, slices a chunk of
rows from it (`X[i:...]`, the first axis only), and moves that chunk, or what it builds from it, to
the device.  The collection is on the host (its chunks are moved one by one), so whatever the loop
keeps on the device of each chunk's outputs grows with the collection: a pass over data, batch by
batch.  Unlike `iteration.slices_counted_split` (`model(X[i:i + bs])`, where `X` may sit on the
device whole), the move is the evidence of where the collection is.  Syntactic; asked by ML014 for
the loops around what it suspects.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst

from memlint.analysis.device_targets import target_device
from memlint.analysis.iteration import named_like_batch_size, names_in
from memlint.pipeline.tree import code_descendants

_WRAPPERS = ("tqdm", "trange", "enumerate")
_NESTED_SCOPES = (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)


def moves_host_chunks(loop: cst.CSTNode) -> bool:
    """See the module docstring."""
    if type(loop) is not cst.For or type(loop.target) is not cst.Name:  # type: ignore[attr-defined]
        return False
    iterable = loop.iter  # type: ignore[attr-defined]
    while type(iterable) is cst.Call and _callee(iterable) in ("tqdm", "trange") and iterable.args:
        iterable = iterable.args[0].value
    if not (type(iterable) is cst.Call and _callee(iterable) == "range" and len(iterable.args) == 3):
        return False
    if not named_like_batch_size(iterable.args[2].value):
        return False
    index = loop.target.value  # type: ignore[attr-defined]
    derived: set[str] = set()
    for statement in _statements_in_order(loop.body):  # type: ignore[attr-defined]
        for node in code_descendants(statement):
            if type(node) is cst.Call and _moves_to_device(node) and _built_from_chunk(node.func.value, index, derived):  # type: ignore[attr-defined]
                return True
        if type(statement) is cst.Assign and _built_from_chunk(statement.value, index, derived):
            derived.update(n for t in statement.targets for n in names_in(t.target) if type(t.target) is cst.Name)
    return False


def _statements_in_order(block: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The small statements of a block in source order, through `if` / `with` / `try` bodies, not
    into nested loops, functions or classes (their own turns)."""
    for statement in getattr(block, "body", ()):
        if type(statement) is cst.SimpleStatementLine:
            yield from statement.body
        elif isinstance(statement, _NESTED_SCOPES):
            continue
        elif isinstance(statement, cst.BaseCompoundStatement):
            yield from _statements_in_order(statement.body)
            orelse = getattr(statement, "orelse", None)
            if orelse is not None:
                yield from _statements_in_order(getattr(orelse, "body", orelse))


def _moves_to_device(call: cst.Call) -> bool:
    func = call.func
    return type(func) is cst.Attribute and func.attr.value in ("to", "cuda") and target_device(call) is not None  # type: ignore[attr-defined]


def _built_from_chunk(expr: cst.BaseExpression, index: str, derived: set[str]) -> bool:
    """`expr` reads a chunk of rows `X[i:...]` sliced by the loop's index, or a name bound from one."""
    for node in (expr, *code_descendants(expr)):
        if type(node) is cst.Name and node.value in derived:  # type: ignore[attr-defined]
            return True
        if type(node) is cst.Subscript and _row_chunk(node, index):
            return True
    return False


def _row_chunk(subscript: cst.Subscript, index: str) -> bool:
    """`X[i:i + bs]`, `X[i:min(n, i + bs)]`: one slice, from the loop's index, with an end."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Slice:
        return False
    bounds = subscript.slice[0].slice
    lower = bounds.lower  # type: ignore[attr-defined]
    return type(lower) is cst.Name and lower.value == index and bounds.upper is not None and bounds.step is None  # type: ignore[attr-defined]


def _callee(call: cst.Call) -> str:
    func = call.func
    return func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else ""  # type: ignore[attr-defined]
