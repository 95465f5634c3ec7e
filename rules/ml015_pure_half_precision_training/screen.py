"""ML015's screen: a necessary condition of the rule reporting (see rule.py).

Beyond its trigger words (half precision), the text names an Adam-family optimizer, or a class of
the project whose instances build one over their own parameters (`FileView.adam_classes` from the
project pass: BigGAN's train.py casts `G = model.Generator(...)` and never names Adam).  And the
file casts something to float16, as `precision_api.cast_target` reads a cast: `.half()`, or `.to` /
`.type` given `torch.float16` / `torch.half` / a HalfTensor type (through the names it is imported
or assigned as); an optimizer's `if p.dtype == torch.float16:` casts nothing.
"""

from __future__ import annotations

import ast

from typing import Any, Mapping

from memlint.analysis.tables import ADAM_CLASSES
from memlint.prescreen.source import Source, final_name


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    if not _casts_to_half(source):
        return False
    if source.mentions(*ADAM_CLASSES):
        return True
    project = source.project
    return project is not None and bool(project.adam_classes) and source.mentions(*(name for name, _ in project.adam_classes))


def _casts_to_half(source: Source) -> bool:
    half = source.names_for(("float16", "half", "HalfTensor"))
    for call in source.nodes(ast.Call):
        func = call.func  # type: ignore[attr-defined]
        if not isinstance(func, ast.Attribute):
            continue
        if func.attr == "half" and not call.args and not call.keywords:  # type: ignore[attr-defined]
            return True
        if func.attr in ("to", "type"):
            given = [*call.args, *(k.value for k in call.keywords if k.arg in (None, "dtype"))]  # type: ignore[attr-defined]
            if any(final_name(v) in half or (isinstance(v, ast.Constant) and "Half" in str(v.value)) for v in given):
                return True
    return False
