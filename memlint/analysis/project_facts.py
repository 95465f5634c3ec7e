"""The project pass's facts, asked about the nodes of the file being analysed (memlint/pipeline/project.py
computes them; `ctx.project` holds this file's view of them)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.walk import dotted_name
from memlint.pipeline.project import key_string

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def returns_history(call: cst.Call, ctx: "Context") -> bool:
    """Does `call` run a function of the project that returns a value with autograd history (a
    helper that returns a model's output or a loss, here or in another file; `self.step(x)` for a
    method that does)?"""
    project = ctx.project
    func = call.func
    if type(func) is cst.Name:
        return func.value in project.history_calls and ctx.binds_at_module_level(func.value)
    written = dotted_name(func)
    if written is None:
        return False
    root, _, method = written.partition(".")
    if root == "self" and "." not in method:
        class_name = ctx.class_name
        return class_name is not None and f"{class_name}.{method}" in project.history_methods
    return written in project.history_calls and ctx.binds_at_module_level(root)




def history_passed(call: cst.Call, ctx: "Context") -> list[cst.BaseExpression]:
    """The arguments of `call` whose autograd history the result carries, where `call` runs a
    module-level function of the project that returns a value computed from those parameters with
    operations that keep their history (`l2_norm(emb)` returning `torch.div(emb, norm)`:
    FileView.history_through); positional arguments only (none after a `*args`)."""
    through = ctx.project.history_through
    if not through:
        return []
    written = dotted_name(call.func)
    if written is None or not ctx.binds_at_module_level(written.partition(".")[0]):
        return []
    found = []
    for position, arg in enumerate(call.args):
        if arg.star or arg.keyword is not None:
            break
        if f"{written}:{position}" in through:
            found.append(arg.value)
    return found


def training_work(call: cst.Call, ctx: "Context") -> frozenset[str]:
    """The part of a training step that `call` does on every call when it runs a function of
    another file of the project ("backward", "step", "model": `train_epoch(model, optimizer, ...)`
    whose body runs the model, backpropagates and steps; `policy.train(buffer)` with `policy =
    TD3.TD3(...)`, whose class's `train` does), or nothing (not the project's, or it does none of
    it outside loops of its own)."""
    updates = ctx.project.update_calls
    if not updates:
        return frozenset()
    func = call.func
    written = dotted_name(func)
    if written is None:
        return frozenset()
    root, _, method = written.partition(".")
    known = dict(updates)
    if root == "self":
        class_name = ctx.class_name
        if class_name is None or "." in method:
            return frozenset()
        found = known.get(f"{class_name}.{method}")
    else:
        # a call on an instance the function (or the module's code, for a name bound there) builds:
        # `agent.update(batch)` with `agent = Agent(...)`, `make_agent(...)` or `mod.agent(...)`
        # (the project pass found the class and keyed the answer by the function that binds it)
        where = "" if ctx.binds_at_module_level(root) else (None if ctx.function_key is None else key_string(ctx.function_key))
        called = written if type(func) is not cst.Name else f"{written}.__call__"  # `maml(x)`: Meta.forward
        found = known.get(tables.scoped_call(where, called)) if where is not None else None
        if found is None and ctx.binds_at_module_level(root):
            found = known.get(written)  # `train_epoch(...)`, `utils.train_step(...)`
    return frozenset(found.split(",")) if found else frozenset()


def moved_argument(call: cst.Call, ctx: "Context") -> Optional[tuple[cst.BaseExpression, str, Optional[cst.BaseExpression]]]:
    """(the argument moved, "cuda" or "to", the argument given as its device or None) when `call`
    runs a function of the project that returns its parameter moved to a device (`async_copy_to(x,
    gpu)` whose body returns `x.cuda(gpu)` for a tensor; `FileView.mover_calls`), else None."""
    if not ctx.project.mover_calls:
        return None
    written = _project_callee(call, ctx)
    found = ctx.project.movers().get(written) if written is not None else None
    if found is None:
        return None
    parameter, method, device = found
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in call.args) or parameter >= len(positional):
        return None
    given = positional[device].value if 0 <= device < len(positional) else None
    if device >= 0 and given is None:
        return None  # given by keyword or left to its default: cannot tell what it is
    return positional[parameter].value, method, given


def makes_host_tensor(call: cst.Call, ctx: "Context") -> Optional[str]:
    """The callee as written ("causal_mask") when `call` runs a function of the project that returns
    a tensor it has just made on the host (`FileView.host_calls`: every return a torch size factory
    without `device=`, here or in another file; a method of the caller's class called on `self`), else None."""
    if not ctx.project.host_calls:
        return None
    func = call.func
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        class_name = ctx.class_name  # `self.create_mask(H, W)`: the class's own method ("Class.create_mask")
        found = class_name is not None and f"{class_name}.{func.attr.value}" in ctx.project.host_calls
        return f"self.{func.attr.value}" if found else None
    written = _project_callee(call, ctx)
    return written if written is not None and written in ctx.project.host_calls else None


def makes_unsaved_tensor(call: cst.Call, ctx: "Context") -> Optional[str]:
    """The callee as written ("utils.batch_norm") when `call` runs a function of the project whose
    every return is a new tensor its producer keeps nothing of for backward (`FileView.unsaved_calls`:
    `return F.batch_norm(...)`, here or in another file), else None."""
    if not ctx.project.unsaved_calls:
        return None
    written = _project_callee(call, ctx)
    return written if written is not None and written in ctx.project.unsaved_calls else None


def _project_callee(call: cst.Call, ctx: "Context") -> Optional[str]:
    """`helper` / `utils.helper` as written, when its root is bound at module level (the name the
    project pass resolved), else None."""
    if not isinstance(call.func, (cst.Name, cst.Attribute)):
        return None
    written = dotted_name(call.func)
    if written is None or not ctx.binds_at_module_level(written.partition(".")[0]):
        return None
    return written
