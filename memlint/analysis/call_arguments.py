"""Which argument of a call a function's parameter receives.

`train_step(model, batch, "val")` against `def train_step(model, batch, phase)` hands "val" to
`phase`: positional arguments fill the positional parameters in order (`skipped` of them are filled
by the call itself: `self` of `self.step(...)`), a keyword argument the parameter it names (never a
positional-only one).  A star argument (`*args`, `**kw`) met before the parameter's own makes the
answer unknown; a parameter the call does not fill is left to its default.  Asked by the phase
switches of evaluation.py and by returned_elements.py (what a caller hands a helper's parameter).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst


def argument_for(call: cst.Call, function: cst.FunctionDef, parameter: str, skipped: int = 0) -> Optional[cst.BaseExpression]:
    """The expression `call` hands `function`'s `parameter`, or None where it leaves it to its
    default or cannot be told (a star argument before it)."""
    params = function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)][skipped:]
    by_keyword = all(p.name.value != parameter for p in params.posonly_params)
    position = 0
    for argument in call.args:
        if argument.star:
            return None  # `f(*args)` / `f(**kw)`: which parameter it fills is not known
        if argument.keyword is None:
            if position < len(positional) and positional[position] == parameter:
                return argument.value
            position += 1
        elif by_keyword and argument.keyword.value == parameter:
            return argument.value
    return None
