"""Caches: code that computes a value only when a stored copy is missing.

`if self.mask is None or self.mask.size(0) != n: self.mask = torch.ones(n, n).to(x.device)` runs its
body on the first call (and when the size changes), not on every call: the value is made once and
kept.  The fact is syntactic: a statement that assigns to a persistent place (an attribute of
`self`, or a module-level name: `mel_basis[key] = ...`), inside an `if` whose test reads that same
place.  A local name does not count (`if mask is None: mask = ...` with a parameter `mask` builds
the value on every call that passes none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Optional

import libcst as cst

from memlint.analysis.walk import dotted_name
from memlint.pipeline.tree import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def fills_cache(conditions: Iterable[cst.CSTNode], target: cst.BaseExpression, module_level: Callable[[str], bool]) -> bool:
    """Does assigning `target` inside the `if` statements `conditions` fill a cache that one of
    their tests reads?  `module_level(name)`: does `name` mean the module's binding here?"""
    place = _persistent_place(target, module_level)
    if place is None:
        return False
    for condition in conditions:
        test = getattr(condition, "test", None)
        if test is None:
            continue
        if any(dotted_name(node) == place for node in (test, *code_descendants(test))):
            return True
    return False


def statement_fills_cache(targets: Iterable[cst.BaseExpression], ctx: "Context") -> bool:
    """Does the assignment being visited (to `targets`) fill a cache that an `if` around it tests
    (`fills_cache`, under the Context's conditions): made once and kept, not on every call?"""
    conditions = [node for node, _ in ctx.frame.conditions]
    return any(fills_cache(conditions, target, ctx.binds_at_module_level) for target in targets)


def _persistent_place(target: cst.BaseExpression, module_level: Callable[[str], bool]) -> Optional[str]:
    """"self.mask" of `self.mask`, "mel_basis" of `mel_basis[key]`: where the value is kept between
    calls; None for a local name (a bare name assigned in a function is local)."""
    stored_in = type(target) is not cst.Name
    while isinstance(target, cst.Subscript):
        target = target.value
    name = dotted_name(target)
    if name is None:
        return None
    root = name.split(".")[0]
    if root == "self" and "." in name:
        return name
    if stored_in and module_level(root):
        return name
    return None
