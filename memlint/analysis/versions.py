"""Compatibility code for other PyTorch versions: conditions that test which version (or which API)
is there, and the code they guard.

Code behind such a test, or in the `except` of a `try` that used the newer API first, runs only on
the PyTorch it was written for: advice about the current API (the deprecated AMP names of ML016,
`use_reentrant=` of ML007) does not apply to it, and a fix that adds the new API there would break
the old versions it exists for.
"""

from __future__ import annotations

import re

import libcst as cst

from memlint.analysis.iteration import names_in

# `torch.__version__`, `version.parse(...)`, `_TORCH_GREATER_EQUAL_2_4`, `TORCH_2_0`, `is_torch_available`,
# `hasattr(torch, "amp")`.
_VERSION_NAME = re.compile(r"version|_GREATER|_LESS|_EQUAL|_AVAILABLE|^hasattr$|_TORCH_\d|TORCH_\d", re.I)


def is_version_check(test: cst.BaseExpression) -> bool:
    """`_TORCH_GREATER_EQUAL_2_4`, `torch.__version__ >= ...`, `hasattr(torch, "amp")`."""
    return any(_VERSION_NAME.search(name) for name in names_in(test))
