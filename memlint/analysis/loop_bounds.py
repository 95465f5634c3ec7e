"""A loop cut short by a counter: a fact of loop scope (roles.loop_scope) every rule can ask.

`for batch in val_loader: ... count += 1; if count == num_examples: break` runs its body
`num_examples` times, however long the loader is: when that bound is a small constant (a literal,
or a parameter whose default is one), the loop is a fixed small count, not a loop per step.  The
counter is one the loop's own statements advance by one unconditionally (`count += 1`), or the
index `enumerate` gives; the test and its `break` are among the loop's own statements too, so
nothing else decides whether they run."""

from __future__ import annotations

from typing import Callable, Optional

import libcst as cst

# What `count == n` compares with: a small literal, or a name (the enclosing function's parameter)
# that `default_of` resolves to one.
DefaultOf = Callable[[str], Optional[int]]


def counted_break(loop: cst.CSTNode, limit: int, default_of: DefaultOf) -> Optional[int]:
    """How many times `loop` runs at most when it breaks unconditionally once a counter reaches a
    constant of at most `limit`; None when it does not (see the module's docstring)."""
    body = loop.body  # type: ignore[attr-defined]
    if not isinstance(body, cst.IndentedBlock):
        return None
    counters = _counters(body.body) | _enumerate_index(loop)
    if not counters:
        return None
    for statement in body.body:
        if type(statement) is not cst.If or statement.orelse is not None or not _breaks(statement.body):
            continue
        bound = _bound(statement.test, counters, default_of)
        if bound is not None and 0 < bound <= limit:
            return bound
    return None


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


def _enumerate_index(loop: cst.CSTNode) -> frozenset[str]:
    """`for i, batch in enumerate(loader)` -> {"i"} (counting from 0: `if i == n: break` runs n+1
    times, still a small count)."""
    if type(loop) is not cst.For:
        return frozenset()
    iterable, target = loop.iter, loop.target
    if type(iterable) is not cst.Call or type(iterable.func) is not cst.Name or iterable.func.value != "enumerate":
        return frozenset()
    if len(iterable.args) != 1 or type(target) is not cst.Tuple or not target.elements:
        return frozenset()
    first = target.elements[0].value
    return frozenset({first.value}) if type(first) is cst.Name else frozenset()


def _breaks(block: cst.BaseSuite) -> bool:
    """Does the `if`'s own block end the loop whatever else it does (a top-level `break`)?"""
    statements = block.body if isinstance(block, cst.IndentedBlock) else [block]
    for statement in statements:
        small = statement.body if type(statement) is cst.SimpleStatementLine else getattr(statement, "body", ())
        if isinstance(small, (list, tuple)) and any(type(s) is cst.Break for s in small):
            return True
    return False


def _bound(test: cst.BaseExpression, counters: frozenset[str], default_of: DefaultOf) -> Optional[int]:
    """`count == n`, `count >= n`, `count > n` (a counter on the left) -> n resolved."""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    if type(test.left) is not cst.Name or test.left.value not in counters:
        return None
    if type(target.operator) not in (cst.Equal, cst.GreaterThanEqual, cst.GreaterThan):
        return None
    value = target.comparator
    if type(value) is cst.Integer:
        return int(value.value, 0)
    if type(value) is cst.Name:
        return default_of(value.value)
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
