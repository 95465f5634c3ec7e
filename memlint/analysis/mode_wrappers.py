"""Mode switches through an object's method: `model.val_start()` where every project method so
named only puts the models its object holds in eval mode (SCAN's plain `SCAN` class:
`self.img_enc.eval(); self.txt_enc.eval()`), `model.train_start()` where one may train them.

The fact comes from the project pass (FileView.mode_methods, from the summaries' `mode`:
memlint.analysis.mode_setters); ML002's evaluation regions (memlint.analysis.evaluation) read such
a call as `model.eval()` on its receiver, and end a region at a method that may train.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def wrapper_eval_call(statement: cst.CSTNode, ctx: "Context") -> Optional[cst.Call]:
    """The call of a statement that is only `X.m()` (no arguments), X a name or an attribute chain
    other than `self`, m a method that puts the models its object holds in eval mode."""
    if not ctx.project.mode_methods:
        return None  # (most files: no such method in their program)
    call = _method_statement(statement)
    if call is None or call.args:
        return None
    return call if call.func.attr.value in ctx.project.eval_methods else None  # type: ignore[attr-defined]


def calls_backprop_method(scope: cst.CSTNode, ctx: "Context") -> bool:
    """Does `scope` (a function, or the module) call a method of which some project method so named
    may backpropagate or step (`gan.step_g(loss)`, `self.update(x)`)?  Then what a wrapper put in
    eval mode is part of training there (a frozen part of the model, a discriminator), no evaluation."""
    methods = ctx.project.backprop_methods
    if not methods:
        return False
    return bool(ctx.memo(
        ("calls-backprop-method", id(scope)),
        lambda: any(type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in methods for n in code_descendants(scope)),  # type: ignore[attr-defined]
    ))  # fmt: skip


def wrapper_trains(node: cst.CSTNode, ctx: "Context") -> bool:
    """Does `node` (a statement, with its nested blocks) call a method that may put a model of its
    object in training mode (`model.train_start()`)?"""
    methods = ctx.project.train_methods
    if not methods:
        return False
    return any(
        type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in methods  # type: ignore[attr-defined]
        for n in (node, *code_descendants(node))
    )  # fmt: skip


def _method_statement(statement: cst.CSTNode) -> Optional[cst.Call]:
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return None
    small = statement.body[0]  # type: ignore[attr-defined]
    call = small.value if type(small) is cst.Expr else None
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute:
        return None
    receiver = call.func.value
    while type(receiver) is cst.Attribute:
        receiver = receiver.value
    if type(receiver) is not cst.Name or (receiver.value == "self" and type(call.func.value) is cst.Name):
        return None
    return call
