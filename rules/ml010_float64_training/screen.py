"""ML010's screen: a necessary condition of the rule reporting (see rule.py).

The file trains: its text mentions a backward, an optimizer or a training entry point (meta.py's
TRAINING_WORDS), or it calls a function of another file that backpropagates or steps an optimizer
(`FileView.update_calls` from the project pass: `trpo_step(policy_net, value_net, ...)` of
core/trpo.py, from a script that mentions none of those words).
"""

from __future__ import annotations

from typing import Any, Mapping

from memlint.prescreen.source import Source
from memlint.rules.ml010_float64_training.meta import TRAINING_WORDS


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    project = source.project
    if project is not None and project.steps_elsewhere:
        return True
    return source.mentions(*TRAINING_WORDS)
