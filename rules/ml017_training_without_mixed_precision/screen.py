"""ML017's screen: a necessary condition of the rule reporting (see rule.py).

The text mentions a backward and an optimizer's `step`, or the file calls a function of another
file that does part of a training step (`FileView.update_calls` from the project pass: an epoch
loop calling `train_epoch(model, optimizer, ...)` of train/train_epoch.py mentions neither).
"""

from __future__ import annotations

from typing import Any, Mapping

from memlint.analysis.tables import BACKWARD_METHODS
from memlint.prescreen.source import Source

_BACKWARD = tuple(sorted(BACKWARD_METHODS))


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    project = source.project
    if project is not None and project.update_calls:
        return True
    return source.mentions(*_BACKWARD) and source.mentions("step")
