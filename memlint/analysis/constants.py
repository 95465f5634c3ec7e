"""Constant folding of the sizes people write in layer constructors: literals, arithmetic, module-level
constants, a function's own straight-line assignments and its parameters' defaults.

`fold(expr, env)` returns an int or float, or None when the value cannot be known statically (a
config attribute, a call, a name bound more than once).  Silence on None is the rules' policy.
"""

from __future__ import annotations

import operator
from typing import Callable, Mapping, Optional, Union

import libcst as cst

from memlint.analysis.bindings import exact_names_bound_by, target_names

Number = Union[int, float]
# name -> the expression it is bound to (folded lazily, so constants may refer to each other)
Env = Mapping[str, cst.BaseExpression]

_OPERATORS: dict[type, Callable[[Number, Number], Number]] = {
    cst.Add: operator.add,
    cst.Subtract: operator.sub,
    cst.Multiply: operator.mul,
    cst.FloorDivide: operator.floordiv,
    cst.Divide: operator.truediv,
    cst.Modulo: operator.mod,
    cst.Power: operator.pow,
}
_LIMIT = 10**15  # anything larger is not a layer size: give up rather than compute huge powers


def fold(expr: cst.BaseExpression, env: Env = {}, _depth: int = 0) -> Optional[Number]:
    if _depth > 20:
        return None
    if isinstance(expr, cst.Integer):
        return int(expr.evaluated_value)
    if isinstance(expr, cst.Float):
        return float(expr.evaluated_value)
    if isinstance(expr, cst.Name):
        bound = env.get(expr.value)
        return fold(bound, env, _depth + 1) if bound is not None else None
    if isinstance(expr, cst.UnaryOperation):
        inner = fold(expr.expression, env, _depth + 1)
        if inner is None:
            return None
        if isinstance(expr.operator, cst.Minus):
            return -inner
        return inner if isinstance(expr.operator, cst.Plus) else None
    if isinstance(expr, cst.BinaryOperation):
        function = _OPERATORS.get(type(expr.operator))
        left = fold(expr.left, env, _depth + 1)
        right = fold(expr.right, env, _depth + 1)
        if function is None or left is None or right is None:
            return None
        if isinstance(expr.operator, cst.Power) and (abs(right) > 64 or abs(left) > _LIMIT):
            return None
        try:
            result = function(left, right)
        except (ArithmeticError, ValueError):
            return None
        return result if isinstance(result, (int, float)) and abs(result) < _LIMIT else None
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "int" and len(expr.args) == 1:
        inner = fold(expr.args[0].value, env, _depth + 1)
        return int(inner) if inner is not None else None
    return None


def literal_bool(expr: Optional[cst.BaseExpression]) -> Optional[bool]:
    """`True` -> True, `False` -> False; None for anything else (a name, a call, `1`, no default): the one
    reading of a literal flag (`inplace=True`, `amsgrad=False`, `set_grad_enabled(False)`)."""
    if type(expr) is cst.Name and expr.value in ("True", "False"):  # type: ignore[attr-defined]
        return expr.value == "True"  # type: ignore[attr-defined]
    return None


def fold_int(expr: cst.BaseExpression, env: Env = {}) -> Optional[int]:
    value = fold(expr, env)
    if isinstance(value, float):
        return int(value) if value.is_integer() else None
    return value


