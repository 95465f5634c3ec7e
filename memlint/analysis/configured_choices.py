"""A test that picks one of the run's configured alternatives, on CPython's AST: the summaries'
side of `iteration.condition_is_configured_choice`.

`if args.attack == 'pgd': delta = attack_pgd(...)` `elif args.attack == 'fgsm': ...` in a loop over
the test loader: the configuration does not change while the run goes on, so the branch it picks
runs on every iteration of that run, as the loop's own statements do.  A call there is recorded as
"configured" (not plainly conditional), and the project pass's per-step fact follows it
(`Project._per_step`), as the rule's own `every_iteration` follows the branch in the loop's body.
A flag (`if args.log_images:`) opts in to extra work and a counter (`if step % 10 == 0:`) makes a
branch periodic: neither is a choice.
"""

from __future__ import annotations

import ast

from memlint.analysis.tables import CONFIGURATION_ROOTS

_CHOICE_OPERATORS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)


def configured_choice(test: ast.AST) -> bool:
    """`args.loss == "hinge"`, `self.args.padding == 0`, `cfg.mode in ("a", "b")`, `hyp["loss_ota"] == 1`,
    `"loss_ota" not in hyp` (iteration.condition_is_configured_choice's cases), and `and` / `or` of such tests."""
    if type(test) is ast.BoolOp:
        return all(configured_choice(value) for value in test.values)  # type: ignore[attr-defined]
    if type(test) is not ast.Compare or len(test.ops) != 1 or not isinstance(test.ops[0], _CHOICE_OPERATORS):  # type: ignore[attr-defined]
        return False
    sides = (test.left, test.comparators[0])  # type: ignore[attr-defined]
    if type(test.ops[0]) in (ast.In, ast.NotIn) and _choice_constant(test.left, collection=True) and _configuration_root(sides[1]):  # type: ignore[attr-defined]
        return True  # `"loss_ota" not in hyp`: whether the configuration has the key, fixed for the run
    return any(configuration_value(side) or _configuration_entry(side) for side in sides) and any(_literal_choice(side) for side in sides)


def _configuration_root(expr: ast.AST) -> bool:
    """`hyp`, `cfg`, `self.cfg`, `args.train`: the run's configuration itself (a dict of it, say)."""
    if type(expr) is ast.Name:
        return expr.id in CONFIGURATION_ROOTS  # type: ignore[attr-defined]
    if type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self":  # type: ignore[attr-defined]
        return expr.attr in CONFIGURATION_ROOTS  # type: ignore[attr-defined]
    return configuration_value(expr)


def _configuration_entry(expr: ast.AST) -> bool:
    """`hyp["loss_ota"]`, `self.cfg["mode"]`: an entry, by a string key, of the run's configuration."""
    if type(expr) is not ast.Subscript:
        return False
    key = expr.slice  # type: ignore[attr-defined]
    return type(key) is ast.Constant and type(key.value) is str and _configuration_root(expr.value)  # type: ignore[attr-defined]


def configuration_value(expr: ast.AST) -> bool:
    """`args.loss`, `self.opt.gan_mode`: an attribute of the run's configuration."""
    names = []
    while type(expr) is ast.Attribute:
        names.append(expr.attr)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if not names or type(expr) is not ast.Name:
        return False
    root = expr.id if expr.id != "self" else names[-1]  # type: ignore[attr-defined]
    return root in CONFIGURATION_ROOTS and (expr.id != "self" or len(names) > 1)  # type: ignore[attr-defined]


def _literal_choice(expr: ast.AST) -> bool:
    """A string or number literal (`None`, `True`, `False` too), or a literal collection of them."""
    if type(expr) in (ast.Tuple, ast.List, ast.Set):
        return bool(expr.elts) and all(_choice_constant(e, collection=True) for e in expr.elts)  # type: ignore[attr-defined]
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:  # type: ignore[attr-defined]
        expr = expr.operand  # type: ignore[attr-defined]
    return _choice_constant(expr, collection=False)


def _choice_constant(expr: ast.AST, collection: bool) -> bool:
    if type(expr) is not ast.Constant:
        return False
    value = expr.value  # type: ignore[attr-defined]
    if type(value) in (str, int, float):
        return True
    return not collection and (value is None or type(value) is bool)
