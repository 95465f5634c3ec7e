"""What rules ask about code: names, grad mode, loops, and which values carry autograd history.

Nothing here knows any particular rule; everything here is shared by several.  The names below are
imported on first use, so that the libcst-free modules of this package (`tables`, `naming`) can be
imported without libcst.
"""

from __future__ import annotations

import importlib

_EXPORTS = {"Context": "context", "GradMode": "context", "Kind": "values", "Value": "values"}
__all__ = list(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"memlint.analysis.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'memlint.analysis' has no attribute {name!r}")
