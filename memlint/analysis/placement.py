"""Where a model lives, and what a kept list is for: two facts that decide whether keeping a model's
outputs grows device memory over a pass (issue 27).

- **models on the host**: names the file binds only to a model it builds or loads and never moves.
  `Model.load_from_checkpoint(path)` loads onto the CPU (unless `map_location` names a device),
  `torch.load(path, map_location="cpu")` too, and so does a constructor (`Net()`, `AutoModel.from_pretrained(name)` without `device_map`); a
  name given `.to(...)` / `.cuda()`, rebound to anything else (`model = accelerator.prepare(model)`),
  a parameter of some function, or passed to a call that might move it (`train(model)`) is not
  known to stay there.  Its outputs are on the CPU too, whatever else the file puts on a device.
- **data caches**: a list filled once and then read back by a training loop (`latents_cache[step]`
  inside the loop that calls backward) or wrapped as a dataset (`LatentsDataset(latents_cache)`):
  the diffusers-style scripts precompute latents and embeddings on the device so that every step
  reuses them.  Holding them is the point, not a leak of a pass's outputs.
- **batches left on the host**: a name the loop over a data loader binds (`for x, y in loader`) that
  the loop's statements before a given one only cast or reshape (`y = y.float()`), never move or
  rebind otherwise.  A loader yields host tensors, so `.to(y.device)` there moves nothing.  Unless a
  launcher places the batches (`accelerator.prepare(loader)`: the device fact's `launched`, which the
  caller checks) or the dataset holds device tensors, which this fact cannot see: it is only asked
  to keep a rule silent.
"""

from __future__ import annotations

from typing import Callable, Iterator

import libcst as cst

from memlint.analysis.bindings import bound_by, erring_names
from memlint.analysis.iteration import iterates_batches
from memlint.analysis.walk import code_descendants, dotted_name
from memlint.pipeline.tree import code_children

# Calls a model may be given without moving it: Lightning's Trainer moves a module back to the CPU
# after `fit` / `test` (see ML014's docs), and the rest only read it.
_KEEPS_PLACE = frozenset({"fit", "test", "validate", "predict", "print", "len", "str", "repr", "type", "isinstance", "id", "summary"})
_LOADS_ON_HOST = frozenset({"load_from_checkpoint", "from_pretrained"})
# Methods that keep a tensor where it is (casts and reshapes).
_STAYS_IN_PLACE = frozenset({
    "float", "double", "long", "int", "half", "bfloat16", "bool", "contiguous", "view", "reshape",
    "squeeze", "unsqueeze", "permute", "transpose", "clone", "detach", "flatten",
})


def models_on_host(module: cst.Module, moved: frozenset[str]) -> frozenset[str]:
    """Names bound (anywhere in the file) only to a model built or loaded on the CPU and never moved;
    `moved` is the device fact's receivers of `.cuda()` / `.to(<a device>)`."""
    host: set[str] = set()
    other: set[str] = set(moved)
    for node in _nodes(module):
        kind = type(node)
        if kind is cst.Assign:
            targets = node.targets  # type: ignore[attr-defined]
            names = [t.target.value for t in targets if type(t.target) is cst.Name]  # type: ignore[attr-defined]
            simple = len(targets) == 1 and len(names) == 1
            (host if simple and _built_on_host(node.value) else other).update(names)  # type: ignore[attr-defined]
        elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.Param):
            other.update(t.value for t in bound_by(node, parameters=True) if type(t) is cst.Name)  # type: ignore[attr-defined]
        elif kind is cst.Call:
            callee = dotted_name(node.func) or ""  # type: ignore[attr-defined]
            if callee.rpartition(".")[2] in _KEEPS_PLACE:
                continue
            for arg in node.args:  # type: ignore[attr-defined]
                if type(arg.value) is cst.Name:
                    other.add(arg.value.value)  # type: ignore[attr-defined]
    return frozenset(host - other)


