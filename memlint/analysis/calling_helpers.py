"""Functions of the file that do nothing with a parameter but call it.

self-critical.pytorch runs its attention embedding through a helper that packs the padded batch:

    def pack_wrapper(module, att_feats, att_masks):
        if att_masks is not None:
            ...
            return pad_unsort_packed_sequence(PackedSequence(module(packed[0]), packed[1]), inv_ix)
        else:
            return module(att_feats)

`pack_wrapper(self.att_embed, att_feats, att_masks)` runs the Sequential whole, as `self.att_embed(x)`
would: nothing of its layers or their outputs is exposed.  A call counts when its callee is a name
the module binds once, to a module-level `def` (not decorated: a decorator may replace it), and the
argument goes to a parameter every mention of which in the function (nested code included) is the
callee of a call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import module_bindings
from memlint.analysis.walk import code_with_parents

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def only_calls_argument(call: cst.Call, argument: cst.Arg, ctx: "Context") -> bool:
    """Does `call` hand `argument` to a function of the file that only calls it?"""
    if type(call.func) is not cst.Name or argument.star:
        return False
    function = function_defined_once(call.func.value, ctx)
    if function is None:
        return False
    parameter = parameter_for(call, argument, function)
    return parameter is not None and _only_called(function, parameter)


def function_defined_once(name: str, ctx: "Context") -> Optional[cst.FunctionDef]:
    return ctx.memo(("function-defined-once", name), lambda: _defined_once(name, ctx))  # type: ignore[return-value]


def _defined_once(name: str, ctx: "Context") -> Optional[cst.FunctionDef]:
    found = [s for s in ctx.module.body if type(s) is cst.FunctionDef and s.name.value == name]
    if len(found) != 1 or found[0].decorators:
        return None
    # Any other binding of the name at module level (`pack_wrapper = other`, an import, a second
    # `def` under an `if` or `try`, a function's `global`) may replace it.
    if module_bindings(ctx)[name] != 1:
        return None
    return found[0]


def parameter_for(call: cst.Call, argument: cst.Arg, function: cst.FunctionDef, through_self: bool = False) -> Optional[str]:
    """The parameter of `function` that `argument` of `call` binds (`through_self`: a method called
    as `self.f(...)`, whose first parameter is bound already); None where it cannot be told."""
    params = function.params
    if argument.keyword is not None:
        named = [p for p in (*params.posonly_params, *params.params, *params.kwonly_params) if p.name.value == argument.keyword.value]
        return named[0].name.value if named else None
    positional = [a for a in call.args if a.keyword is None]
    if any(a.star for a in positional[: positional.index(argument) + 1]):
        return None  # a `*args` before it: its position is not known
    index = positional.index(argument)
    ordered = [*params.posonly_params, *params.params][1 if through_self else 0 :]
    return ordered[index].name.value if index < len(ordered) else None


def _only_called(function: cst.FunctionDef, parameter: str) -> bool:
    mentions = 0
    for node, parents in code_with_parents(function.body):
        if type(node) is cst.Name and node.value == parameter:
            parent = parents[-1]
            if not (type(parent) is cst.Call and parent.func is node):
                return False
            mentions += 1
    return mentions > 0
