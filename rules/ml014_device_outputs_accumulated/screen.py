"""ML014's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

`.append(v)` / `.extend(v)` inside a loop over batches (the trigger words ask for a device
mention: `cuda`, `to` or `device`).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.naming import BATCH_SOURCE
from memlint.prescreen.source import Source, argument_count, words_in


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    for loop in source.nodes(ast.For, ast.AsyncFor):
        if not any(BATCH_SOURCE.search(word) for word in words_in(loop.iter)):  # type: ignore[attr-defined]
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend") and argument_count(node) == 1:
                return True
    return False
