"""Branches a loop takes at random: `r = np.random.rand(1)` then `if r < args.cutmix_prob:`.

A stochastic augmentation (CutMix, mixup, layer drop) draws a number on every step and takes its
branch when the draw falls under a probability.  Unlike a periodic branch (`if step % 100 == 0:`,
a few steps in a run) or an opt-in flag, such a branch runs on a fixed fraction of all steps, each
time as part of that step's work: code in it is per-step code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Optional

import libcst as cst

from memlint.pipeline.tree import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Calls that draw one uniform number (or a tensor of them) from a random generator.
_UNIFORM_DRAWS = frozenset(
    {"numpy.random.rand", "numpy.random.random", "numpy.random.uniform", "numpy.random.random_sample",
     "random.random", "random.uniform", "torch.rand"}
)  # fmt: skip
_BELOW = (cst.LessThan, cst.LessThanEqual)
_ABOVE = (cst.GreaterThan, cst.GreaterThanEqual)


def branch_taken_at_random(
    test: cst.BaseExpression, loop: Optional[cst.CSTNode], ctx: "Context", steady: Callable[[cst.BaseExpression], bool]
) -> bool:
    """Is `test` a comparison of a uniform draw with a probability (`r < args.cutmix_prob`, with `r`
    drawn in the loop's body, or `random.random() < p` itself), alone or joined by `and` to
    conditions that hold on every iteration of a run or on none (`steady`: a device check, a
    configured choice, `args.beta > 0`)?"""
    conjuncts = _conjuncts(test)
    draws = _drawn_names(loop, ctx) if loop is not None else set()
    found = False
    for conjunct in conjuncts:
        if _compares_draw(conjunct, draws, ctx):
            found = True
        elif not steady(conjunct):
            return False
    return found


def _conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return _conjuncts(test.left) + _conjuncts(test.right)
    return [test]


def _drawn_names(loop: cst.CSTNode, ctx: "Context") -> set[str]:
    """Names the loop's body binds to a uniform draw (`r = np.random.rand(1)`)."""
    names: set[str] = set()
    for node in code_descendants(loop.body):  # type: ignore[attr-defined]
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name and _is_draw(node.value, ctx):
            names.add(node.targets[0].target.value)  # type: ignore[attr-defined]
    return names


def _is_draw(expr: cst.BaseExpression, ctx: "Context") -> bool:
    return type(expr) is cst.Call and ctx.resolve(expr.func) in _UNIFORM_DRAWS  # type: ignore[attr-defined]


def _compares_draw(test: cst.BaseExpression, draws: set[str], ctx: "Context") -> bool:
    """`r < p`, `p > r`, `random.random() < p`: the draw below a probability (one comparison)."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    drawn = lambda side: (type(side) is cst.Name and side.value in draws) or _is_draw(side, ctx)  # noqa: E731
    if isinstance(target.operator, _BELOW):
        return drawn(test.left)
    if isinstance(target.operator, _ABOVE):
        return drawn(target.comparator)
    return False

