"""Helpers that add layers to a list they are given and hand it back (nashory/pggan-pytorch's
`deconv(layers, c_in, c_out, ...)`: `layers.append(nn.Conv2d(...))`, `layers.append(nn.LeakyReLU(0.2))`,
`return layers`), called as `layers = deconv(layers, ...)` by code that turns the list into
`nn.Sequential(*layers)`.  The layers the helper adds follow one another in that Sequential as they
do in the helper, wherever it is called: the fact a rule about adjacent layers (ML003) needs.

Same file only: who calls a helper of another file with which list is the project pass's to say,
and it does not record it (the Sequential's order is no fact of its summaries); there the rule
stays silent.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.sequences import unpacked_into_sequential_only
from memlint.analysis.walk import code_descendants


def helper_list_into_sequential_only(function: Optional[cst.FunctionDef], name: str, ctx) -> bool:
    """Is `name` a positional parameter of the module-level `function` that its body only extends
    (`append`, `extend`) and hands back (every `return` is `return name`), and does every use of the
    function in the file call it with a list the caller only extends (through it or directly) and
    turns into `nn.Sequential(*list)`, the result bound back to that list (`layers = deconv(layers,
    ...)`) or dropped?  Any other use of the function's name (handed on as a value, another
    binding) and the answer is no."""
    if function is None or not any(s is function for s in ctx.module.body):
        return False
    return ctx.memo(("list-helper", id(function), name), lambda: _check(function, name, ctx))  # type: ignore[return-value]


def _check(function: cst.FunctionDef, name: str, ctx) -> bool:
    position = next((i for i, p in enumerate(function.params.params) if p.name.value == name), None)
    if position is None or not _only_extended_and_returned(function, name):
        return False
    helper = function.name.value
    uses = [n for n in code_descendants(ctx.module) if type(n) is cst.Name and n.value == helper]
    calls = 0
    for scope in _scopes(ctx.module):
        for node in code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)):
            if type(node) is not cst.Call or type(node.func) is not cst.Name or node.func.value != helper:
                continue
            given = _list_given(node, position, scope)
            if given is None or not unpacked_into_sequential_only(scope, given, ctx, helper=(helper, position)):
                return False
            calls += 1
    # every use is a call found above (the `def`'s own name is one more Name)
    return calls > 0 and calls == len(uses) - 1


def _only_extended_and_returned(function: cst.FunctionDef, name: str) -> bool:
    nodes = list(code_descendants(function.body))
    returns = [n for n in nodes if type(n) is cst.Return]
    if not returns or not all(type(r.value) is cst.Name and r.value.value == name for r in returns):
        return False
    extended = sum(
        1 for n in nodes
        if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == name and n.attr.value in ("append", "extend")
    )  # fmt: skip
    named = sum(1 for n in nodes if type(n) is cst.Name and n.value == name)
    return extended > 0 and named == extended + len(returns)


def _scopes(module: cst.Module):
    """The module's own code and the body of every function in it (each searched without the
    functions and classes nested in it)."""
    yield module
    for node in code_descendants(module):
        if type(node) is cst.FunctionDef and type(node.body) is cst.IndentedBlock:
            yield node.body


def _list_given(call: cst.Call, position: int, scope: cst.CSTNode) -> Optional[str]:
    """The name of the list `call` is given at `position`, where the call's result is bound back to
    it or dropped; else None."""
    if position >= len(call.args) or any(a.star or a.keyword is not None for a in call.args[: position + 1]):
        return None
    value = call.args[position].value
    if type(value) is not cst.Name:
        return None
    for node in code_descendants(scope, skip=(cst.FunctionDef, cst.ClassDef)):
        if type(node) is cst.Expr and node.value is call:
            return value.value
        if type(node) is cst.Assign and node.value is call:
            targets = node.targets
            if len(targets) == 1 and type(targets[0].target) is cst.Name and targets[0].target.value == value.value:
                return value.value
            return None
    return None
