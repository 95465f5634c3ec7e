"""Methods that put the models their object holds in eval mode, on CPython's AST (no libcst: the
project pass's summaries read it).

A plain trainer class keeps its networks as attributes and switches them together
(`def val_start(self): self.img_enc.eval(); self.txt_enc.eval()`): for the caller,
`model.val_start()` is `model.eval()`.  `only_puts_held_models_in_eval(node)`: every statement
of the method's body is a docstring, `pass`, or `self.X.eval()` / `self.X.train(False)` /
`self.eval()` (X any attribute chain of self), one such call at least, and the method is neither
decorated nor static: whatever its arguments, it leaves those models in eval mode and does
nothing else.  (The summaries record the other side, a method that may train, from its calls of
`.train()`: summaries' `mode` "train".)
"""

from __future__ import annotations

import ast
from typing import Optional


def only_puts_held_models_in_eval(node: ast.AST) -> bool:
    """Does the method's body only put models self holds in eval mode (see the module docstring)?"""
    body = getattr(node, "body", None)
    self_name = _self_parameter(node)
    if not body or self_name is None:
        return False
    switched = False
    for position, statement in enumerate(body):
        if position == 0 and _is_docstring(statement):
            continue
        if type(statement) is ast.Pass:
            continue
        if type(statement) is ast.Expr and type(statement.value) is ast.Call and _puts_held_model_in_eval(statement.value, self_name):
            switched = True
            continue
        return False
    return switched


def _self_parameter(node: ast.AST) -> Optional[str]:
    args = getattr(node, "args", None)
    if args is None:
        return None
    positional = [*args.posonlyargs, *args.args]
    if not positional or getattr(node, "decorator_list", None):
        return None  # (a static or class method, or one a decorator may change: nothing certain)
    return positional[0].arg


def _is_docstring(statement: ast.stmt) -> bool:
    return type(statement) is ast.Expr and type(statement.value) is ast.Constant and type(statement.value.value) is str


def _puts_held_model_in_eval(call: ast.Call, self_name: str) -> bool:
    """`self.X.eval()`, `self.X.train(False)`, `self.eval()`: the receiver an attribute chain of self."""
    func = call.func
    if type(func) is not ast.Attribute:
        return False
    if func.attr == "eval":
        if call.args or call.keywords:
            return False
    elif func.attr != "train" or not _literal_false(call):
        return False
    receiver = func.value
    while type(receiver) is ast.Attribute:
        receiver = receiver.value
    return type(receiver) is ast.Name and receiver.id == self_name


def _literal_false(call: ast.Call) -> bool:
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "mode")]
    return len(arguments) == 1 and len(call.args) + len(call.keywords) == 1 and type(arguments[0]) is ast.Constant and arguments[0].value is False
