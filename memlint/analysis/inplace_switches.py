"""Activation classes whose `inplace` a project switches on for every instance, after construction.

YOLOv5-style code builds `nn.SiLU()` out of place and then, over every module of the model, sets
`inplace` on (`initialize_weights`: `for m in model.modules(): t = type(m) ... elif t in
[nn.Hardswish, nn.LeakyReLU, nn.ReLU, nn.ReLU6, nn.SiLU]: m.inplace = True`).  Such an activation
already runs in place: ML003's `inplace=True` would change nothing.

`switched_on(source)` reads it on CPython's AST (summaries' `inplace_on`, through the prescreen's
node index): a loop `for m in <x>.modules():` whose body assigns the literal `m.inplace = True`,
either unguarded ("*": every class) or in the branch of an `if` / `elif` that tests the module's
class (`type(m) in [A, B]`, `type(m) is A`, `t in (A, B)` with `t = type(m)` bound in the loop,
`isinstance(m, (A, B))`): the classes' last names.  An assignment in an `else` branch, of
anything but `True`, or under any other test is not read.  The project pass gathers them over the
files connected by imports (FileView.inplace_switched).
"""

from __future__ import annotations

import ast
from typing import Iterator, Optional

ANY = "*"


def switched_on(source) -> list[str]:
    """The class names (last names, or "*" for every class) whose instances the file switches to
    `inplace=True` in a loop over `.modules()`, sorted; empty where it has none."""
    found: set[str] = set()
    for loop in source.nodes(ast.For):
        iterated = loop.iter  # type: ignore[attr-defined]
        target = loop.target  # type: ignore[attr-defined]
        if not (
            isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute) and iterated.func.attr == "modules"
            and isinstance(target, ast.Name)
        ):  # fmt: skip
            continue
        module = target.id
        type_names = {
            s.targets[0].id for s in loop.body  # type: ignore[attr-defined]
            if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name) and _is_type_of(s.value, module)
        }  # fmt: skip
        for guard in _switching_guards(loop.body, module, None):  # type: ignore[attr-defined]
            if guard is None:
                found.add(ANY)
                continue
            classes = _tested_classes(guard, module, type_names)
            if classes:
                found.update(classes)
    return sorted(found)


def _switching_guards(statements: list, module: str, guard: Optional[ast.expr]) -> Iterator[Optional[ast.expr]]:
    """The innermost `if` test over each `<module>.inplace = True` of `statements` (None: none)."""
    for statement in statements:
        if isinstance(statement, ast.Assign) and _sets_inplace(statement, module):
            yield guard
        elif isinstance(statement, ast.If):
            yield from _switching_guards(statement.body, module, statement.test)
            if len(statement.orelse) == 1 and isinstance(statement.orelse[0], ast.If):
                yield from _switching_guards(statement.orelse, module, guard)  # an `elif`: its own test
            # an `else` branch runs for every class the tests above leave out: not read


def _sets_inplace(statement: ast.Assign, module: str) -> bool:
    value = statement.value
    return (
        isinstance(value, ast.Constant) and value.value is True and len(statement.targets) == 1
        and isinstance(target := statement.targets[0], ast.Attribute) and target.attr == "inplace"
        and isinstance(target.value, ast.Name) and target.value.id == module
    )  # fmt: skip


def _is_type_of(expr: ast.expr, module: str) -> bool:
    return (
        isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "type"
        and len(expr.args) == 1 and isinstance(expr.args[0], ast.Name) and expr.args[0].id == module
    )  # fmt: skip


def _tested_classes(test: ast.expr, module: str, type_names: set[str]) -> set[str]:
    """The classes a test of the module's class names: `type(m) in [A, B]`, `t is A`, `isinstance(m, (A, B))`."""
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance" and len(test.args) == 2:
        subject, classes = test.args
        if isinstance(subject, ast.Name) and subject.id == module:
            return _last_names(classes.elts if isinstance(classes, ast.Tuple) else [classes])
        return set()
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
        return set()
    left, op, right = test.left, test.ops[0], test.comparators[0]
    if not (_is_type_of(left, module) or (isinstance(left, ast.Name) and left.id in type_names)):
        return set()
    if isinstance(op, ast.In) and isinstance(right, (ast.List, ast.Tuple, ast.Set)):
        return _last_names(right.elts)
    if isinstance(op, (ast.Is, ast.Eq)):
        return _last_names([right])
    return set()


def _last_names(expressions) -> set[str]:
    names = set()
    for expr in expressions:
        if isinstance(expr, ast.Attribute):
            names.add(expr.attr)
        elif isinstance(expr, ast.Name):
            names.add(expr.id)
        else:
            return set()  # a class computed some other way: cannot tell which
    return names
