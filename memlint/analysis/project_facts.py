"""The project pass's facts, asked about the nodes of the file being analysed (memlint/pipeline/project.py
computes them; `ctx.project` holds this file's view of them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.walk import dotted_name

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


