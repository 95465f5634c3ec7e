"""ML004's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

A `forward` whose straight-line statements (its body, or the body of a `with` at its top) assign
calls or arithmetic to names in a chain at least `min-retained-chain` long, each value reading a
name bound by an earlier one (any name it mentions, where the rule needs exactly one), leaving out
names the rule certainly rejects: those bound or read more than once.
"""

from __future__ import annotations

import ast
from collections import Counter
from typing import Any, Iterator, Mapping

from memlint.analysis.chains import longest_chain
from memlint.analysis.tables import VIEW_METHODS
from memlint.prescreen.source import FUNCTIONS, Source, words_in


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    needed = options["min-retained-chain"]
    for function in source.nodes(*FUNCTIONS):
        if function.name != "forward":  # type: ignore[attr-defined]
            continue
        blocks = [function.body] + [s.body for s in function.body if isinstance(s, (ast.With, ast.AsyncWith))]  # type: ignore[attr-defined]
        blocks = [block for block in blocks if len(longest_chain(_steps(block))) >= needed]
        if not blocks:
            continue
        excluded = _used_or_bound_twice(function)  # type: ignore[arg-type]
        if any(len(longest_chain(_steps(block, excluded))) >= needed for block in blocks):
            return True
    return False


def _steps(statements: list[ast.stmt], excluded: frozenset[str] = frozenset()) -> Iterator[tuple[str, set[str]]]:
    """`name = call(...)` statements (not of a view method) and `name = <arithmetic>`, with the
    words of their values."""
    for statement in statements:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            continue
        value, target = statement.value, statement.targets[0].id
        if target in excluded:
            continue
        if isinstance(value, (ast.BinOp, ast.UnaryOp)):
            yield target, set(words_in(value))
            continue
        if not isinstance(value, ast.Call):
            continue
        if isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
            continue
        yield target, set(words_in(value))


# Where a name is only ever read, for libcst as well: not an element of a display (which the rule
# may count as an unpacking target) and not a parameter default (which it counts as a binding).
_NOT_SURELY_READ_IN = (ast.Tuple, ast.List, ast.Set, ast.Starred, ast.arguments)


def _used_or_bound_twice(function: ast.FunctionDef) -> frozenset[str]:
    """Names the rule counts at least twice as bound, or at least twice as read, in `function`:
    a lower bound of its counts, from the bindings and reads both parsers agree on."""
    bound: Counter[str] = Counter(a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs])
    used: Counter[str] = Counter()
    stack: list[tuple[ast.AST, ast.AST]] = [(child, function) for child in function.body]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and not isinstance(parent, _NOT_SURELY_READ_IN):
                used[node.id] += 1
            elif isinstance(node.ctx, ast.Store) and _is_direct_target(node, parent):
                bound[node.id] += 1
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return frozenset(name for counts in (bound, used) for name, count in counts.items() if count >= 2)


def _is_direct_target(name: ast.Name, parent: ast.AST) -> bool:
    if isinstance(parent, ast.Assign):
        return name in parent.targets
    return isinstance(parent, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)) and parent.target is name
