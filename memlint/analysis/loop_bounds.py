"""A loop cut short by a counter: a fact of loop scope (roles.loop_scope) every rule can ask.

`for batch in val_loader: ... count += 1; if count == num_examples: break` runs its body
`num_examples` times, however long the loader is: when that bound is a small constant (a literal,
or a parameter whose default is one), the loop is a fixed small count, not a loop per step.  The
counter is one the loop's own statements advance by one unconditionally (`count += 1`), or the
index `enumerate` gives (from a literal `start`: memlint.analysis.counted_loops); the test and its
`break` are among the loop's own statements too, so nothing else decides whether they run."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

from memlint.analysis.counted_loops import enumerate_start, first_bound

# What `count == n` compares with: a small literal, or a name (the enclosing function's parameter)
# that `default_of` resolves to one.
DefaultOf = Callable[[str], Optional[int]]


def counted_break(loop: cst.CSTNode, limit: int, default_of: DefaultOf) -> Optional[int]:
    """How many times `loop` runs at most when it breaks unconditionally once a counter reaches a
    constant of at most `limit`; None when it does not (see the module's docstring; the decision
    is memlint.analysis.counted_loops', shared with the project pass's summaries)."""
    body = loop.body  # type: ignore[attr-defined]
    if not isinstance(body, cst.IndentedBlock):
        return None
    counters = {name: 0 for name in _counters(body.body)}
    counters.update(_enumerate_index(loop))
    if not counters:
        return None
    tests = [
        _test(statement.test, default_of)
        for statement in body.body
        if type(statement) is cst.If and statement.orelse is None and _breaks(statement.body)
    ]
    return first_bound(counters, [t for t in tests if t is not None], limit)


def _counters(statements) -> frozenset[str]:
    """Names advanced by one in the loop's own top-level statements: `count += 1`."""
    found = set()
    for statement in statements:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if (
                type(small) is cst.AugAssign and type(small.operator) is cst.AddAssign
                and type(small.target) is cst.Name and type(small.value) is cst.Integer and small.value.value == "1"
            ):  # fmt: skip
                found.add(small.target.value)
    return frozenset(found)


def _enumerate_index(loop: cst.CSTNode) -> dict[str, int]:
    """`for i, batch in enumerate(loader)` -> {"i": 0}, `enumerate(loader, 1)` -> {"i": 1}."""
    if type(loop) is not cst.For:
        return {}
    iterable, target = loop.iter, loop.target
    if type(iterable) is not cst.Call or type(iterable.func) is not cst.Name or iterable.func.value != "enumerate":
        return {}
    if not iterable.args or iterable.args[0].keyword is not None or iterable.args[0].star:
        return {}
    if type(target) is not cst.Tuple or not target.elements:
        return {}
    extra = [
        (None if a.keyword is None else a.keyword.value, int(a.value.value, 0) if type(a.value) is cst.Integer else None)
        for a in iterable.args[1:]
    ]
    if any(a.star for a in iterable.args[1:]):
        return {}
    start = enumerate_start(extra)
    first = target.elements[0].value
    return {first.value: start} if type(first) is cst.Name and start is not None else {}


def _breaks(block: cst.BaseSuite) -> bool:
    """Does the `if`'s own block end the loop whatever else it does (a top-level `break`)?"""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        small = statement.body if type(statement) is cst.SimpleStatementLine else getattr(statement, "body", ())
        if isinstance(small, (list, tuple)) and any(type(s) is cst.Break for s in small):
            return True
    return False


_OPERATORS = {cst.Equal: "==", cst.GreaterThanEqual: ">=", cst.GreaterThan: ">"}


def _test(test: cst.BaseExpression, default_of: DefaultOf) -> Optional[tuple[str, str, Optional[int]]]:
    """`count == n`, `count >= n`, `count > n` (a name on the left) -> (name, operator, n resolved)."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.left) is not cst.Name:
        return None
    comparison = test.comparisons[0]
    operator = _OPERATORS.get(type(comparison.operator))
    if operator is None:
        return None
    value = comparison.comparator
    if type(value) is cst.Integer:
        return test.left.value, operator, int(value.value, 0)
    if type(value) is cst.Name:
        return test.left.value, operator, default_of(value.value)
    return None


def parameter_default(function: Optional[cst.FunctionDef], name: str) -> Optional[int]:
    """The integer literal `function` gives parameter `name` as its default (`num_examples=2`)."""
    if function is None:
        return None
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == name:
            return int(param.default.value, 0) if type(param.default) is cst.Integer else None
    return None
