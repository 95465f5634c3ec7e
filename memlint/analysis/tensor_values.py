"""Values proven to be tensors, for a rule that acts on a method whose name other objects share
(ML003's `h.relu()`: a micrograd `Value` or any class of the project may define `relu()` too,
and lacks the `relu_()` the fix writes).

A value is a proven tensor where it is the output of a torch layer of the class or of a ModuleList of
them (what `FreshValues.fresh` knows of calls: `self.fc(x)`, `self.layers[i](x)`, a helper of the
project returning a torch op), the result of a torch function (`torch.*`, `F.*`), arithmetic with
such a tensor among its operands (`self.fc(x) + b`), a tensor method that returns a tensor
(`h.view(n, -1)`, `h.sum(1)`) on one, or a name every binding of which in the function is one
(`h = self.fc(x)`, then `h = h.view(...)`; a parameter, a loop target or a tuple unpacking is not
known).  Anything else, a name of unknown origin above all, is not proven: the asker stays silent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, erring_names
from memlint.analysis.tables import FRESH_RESULT_METHODS, INPLACE_TWINS, RESHAPE_METHODS
from memlint.analysis.walk import code_descendants, self_attr

if TYPE_CHECKING:
    from memlint.analysis.fresh_values import FreshValues

# Tensor methods whose result is a tensor again (an object of another class may define them too:
# only where the receiver is a proven tensor).
_TENSOR_RESULT_METHODS = FRESH_RESULT_METHODS | RESHAPE_METHODS | frozenset(INPLACE_TWINS) | frozenset(INPLACE_TWINS.values()) | frozenset(
    {"contiguous", "clone", "transpose", "permute", "float", "double", "half"}
)
# Modules whose functions take and return tensors.
_TORCH_MODULES = frozenset({"torch", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft"})
# Operators whose result is a tensor where either operand is one.
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply, cst.Power, cst.FloorDivide, cst.Modulo)
# How many names one question follows (a long chain of rebindings is not followed to its end).
_NAMES_FOLLOWED = 16


def proven_tensor(expr: cst.BaseExpression, values: "FreshValues") -> bool:
    """Is `expr`, in the code `values` describes, certainly a tensor (see the module's text)?"""
    return _tensor(expr, values, {})


def _tensor(expr: cst.BaseExpression, values: "FreshValues", seen: dict[str, Optional[bool]]) -> bool:
    kind = type(expr)
    if kind is cst.BinaryOperation:
        if not isinstance(expr.operator, _ARITHMETIC):  # type: ignore[attr-defined]
            return False
        return _tensor(expr.left, values, seen) or _tensor(expr.right, values, seen)  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return type(expr.operator) is cst.Minus and _tensor(expr.expression, values, seen)  # type: ignore[attr-defined]
    if kind is cst.Name:
        return _name_tensor(expr.value, values, seen)  # type: ignore[attr-defined]
    if kind is cst.Subscript:  # `self.actnorm(x)[0]`: an element of a layer's tuple
        return values.fresh(expr)
    if kind is not cst.Call:
        return False
    func = expr.func  # type: ignore[attr-defined]
    qualified = values.ctx.resolve(func)
    if qualified is not None:
        return qualified.rpartition(".")[0] in _TORCH_MODULES or values.fresh(expr)
    if type(func) is cst.Attribute and self_attr(func) is None and self_attr(func.value) is None:  # `h.view(n, -1)`
        return func.attr.value in _TENSOR_RESULT_METHODS and _tensor(func.value, values, seen)  # type: ignore[attr-defined]
    return values.fresh(expr)  # a layer of the class, of a ModuleList of them, a project helper returning a torch op


def _name_tensor(name: str, values: "FreshValues", seen: dict[str, Optional[bool]]) -> bool:
    """`_bound_to_tensors`, once per name and question (`seen`: the answers so far, None while a name
    is being proven: a binding that reads it again, `h = h.view(...)`, keeps its tensor)."""
    if name in seen:
        return seen[name] is not False
    if len(seen) >= _NAMES_FOLLOWED:
        return False
    seen[name] = None
    seen[name] = _bound_to_tensors(name, values, seen)
    return seen[name]  # type: ignore[return-value]


def _bound_to_tensors(name: str, values: "FreshValues", seen: dict[str, Optional[bool]]) -> bool:
    """Every binding of `name` anywhere in the code (nested scopes too: erring towards "bound") is a
    plain `name = <proven tensor>`."""
    bound = False
    for node, targets in _bindings(values).get(name, ()):
        kind = type(node)
        if kind is cst.Assign or kind is cst.AnnAssign:
            value = node.value  # type: ignore[attr-defined]
            if value is None and kind is cst.AnnAssign:
                continue  # `h: Tensor`: no binding
            plain = all(type(target) is cst.Name for target in targets if name in erring_names(target))
            if not plain or not _tensor(value, values, seen):
                return False
            bound = True
            continue
        return False  # a parameter, a loop or `with` target, an import, a walrus...: not known
    return bound


def _bindings(values: "FreshValues") -> dict[str, list[tuple[cst.CSTNode, tuple]]]:
    """name -> the nodes of the code that may bind it (erring towards "bound"), in source order, each
    with its targets: one walk per function and file, not one per name asked."""
    code = values.function  # (the function with its parameters, or the module)

    def build() -> dict[str, list[tuple[cst.CSTNode, tuple]]]:
        found: dict[str, list[tuple[cst.CSTNode, tuple]]] = {}
        for node in (code, *code_descendants(code)):
            if type(node) is cst.AugAssign:
                continue  # `h += y`: the name keeps its tensor (or a tensor results)
            targets = bound_by(node, parameters=True, declarations=True)
            named = {n for target in targets for n in erring_names(target)}
            for n in named:
                found.setdefault(n, []).append((node, targets))
        return found

    return values.ctx.memo(("tensor-values.bindings", id(code)), build)  # type: ignore[return-value]
