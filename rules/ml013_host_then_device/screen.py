"""ML013's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

`torch.<factory>(...).to(...)` / `.cuda(...)` with no `device=` given to the factory.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.tables import TORCH_FACTORIES
from memlint.prescreen.source import Source, final_name


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    factories = source.names_for(TORCH_FACTORIES)
    for call in source.nodes(ast.Call):
        if not (isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "cuda")):  # type: ignore[attr-defined]
            continue
        factory = call.func.value  # type: ignore[attr-defined]
        if (
            isinstance(factory, ast.Call)
            and final_name(factory.func) in factories
            and not any(k.arg in ("device", None) for k in factory.keywords)
            and not any(isinstance(a, ast.Starred) for a in factory.args)
        ):
            return True
    return False
