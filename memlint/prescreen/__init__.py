"""The prescreen: does a file need the full analysis at all?

libcst's parse costs several times CPython's, and most files of a large code base (the modelling
code of a model zoo, utilities) cannot have a finding.  Before parsing with libcst the engine asks,
for every rule that runs on the file, a necessary condition of that rule reporting
(`memlint.prescreen.checks`), using only the file's words and CPython's AST.  When none holds the
file has no finding and libcst never sees it (nor is it imported, for a single clean file).  The
answer is an over-approximation by construction: a check may say "maybe" for a file without
findings, never "no" for a file with one.
"""

from __future__ import annotations

from typing import Any, Collection, Mapping

from memlint.prescreen.checks import TEXT_CHECKS, TREE_CHECKS
from memlint.prescreen.source import Source

__all__ = ["Source", "needs_analysis"]


def needs_analysis(source: Source, codes: Collection[str], options: Mapping[str, Any]) -> bool:
    """Could any of the rules `codes` report in `source`?  (True for a rule without a check.)"""
    if any(code not in TEXT_CHECKS and code not in TREE_CHECKS for code in codes):
        return True
    if any(TEXT_CHECKS[code](source, options) for code in codes if code in TEXT_CHECKS):
        return True
    tree_codes = [code for code in codes if code in TREE_CHECKS]
    if not tree_codes:
        return False
    if not source.structure_is_reliable:
        return True
    return any(TREE_CHECKS[code](source, options) for code in tree_codes)
