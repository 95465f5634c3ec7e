"""ML010's screen: a necessary condition of the rule reporting (see rule.py).

The file trains: its text mentions a backward, an optimizer or a training entry point (meta.py's
TRAINING_WORDS), or it calls a function of another file that backpropagates or steps an optimizer
(`FileView.update_calls` from the project pass: `trpo_step(policy_net, value_net, ...)` of
core/trpo.py, from a script that mentions none of those words).  And float64 is in the code where
the rule reads it: a call of `.double()` / `torch.DoubleTensor`, or `torch.float64` / `torch.double`
given to a call (`.to(...)`, `dtype=...`, `set_default_dtype(...)`), also through the names it is
imported or assigned as, or a type name in a string (`"torch.DoubleTensor"`); an optimizer's
comment or `get_default_dtype() == torch.float64` is neither.
"""

from __future__ import annotations

import ast

from typing import Any, Mapping

from memlint.prescreen.source import Source, final_name
from memlint.rules.ml010_float64_training.meta import TRAINING_WORDS


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    if not _float64_in_code(source):
        return False
    project = source.project
    if project is not None and project.steps_elsewhere:
        return True
    return source.mentions(*TRAINING_WORDS)


def _float64_in_code(source: Source) -> bool:
    names = source.names_for(("float64", "double", "DoubleTensor"))
    for call in source.nodes(ast.Call):
        if final_name(call.func) in names:  # type: ignore[attr-defined]
            return True
        for value in (*call.args, *(k.value for k in call.keywords)):  # type: ignore[attr-defined]
            if final_name(value) in names:
                return True
            if isinstance(value, ast.Constant) and isinstance(value.value, str) and ("float64" in value.value or "Double" in value.value):
                return True
    return False
