"""ML007's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

A call of `torch.utils.checkpoint`'s `checkpoint` or `checkpoint_sequential`, under its name or an
alias of it (the trigger words ask for `utils` and one of the two names).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.prescreen.source import Source, final_name


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    names = source.names_for(["checkpoint", "checkpoint_sequential"])
    return any(final_name(call.func) in names for call in source.nodes(ast.Call))  # type: ignore[attr-defined]
