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

from typing import Iterator, Optional

import libcst as cst

from memlint.analysis.device_targets import target_device
from memlint.analysis.iteration import named_like_batch_size, names_in
from memlint.pipeline.tree import code_descendants

_WRAPPERS = ("tqdm", "trange", "enumerate")


def moves_host_chunks(loop: cst.CSTNode, function: Optional[cst.FunctionDef]) -> bool:
    """See the module docstring.  `function`: the function whose body holds the loop.  (Answered
    once per loop: a rule asks for every statement it suspects in it.)"""
    known = _ANSWERS.get(id(loop))
    if known is not None and known[0] is loop and known[1] is function:
        return known[2]
    answer = _moves_host_chunks(loop, function)
    if len(_ANSWERS) >= 4096:
        _ANSWERS.clear()
    _ANSWERS[id(loop)] = (loop, function, answer)  # (the loop is held, so its id is not reused)
    return answer


_ANSWERS: dict[int, tuple[cst.CSTNode, Optional[cst.FunctionDef], bool]] = {}


def _moves_host_chunks(loop: cst.CSTNode, function: Optional[cst.FunctionDef]) -> bool:
    if function is None or type(loop) is not cst.For or type(loop.target) is not cst.Name:  # type: ignore[attr-defined]
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
                return _dataset_contents(_chunked(node.func.value, index, derived, loop), function)  # type: ignore[attr-defined]
        if type(statement) is cst.Assign and _built_from_chunk(statement.value, index, derived):
            derived.update(n for t in statement.targets for n in names_in(t.target) if type(t.target) is cst.Name)
    return False


def _statements_in_order(block: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The small statements of a block in source order, through `if` / `with` / `try` bodies, not
    into nested loops, functions or classes (their own turns), nor into statements of other kinds
    (`match`: its cases are not read)."""
    for statement in getattr(block, "body", ()):
        kind = type(statement)
        if kind is cst.SimpleStatementLine:
            yield from statement.body  # type: ignore[attr-defined]
        elif kind is cst.If:
            yield from _statements_in_order(statement.body)  # type: ignore[attr-defined]
            orelse = statement.orelse  # type: ignore[attr-defined]
            while type(orelse) is cst.If:  # `elif`
                yield from _statements_in_order(orelse.body)  # type: ignore[attr-defined]
                orelse = orelse.orelse  # type: ignore[attr-defined]
            if type(orelse) is cst.Else:
                yield from _statements_in_order(orelse.body)  # type: ignore[attr-defined]
        elif kind in (cst.With, cst.Try):
            yield from _statements_in_order(statement.body)  # type: ignore[attr-defined]


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


def _chunked(expr: cst.BaseExpression, index: str, derived: set[str], loop: cst.CSTNode) -> Optional[str]:
    """The name of the collection whose chunk `expr` is built from: `X` of `X[i:i + bs]` read in
    `expr`, or in the assignment of the loop's body that bound the name `expr` reads."""
    pending = [expr]
    seen: set[str] = set()
    while pending:
        current = pending.pop()
        for node in (current, *code_descendants(current)):
            if type(node) is cst.Subscript and _row_chunk(node, index) and type(node.value) is cst.Name:  # type: ignore[attr-defined]
                return node.value.value  # type: ignore[attr-defined]
            if type(node) is cst.Name and node.value in derived and node.value not in seen:  # type: ignore[attr-defined]
                seen.add(node.value)  # type: ignore[attr-defined]
                pending.extend(_values_bound(node.value, loop))  # type: ignore[attr-defined]
    return None


def _values_bound(name: str, loop: cst.CSTNode) -> list[cst.BaseExpression]:
    return [
        statement.value  # type: ignore[attr-defined]
        for statement in _statements_in_order(loop.body)  # type: ignore[attr-defined]
        if type(statement) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in statement.targets)  # type: ignore[attr-defined]
    ]


def _dataset_contents(collection: Optional[str], function: cst.FunctionDef) -> bool:
    """Is `collection` what a dataset holds, `texts = data_loader.dataset.text`: a local of the
    function, every binding of it an attribute read through a `.dataset`?  A parameter (one batch a
    helper splits into micro-batches, one sequence split along its length) or a name the function
    moves to the device whole (`X = X.to(device)`) is no proof that the loop walks a split on the host."""
    if collection is None:
        return False
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    if any(p.name.value == collection for p in every) or collection in _star_names(params):
        return False
    values = []
    for node in code_descendants(function.body):
        kind = type(node)
        if kind is cst.Assign:
            if any(collection in names_in(t.target) for t in node.targets):  # type: ignore[attr-defined]
                values.append(node.value)  # type: ignore[attr-defined]
        elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.With, cst.NamedExpr, cst.Global, cst.Nonlocal, cst.Del):
            if collection in _mentioned(node):
                return False
    return bool(values) and all(_read_from_dataset(v) for v in values)


def _mentioned(node: cst.CSTNode) -> set[str]:
    target = getattr(node, "target", None)
    if target is not None:
        return set(names_in(target))
    if type(node) is cst.With:
        return {n for item in node.items if item.asname is not None for n in names_in(item.asname.name)}  # type: ignore[attr-defined]
    if type(node) in (cst.Global, cst.Nonlocal):
        return {n.name.value for n in node.names}  # type: ignore[attr-defined]
    return set()


def _star_names(params: cst.Parameters) -> set[str]:
    found = set()
    for star in (params.star_arg, params.star_kwarg):
        if type(star) is cst.Param:
            found.add(star.name.value)
    return found


def _read_from_dataset(value: cst.BaseExpression) -> bool:
    """`data_loader.dataset.text`, `loader.dataset.samples`: an attribute chain through `.dataset`."""
    while type(value) is cst.Attribute:
        if value.attr.value == "dataset":  # type: ignore[attr-defined]
            return True
        value = value.value  # type: ignore[attr-defined]
    return False
