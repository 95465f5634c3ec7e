"""Module classes of the file that are an `nn.Sequential` and nothing more: their constructor's own
`self.add_module(...)` calls build a sequence of layers that runs as `net.add_module(...)` on a
local `net = nn.Sequential()` does.

deeplab-pytorch's block:

    class _ConvBnReLU(nn.Sequential):
        def __init__(self, in_ch, out_ch, ..., relu=True):
            super().__init__()
            self.add_module("conv", nn.Conv2d(...))
            self.add_module("bn", BatchNorm2d(out_ch))
            if relu:
                self.add_module("relu", nn.ReLU())

Such a class runs its layers in the order they were added, each on its neighbour's output, where
nothing changes that: the class is a direct subclass of `nn.Sequential` alone (no other base, no
decorator, no metaclass) whose body defines no method but `__init__` and binds no `forward`,
`__call__` or other name that changes how it runs or is iterated; no class of the file derives
from it (a subclass's `forward` could run one layer alone); the constructor adds each layer under
its own literal key (a key added twice replaces the layer where it stood); and nothing in the file
replaces a container's elements or runs a part of one (`block[1](x)`, `block[1:]`: whoever holds an
instance is not known by name, so any such part counts).  Hooks are the asker's (with no name for the
instance, any hook of the file may be on one).  Instances made and used in other files are not
seen (the same limit as a Sequential stored on `self`).  ML003 asks it for the activations such a
constructor adds right after a layer that keeps nothing of its output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.module_changes import elements_may_change_anywhere, module_changes
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Names a class body may bind that change how an instance runs, is iterated or indexed.
_RUNNING_NAMES = frozenset(
    {"forward", "__call__", "_call_impl", "__iter__", "__getitem__", "__setitem__", "__delitem__", "__len__",
     "append", "extend", "insert", "pop", "add_module", "register_module", "_modules", "__getattr__", "__setattr__"}
)  # fmt: skip


def sequential_subclass_constructor(ctx: "Context", function: cst.FunctionDef) -> bool:
    """Is `function` the `__init__` of such a class (see the module's doc)?"""
    if function.name.value != "__init__" or ctx.class_name is None:
        return False
    return ctx.memo(("sequential-subclass", id(function)), lambda: _plain_subclass_constructor(ctx, function))  # type: ignore[return-value]


def _plain_subclass_constructor(ctx: "Context", function: cst.FunctionDef) -> bool:
    owner = next(
        (s for s in ctx.module.body if type(s) is cst.ClassDef and any(m is function for m in s.body.body)),  # type: ignore[attr-defined]
        None,
    )
    if owner is None or owner.decorators or len(owner.bases) != 1 or owner.keywords:
        return False
    base = owner.bases[0]
    if base.keyword is not None or base.star or torch_nn_name(ctx, base.value) != "Sequential":
        return False
    for statement in owner.body.body:  # type: ignore[attr-defined]
        if statement is function:
            continue
        if type(statement) is not cst.SimpleStatementLine:
            return False  # another method, a nested class, a branch binding who knows what
        for small in statement.body:  # type: ignore[attr-defined]
            if type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString):  # type: ignore[attr-defined]
                continue  # the docstring
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target] if type(small) is cst.AnnAssign else None  # type: ignore[attr-defined]
            if targets is None or any(type(t) is not cst.Name or t.value in _RUNNING_NAMES for t in targets):  # type: ignore[attr-defined]
                return False
    changes = module_changes(ctx)
    if changes.subclasses.get(owner.name.value) or changes.changed_elements or changes.parts_read or elements_may_change_anywhere(ctx):
        return False
    return _keys_distinct(function)


def _keys_distinct(function: cst.FunctionDef) -> bool:
    """Does every `self.add_module(key, ...)` of the constructor name its own literal key?"""
    keys: list[str] = []
    for node in code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in ("add_module", "register_module") and type(func.value) is cst.Name and func.value.value == "self":  # type: ignore[attr-defined]
            key = node.args[0].value if node.args else None  # type: ignore[attr-defined]
            if type(key) is not cst.SimpleString:
                return False  # (a key built per turn of a loop: the pairs are the asker's, added_layers.py)
            keys.append(key.value)  # type: ignore[attr-defined]
    return len(keys) == len(set(keys))
