"""ML014's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

Inside a loop over something named like a data loader (or `range(0, len(X), batch_size)`, or
`range(a, b, text_bs)` of any stop (host_chunks), or an
`iterator` the loop takes a `batch` from, or a `while` whose test names a sample count,
`naming.SAMPLE_COUNT`): `.append(v)` / `.extend(v)`, `x += [v]`, or an assignment
`x = torch.cat([x, ...])` (also as a branch of `a if c else b`); or, in a method named
`validation_step` / `test_step` / `predict_step`, `.append(v)` / `.extend(v)` on `self.<attr>` (or a
subscript of it); or a step hook returning a value in a class that also defines the matching
Lightning 1.x epoch-end hook (tables.EPOCH_END_KEEPS). The trigger words ask for a device mention.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.naming import BATCH_SOURCE, BATCH_STRIDE, BATCH_TARGET, GENERIC_ITERATOR, LOADERS_BY_KEY, SAMPLE_COUNT, SPLIT_KEY
from memlint.analysis.tables import EPOCH_END_KEEPS, EVALUATION_STEP_HOOKS
from memlint.prescreen.source import FUNCTIONS, Source, argument_count, words_in


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    for loop in source.nodes(ast.For, ast.AsyncFor):
        if not (
            any(BATCH_SOURCE.search(word) for word in words_in(loop.iter))  # type: ignore[attr-defined]
            or _strides_by_batch(loop.iter)  # type: ignore[attr-defined]
            or _chunks_by_batch(loop.iter)  # type: ignore[attr-defined]
            or _loader_by_key(loop.iter)  # type: ignore[attr-defined]
            or _batches_from_iterator(loop)
        ):
            continue
        for node in ast.walk(loop):
            if _keeps(node) or _grows_list(node) or _concatenates(node):
                return True
    for loop in source.nodes(ast.While):
        # `while len(feats) < num_images:` (iteration.fills_to_sample_count): bounded by a sample count
        if not any(SAMPLE_COUNT.search(word) for word in words_in(loop.test)):  # type: ignore[attr-defined]
            continue
        for node in ast.walk(loop):
            if _keeps(node) or _grows_list(node):
                return True
    for function in source.nodes(*FUNCTIONS):
        if function.name not in EVALUATION_STEP_HOOKS:  # type: ignore[attr-defined]
            continue
        for node in ast.walk(function):
            if _keeps(node) and _on_self(node.func.value):  # type: ignore[attr-defined]
                return True
    for cls in source.nodes(ast.ClassDef):
        methods = {f.name for f in cls.body if isinstance(f, FUNCTIONS)}  # type: ignore[attr-defined]
        for step, epoch_end in EPOCH_END_KEEPS.items():
            if step in methods and epoch_end in methods:
                return True
    return False


def _strides_by_batch(iterable: ast.AST) -> bool:
    """`range(0, len(X), batch_size)`, as `iteration.strides_by_batch` asks on libcst's tree (a copy:
    that function reads libcst nodes, which a screen may not load; it takes a wrapper's first argument
    as written, keyword or not, so this does too: `tqdm(iterable=range(...))`)."""
    while isinstance(iterable, ast.Call) and (iterable.args or iterable.keywords) and _callee(iterable) in ("tqdm", "enumerate", "trange"):
        iterable = iterable.args[0] if iterable.args else iterable.keywords[0].value
    if not (isinstance(iterable, ast.Call) and _callee(iterable) == "range" and len(iterable.args) == 3):
        return False
    stop = iterable.args[1]
    if not (isinstance(stop, ast.Call) and isinstance(stop.func, ast.Name) and stop.func.id == "len"):
        return False
    return _step_named_like_batch(iterable)


def _chunks_by_batch(iterable: ast.AST) -> bool:
    """`range(a, b, text_bs)` with any stop (in `tqdm(...)` / `trange(...)`): the loop shape
    `host_chunks.moves_host_chunks` asks for before it reads the body."""
    while isinstance(iterable, ast.Call) and iterable.args and _callee(iterable) in ("tqdm", "trange"):
        iterable = iterable.args[0]
    if not (isinstance(iterable, ast.Call) and _callee(iterable) == "range" and len(iterable.args) == 3):
        return False
    return _step_named_like_batch(iterable)


def _step_named_like_batch(call: ast.Call) -> bool:
    """Is the step of `range(a, b, step)` a name or attribute named like a batch size (`batch_size`,
    `self.bs`, `text_bs`)?  The stride both loop shapes above ask for."""
    step = call.args[2]
    name = step.id if isinstance(step, ast.Name) else step.attr if isinstance(step, ast.Attribute) else None
    return name is not None and BATCH_STRIDE.search(name) is not None


def _loader_by_key(iterable: ast.AST) -> bool:
    """`dataloaders[phase]` / `self.data[phase]` (in `tqdm(...)` / `enumerate(...)`), as
    `iteration._loader_by_key` asks."""
    while isinstance(iterable, ast.Call) and iterable.args and _callee(iterable) in ("tqdm", "enumerate", "trange"):
        iterable = iterable.args[0]
    if not isinstance(iterable, ast.Subscript):
        return False
    held = iterable.value
    name = held.id if isinstance(held, ast.Name) else held.attr if isinstance(held, ast.Attribute) else ""
    key = iterable.slice
    key_name = key.id if isinstance(key, ast.Name) else key.attr if isinstance(key, ast.Attribute) else ""
    return LOADERS_BY_KEY.search(name) is not None or SPLIT_KEY.match(key_name) is not None


def _batches_from_iterator(loop: ast.AST) -> bool:
    """`for i, batch in enumerate(iterator)`, as `iteration._batches_from_iterator` asks."""
    iterable = loop.iter  # type: ignore[attr-defined]
    while isinstance(iterable, ast.Call) and iterable.args and _callee(iterable) in ("tqdm", "enumerate"):
        iterable = iterable.args[0]
    name = iterable.id if isinstance(iterable, ast.Name) else iterable.attr if isinstance(iterable, ast.Attribute) else ""
    if not GENERIC_ITERATOR.match(name):
        return False
    return any(isinstance(n, ast.Name) and BATCH_TARGET.match(n.id) for n in ast.walk(loop.target))  # type: ignore[attr-defined]


def _callee(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _keeps(node: ast.AST) -> bool:
    """`.append(v)` / `.extend(v)` on something (see `_on_self` for `self.<attr>`)."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("append", "extend")
        and argument_count(node) == 1
    )


def _grows_list(node: ast.AST) -> bool:
    """`preds += [out]`: a list grown by concatenation with a display."""
    return isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and isinstance(node.value, (ast.List, ast.Tuple))


def _concatenates(node: ast.AST) -> bool:
    """`x = torch.cat([x, ...])`, or `self.x = torch.cat((self.x, ...))`."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Name, ast.Attribute))):
        return False
    value = node.value
    for branch in [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]:
        if isinstance(branch, ast.Call) and branch.args and isinstance(branch.args[0], (ast.List, ast.Tuple)):
            if any(isinstance(e, (ast.Name, ast.Attribute)) and _same(e, node.targets[0]) for e in branch.args[0].elts):
                return True
    return False


def _same(a: ast.AST, b: ast.AST) -> bool:
    """`x` and `x`, `self.x` and `self.x` (loads and stores alike)."""
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        return a.attr == b.attr and _same(a.value, b.value)
    return False


def _on_self(receiver: ast.AST) -> bool:
    while isinstance(receiver, ast.Subscript):
        receiver = receiver.value
    return isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and receiver.value.id == "self"