def _built_on_host(value: cst.BaseExpression) -> bool:
    """`Net(...)`, `Net(...).eval()`, `Model.load_from_checkpoint(path)`, `AutoModel.from_pretrained(name)`:
    a model made on the CPU (not `Net().cuda()`, `.to(device)`, `map_location=device`, `device_map=`)."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in ("eval", "train", "float", "requires_grad_"):  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    if type(value) is not cst.Call:
        return False
    written = dotted_name(value.func) or ""  # type: ignore[attr-defined]
    owner, _, last = written.rpartition(".")
    if last in _LOADS_ON_HOST:
        return owner[:1].isupper() and not any(_names_a_device(arg) for arg in value.args)  # type: ignore[attr-defined]
    if written == "torch.load":  # a whole pickled model, mapped onto the host
        return any(arg.keyword is not None and arg.keyword.value == "map_location" and not _names_a_device(arg) for arg in value.args)  # type: ignore[attr-defined]
    return last[:1].isupper() and not any(arg.keyword is not None and arg.keyword.value in ("device", "device_map") for arg in value.args)  # type: ignore[attr-defined]


def _names_a_device(arg: cst.Arg) -> bool:
    """`map_location=device` / `device_map="auto"`; `map_location="cpu"` keeps the host."""
    if arg.keyword is None or arg.keyword.value not in ("map_location", "device_map", "device"):
        return False
    value = arg.value
    return not (type(value) is cst.SimpleString and value.evaluated_value == "cpu")  # type: ignore[union-attr]


def read_back_as_data(scope: cst.CSTNode, name: str, trains: Callable[[cst.CSTNode], bool]) -> bool:
    """Is the list `name` of `scope` (a function, or the module) read back as data: indexed inside a
    loop that trains (`trains(loop)`: it calls backward), or given to a dataset or a loader
    (`LatentsDataset(latents_cache, ...)`, `DataLoader(cache)`)?"""
    stack: list[tuple[cst.CSTNode, tuple]] = [(scope, ())]
    while stack:
        node, loops = stack.pop()
        kind = type(node)
        if kind is cst.Subscript and type(node.value) is cst.Name and node.value.value == name:  # type: ignore[attr-defined]
            if any(trains(loop) for loop in loops) and _indexed_by_variable(node):  # type: ignore[arg-type]
                return True
        elif kind is cst.Call:
            callee = (dotted_name(node.func) or "").rpartition(".")[2].lower()  # type: ignore[attr-defined]
            if ("dataset" in callee or "loader" in callee) and any(
                type(arg.value) is cst.Name and arg.value.value == name for arg in node.args  # type: ignore[attr-defined]
            ):
                return True
        inner = loops + (node,) if kind in (cst.For, cst.While) else loops
        stack.extend((child, inner) for child in code_children(node))
    return False


def _indexed_by_variable(subscript: cst.Subscript) -> bool:
    """`cache[step]`, `cache[i % n]`; not `cache[0]`, `cache["key"]` or a slice."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
        return False
    index = subscript.slice[0].slice.value  # type: ignore[attr-defined]
    return type(index) in (cst.Name, cst.Attribute, cst.BinaryOperation, cst.Subscript)


def _nodes(module: cst.Module) -> Iterator[cst.CSTNode]:
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(code_children(node))


def batch_left_on_host(name: str, loop: cst.CSTNode, before: cst.CSTNode) -> bool:
    """Is `name` a batch of `loop` (a `for` over a data loader) that the loop's statements before the
    one holding `before` only cast or reshape?  See the module's docstring."""
    if type(loop) is not cst.For or not iterates_batches(loop):  # type: ignore[arg-type]
        return False
    if name not in {n.value for n in (loop.target, *code_descendants(loop.target)) if type(n) is cst.Name}:  # type: ignore[attr-defined]
        return False
    for statement in loop.body.body:  # type: ignore[attr-defined]
        if statement is before or any(n is before for n in code_descendants(statement)):
            return True
        for node in code_descendants(statement):
            if type(node) in (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr) and any(
                name in erring_names(target) for target in bound_by(node)
            ):
                if type(node) is not cst.Assign or not _cast_of(node.value, name):  # type: ignore[attr-defined]
                    return False
    return False


def _cast_of(value: cst.BaseExpression, name: str) -> bool:
    """`name.float()`, `name.float().contiguous()`: `name` itself, cast or reshaped in place."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _STAYS_IN_PLACE:  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    return type(value) is cst.Name and value.value == name  # type: ignore[attr-defined]
