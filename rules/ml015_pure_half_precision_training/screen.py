"""ML015's screen: a necessary condition of the rule reporting (see rule.py).

Beyond its trigger words (half precision), the text names an Adam-family optimizer, or a class of
the project whose instances build one over their own parameters (`FileView.adam_classes` from the
project pass: BigGAN's train.py casts `G = model.Generator(...)` and never names Adam).
"""

from __future__ import annotations

from typing import Any, Mapping

from memlint.analysis.tables import ADAM_CLASSES
from memlint.prescreen.source import Source


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    if source.mentions(*ADAM_CLASSES):
        return True
    project = source.project
    return project is not None and bool(project.adam_classes) and source.mentions(*(name for name, _ in project.adam_classes))
