"""ML006's screen (see rule.py): the rule reports only against a configured `gpu-memory`; the
trigger words (an Adam-family optimizer and `parameters`) are the rest of its condition."""

from __future__ import annotations

from typing import Any, Mapping

from memlint.prescreen.source import Source


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    return options["gpu-memory"] is not None