def factors(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """`512 * 7 * 7` -> [512, 7, 7]; anything that is not a product -> [expr]."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Multiply) and not expr.lpar:
        return factors(expr.left) + factors(expr.right)
    return [expr]


def single_assignments(statements: Union[list, tuple]) -> dict[str, cst.BaseExpression]:
    """Names bound exactly once by a plain `name = value` among these statements (not in nested
    blocks); a name also bound anywhere else in the block (nested too) is left out."""
    counts: dict[str, int] = {}
    values: dict[str, cst.BaseExpression] = {}
    for statement in statements:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                    name = small.targets[0].target.value
                    counts[name] = counts.get(name, 0) + 1
                    values[name] = small.value
                elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                    name = small.target.value
                    counts[name] = counts.get(name, 0) + 1
                    values[name] = small.value
                elif isinstance(small, (cst.AugAssign, cst.Assign, cst.AnnAssign)):
                    for target in _targets(small):
                        counts[target] = counts.get(target, 0) + 2
        else:
            for name in _names_bound_in(statement):
                counts[name] = counts.get(name, 0) + 2
    return {name: values[name] for name, count in counts.items() if count == 1 and name in values}


def _targets(small: cst.CSTNode) -> list[str]:
    if isinstance(small, cst.Assign):
        return [n for t in small.targets for n in target_names(t.target)]
    if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
        return target_names(small.target)
    return []


_NEW_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
def _names_bound_in(statement: cst.CSTNode) -> list[str]:
    """Names (re)bound anywhere inside a compound statement (`bindings.bound_by`), not inside
    comprehensions, functions and classes (scopes of their own: of a `def` or `class`, its name)."""
    from memlint.analysis.walk import code_descendants

    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return [statement.name.value]
    return [name for node in (statement, *code_descendants(statement, skip=_NEW_SCOPES)) for name in exact_names_bound_by(node)]


def module_env(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """Module-level constants: `HIDDEN = 512`, `FEATURES = HIDDEN * 7 * 7`."""
    return single_assignments(module.body)


def function_env(function: cst.FunctionDef, outer: Env) -> dict[str, cst.BaseExpression]:
    """What names mean inside `function` for folding: module constants, then parameter defaults
    (the constructor-default convention: `def __init__(self, num_classes=1000)`), then the
    function's own single assignments at its top level.  A parameter without a default hides the
    module constant of the same name."""
    env: dict[str, cst.BaseExpression] = dict(outer)
    params = function.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        env.pop(param.name.value, None)
        if param.default is not None:
            env[param.name.value] = param.default
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            env.pop(extra.name.value, None)
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    assigned: set[str] = set()
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            assigned.update(n for small in statement.body for n in _targets(small))
        else:
            assigned.update(_names_bound_in(statement))
    for name in assigned:
        env.pop(name, None)
    env.update(single_assignments(body))
    return env


# ---------------------------------------------------------------- sizes a counted loop leaves behind

_COMPARISONS: dict[type, Callable[[Number, Number], bool]] = {
    cst.Equal: operator.eq,
    cst.NotEqual: operator.ne,
    cst.LessThan: operator.lt,
    cst.LessThanEqual: operator.le,
    cst.GreaterThan: operator.gt,
    cst.GreaterThanEqual: operator.ge,
    cst.Is: operator.eq,  # `i is 0`: on the small ints of a counted loop `is` answers as `==` does
    cst.IsNot: operator.ne,
}
_LOOP_LIMIT = 64


def after_counted_loops(body: Union[list, tuple], env: Env, upto: int) -> dict[str, cst.BaseExpression]:
    """What names mean after the top-level `for i in range(n)` loops before statement `upto` of a
    function body, run by hand: the channel widths a constructor doubles block by block
    (`out_channels = in_channels * 2 if i % 2 == 0 else in_channels; in_channels = out_channels`).

    Only loops of at most 64 iterations whose count folds and whose body is plain `name = value`
    assignments (and expression statements such as `blocks.append(...)`, which bind nothing); a
    name the loop binds may be started before it (its single assignment there) but not read
    before it, nor bound again between the loop and `upto`.  Values that do not fold: nothing."""
    found: dict[str, cst.BaseExpression] = {}
    for index, statement in enumerate(body[:upto]):
        if isinstance(statement, cst.For):
            ran = _run_counted_loop(statement, body[:index], body[index + 1 : upto], {**env, **found})
            if ran:
                found.update(ran)
    return found


def _run_counted_loop(loop: cst.For, before, between, env: Env) -> Optional[dict[str, cst.BaseExpression]]:
    if loop.orelse is not None or loop.asynchronous is not None or not isinstance(loop.target, cst.Name):
        return None
    call = loop.iter
    if not (isinstance(call, cst.Call) and isinstance(call.func, cst.Name) and call.func.value == "range" and len(call.args) == 1):
        return None
    count = fold(call.args[0].value, env)
    if not isinstance(count, int) or not 0 < count <= _LOOP_LIMIT:
        return None
    assignments: list[tuple[str, cst.BaseExpression]] = []
    for statement in loop.body.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return None
        for small in statement.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                assignments.append((small.targets[0].target.value, small.value))
            elif not isinstance(small, (cst.Expr, cst.Pass)):
                return None
    names = {name for name, _ in assignments} | {loop.target.value}
    starts = single_assignments(before)
    for statement in before:
        if _reads(statement, starts) & names:
            return None  # read before the loop: that read saw the start, not what the loop leaves
    for statement in between:
        bound = _targets_in(statement)
        if set(bound) & names:
            return None
    state: dict[str, int] = {}
    for name in names:
        if name in starts:
            start = fold(starts[name], env)
            if isinstance(start, int):
                state[name] = start
    for i in range(count):
        state[loop.target.value] = i
        for name, expr in assignments:
            value = _run(expr, state, env)
            if value is None:
                return None
            state[name] = value
    return {name: cst.Integer(str(state[name])) for name in names - {loop.target.value} if state.get(name, -1) >= 0}


def _targets_in(statement: cst.CSTNode) -> list[str]:
    if isinstance(statement, cst.SimpleStatementLine):
        return [n for small in statement.body for n in _targets(small)]
    return _names_bound_in(statement)


def _reads(statement: cst.CSTNode, starts: Mapping[str, cst.BaseExpression]) -> set[str]:
    """Names the statement reads (a start assignment `in_channels = 3` reads nothing of the loop's)."""
    from memlint.analysis.walk import code_descendants

    read: set[str] = set()
    for node in code_descendants(statement):
        if isinstance(node, cst.Name):
            read.add(node.value)
    return read - set(_targets_in(statement))


def _run(expr: cst.BaseExpression, state: Mapping[str, int], env: Env) -> Optional[int]:
    if isinstance(expr, cst.Name) and expr.value in state:
        return state[expr.value]
    if isinstance(expr, cst.IfExp):
        test = _test(expr.test, state, env)
        return None if test is None else _run(expr.body if test else expr.orelse, state, env)
    if isinstance(expr, cst.BinaryOperation):
        left, right = _run(expr.left, state, env), _run(expr.right, state, env)
        if left is None or right is None or left < 0 or right < 0:
            return None
        value = fold(expr.with_changes(left=cst.Integer(str(left)), right=cst.Integer(str(right))), env)
        return value if isinstance(value, int) else None
    value = fold(expr, env)
    return value if isinstance(value, int) else None


def _test(test: cst.BaseExpression, state: Mapping[str, int], env: Env) -> Optional[bool]:
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1):
        return None
    compare = _COMPARISONS.get(type(test.comparisons[0].operator))
    left, right = _run(test.left, state, env), _run(test.comparisons[0].comparator, state, env)
    if compare is None or left is None or right is None:
        return None
    return compare(left, right)
