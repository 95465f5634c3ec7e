"""Methods that put the models their object holds in eval mode, on CPython's AST (no libcst: the
project pass's summaries read it).

A plain trainer class keeps its networks as attributes and switches them together
(`def val_start(self): self.img_enc.eval(); self.txt_enc.eval()`): for the caller,
`model.val_start()` is `model.eval()`.  `only_puts_held_models_in_eval(node)`: every statement
of the method's body is a docstring, `pass`, or `self.X.eval()` / `self.X.train(False)` /
`self.eval()` (X any attribute chain of self), one such call at least, and the method is neither
decorated nor static: whatever its arguments, it leaves those models in eval mode and does
nothing else.  An `async def` never is (its call only builds a coroutine).  Such a method stands
for `model.eval()` only where it evals every model its class holds (`held_models`,
`held_models_evaled`): a
`freeze_backbone` that evals one part of a model leaves the rest training.  (The summaries record the other side, a method that may train, from its calls of
`.train()`: summaries' `mode` "train".)
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from memlint.analysis.tables import LOSS_CONTAINER_WORDS, LOSS_NAME


def only_puts_held_models_in_eval(node: ast.AST) -> bool:
    """Does the method's body only put models self holds in eval mode (see the module docstring)?"""
    if type(node) is not ast.FunctionDef:
        return False  # (an `async def` only builds a coroutine; a lambda is no method)
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
    elif func.attr != "train" or not literal_false(call):
        return False
    receiver = func.value
    while type(receiver) is ast.Attribute:
        receiver = receiver.value
    return type(receiver) is ast.Name and receiver.id == self_name


def literal_false(call: ast.Call) -> bool:
    """`X.train(False)` / `X.train(mode=False)`: the call puts X in eval mode."""
    arguments = [*call.args, *(k.value for k in call.keywords if k.arg == "mode")]
    return len(arguments) == 1 and len(call.args) + len(call.keywords) == 1 and type(arguments[0]) is ast.Constant and arguments[0].value is False


def held_models_evaled(wrapper: ast.AST, held: frozenset[str]) -> bool:
    """Does `wrapper` (a method `only_puts_held_models_in_eval` accepts) put every model its class
    holds (`held`: `held_models`) in eval mode?  `self.eval()` does; else the class must hold at
    least one model and the wrapper must eval each (`self.img_enc.eval()`).  Otherwise the caller
    cannot tell which of them it runs in eval mode: stay silent."""
    self_name = _self_parameter(wrapper)
    evaled = set()
    for statement in wrapper.body:  # type: ignore[attr-defined]
        if type(statement) is ast.Expr and type(statement.value) is ast.Call and _puts_held_model_in_eval(statement.value, self_name):  # type: ignore[arg-type]
            receiver = statement.value.func.value  # type: ignore[attr-defined]
            if type(receiver) is ast.Name:
                return True  # `self.eval()`: every submodule
            while type(receiver.value) is ast.Attribute:
                receiver = receiver.value
            evaled.add(receiver.attr)
    return bool(held) and held <= evaled


def held_models(methods: Iterable[ast.AST]) -> frozenset[str]:
    """The attributes of self that a class's `methods` show to be models, by direct evidence: one it
    calls (`self.img_enc(images)`) or hands to an optimizer (`self.txt_enc.parameters()`); a loss
    (`self.criterion(a, b)`) and a method of the class are none."""
    methods = list(methods)
    method_names = {getattr(m, "name", None) for m in methods}
    held = set()
    for method in methods:
        own = _self_parameter(method)
        if own is None:
            continue
        for node in ast.walk(method):
            if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
                continue
            func = node.func
            if type(func.value) is ast.Name and func.value.id == own:
                attribute = func.attr  # `self.img_enc(images)`
            elif func.attr == "parameters" and type(func.value) is ast.Attribute:
                receiver = func.value  # `self.img_enc.fc.parameters()`
                while type(receiver.value) is ast.Attribute:
                    receiver = receiver.value
                if type(receiver.value) is not ast.Name or receiver.value.id != own:
                    continue
                attribute = receiver.attr
            else:
                continue
            if attribute in method_names or LOSS_NAME.match(attribute) or set(attribute.split("_")) & LOSS_CONTAINER_WORDS:
                continue
            held.add(attribute)
    return frozenset(held)
