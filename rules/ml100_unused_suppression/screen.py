"""ML100's screen: the rule never needs the full analysis. It reads comments, after the analysis of
the other rules (memlint/pipeline/engine.py), whatever this screen says."""

from __future__ import annotations

from typing import Any, Mapping

from memlint.prescreen.source import Source


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    return False
