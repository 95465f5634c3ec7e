"""Reading and setting the `inplace` argument of an activation or dropout call (which ones can
run in place, and where the argument sits, is data in `tables.INPLACE_MODULES` / `INPLACE_FUNCTIONS`)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.constants import literal_bool
from memlint.analysis.tables import INPLACE_TWINS


def inplace_argument(call: cst.Call, position: int) -> tuple[Optional[cst.Arg], Optional[bool]]:
    """The `inplace` argument of `call` and its literal value: (None, False) when it is not passed,
    (arg, None) when it is not a literal (`inplace=inplace`)."""
    positional = 0
    for argument in call.args:
        if argument.star:
            return argument, None  # `*args` may carry it
        if argument.keyword is not None:
            if argument.keyword.value == "inplace":
                return argument, literal_bool(argument.value)
            continue
        if positional == position:
            return argument, literal_bool(argument.value)
        positional += 1
    return None, False


def tensor_method_activation(call: cst.Call) -> Optional[tuple[str, cst.BaseExpression]]:
    """`h.relu()`, `self.fc(x).relu()`: the activation a Tensor method with an in-place twin runs (its
    functional name) and the value it runs on (the receiver); None for any other call.  Whether the
    receiver is a tensor is the caller's to prove (a fresh output of a torch layer or op, which ML003
    asks for anyway, is one; another object's `relu()` is not this)."""
    func = call.func
    if type(func) is not cst.Attribute or call.args or func.attr.value not in INPLACE_TWINS:  # type: ignore[attr-defined]
        return None
    return func.attr.value, func.value  # type: ignore[attr-defined]


def cannot_run_activation(call: cst.Call) -> bool:
    """Does `call` pass more than the one tensor an activation or dropout module's `forward(self,
    input)` takes (two arguments or more, none starred: `self.criterion(outputs, labels)`)?  Where
    the callee holds such a module the call raises TypeError; it never runs it.  (A forward
    pre-hook could rewrite the arguments: the callers ask only of modules no hook may see.)"""
    return len(call.args) >= 2 and not any(argument.star for argument in call.args)


def with_inplace(call: cst.Call, position: int) -> cst.Call:
    """`call` with its `inplace` argument set to True (replacing a literal False, or added)."""
    argument, _ = inplace_argument(call, position)
    if argument is not None:
        args = [a.with_changes(value=cst.Name("True")) if a is argument else a for a in call.args]
        return call.with_changes(args=args)
    no_space = cst.SimpleWhitespace("")
    equal = cst.AssignEqual(whitespace_before=no_space, whitespace_after=no_space)
    added = cst.Arg(keyword=cst.Name("inplace"), value=cst.Name("True"), equal=equal)
    args = list(call.args)
    if args and args[-1].comma is not cst.MaybeSentinel.DEFAULT:
        comma = args[-1].comma
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        added = added.with_changes(comma=comma)
    return call.with_changes(args=[*args, added])


# Activations whose in-place backward computes the gradient from the output instead of the input:
# the same function, but torch 2.13's gradients differ from the out-of-place ones in the last bits
# (ELU, CELU, SELU: up to 4e-6 on a Linear's weight gradient), so the edit is not exact.
_GRADIENT_FROM_OUTPUT = frozenset({"ELU", "CELU", "SELU", "elu", "celu", "selu"})
# Where a negative slope sits (a negative slope makes the in-place backward raise: "In-place
# leakyReLu backward calculation is triggered with a negative slope which is not supported").
_SLOPE_POSITIONS: dict[str, tuple[tuple[str, int], ...]] = {
    "LeakyReLU": (("negative_slope", 0),),
    "leaky_relu": (("negative_slope", 1),),
    "RReLU": (("lower", 0), ("upper", 1)),
    "rrelu": (("lower", 1), ("upper", 2)),
}


def inplace_fix_safety(name: str, call: cst.Call) -> Optional[bool]:
    """Whether `inplace=True` on this activation (`name`: its nn class or functional name) is exact:
    True (a safe fix), False (it may change results: an unsafe fix), None (it would raise in
    backward: no fix and no finding)."""
    for keyword, position in _SLOPE_POSITIONS.get(name, ()):
        value = _argument(call, keyword, position)
        if value is None:
            continue  # the default slope is positive
        number = _number(value)
        if number is None:
            return False  # a slope only known at run time may be negative
        if number < 0:
            return None
    return name not in _GRADIENT_FROM_OUTPUT


def _argument(call: cst.Call, keyword: str, position: int) -> Optional[cst.BaseExpression]:
    positional = 0
    for argument in call.args:
        if argument.star:
            return argument.value
        if argument.keyword is not None:
            if argument.keyword.value == keyword:
                return argument.value
            continue
        if positional == position:
            return argument.value
        positional += 1
    return None


def _number(expr: cst.BaseExpression) -> Optional[float]:
    sign = 1.0
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        sign = -1.0 if isinstance(expr.operator, cst.Minus) else 1.0
        expr = expr.expression
    if isinstance(expr, (cst.Integer, cst.Float)):
        try:
            return sign * float(expr.evaluated_value)
        except (ValueError, OverflowError):
            return None
    return None
