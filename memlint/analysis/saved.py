"""Does autograd keep a tensor for backward?  Asked of the op that makes a tensor (does it keep its
output?) and of the op that reads it (does it keep its input?), for the ops `tables.KEEPS_*` know:
layers of the module's own inventory (`self.fc1` built as `nn.Linear`), `torch` and
`torch.nn.functional` functions, tensor methods and arithmetic.  None means "cannot tell": an op
memlint does not know, a block of the project's own, or an op that may run in place (its output is
then its input)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.tables import FRESH_RESULT_FUNCTIONS, FRESH_RESULT_METHODS, einsum_of_operands
from memlint.analysis.activations import inplace_argument

if TYPE_CHECKING:
    from memlint.analysis.context import Context
    from memlint.analysis.inventory import Layer

# Tensor methods (out of place) that the tables know.
# Receivers of those methods that hold tensors (not `self.norm.sum`, where the attribute may be anything).
_TENSOR_RECEIVERS = (cst.Name, cst.BinaryOperation, cst.UnaryOperation, cst.Call, cst.Subscript)
TENSOR_METHODS = frozenset(
    {"relu", "sigmoid", "tanh", "exp", "softmax", "log_softmax", "matmul", "mm", "bmm", "sqrt", "rsqrt", "sum", "mean",
     "cumsum", "pow", "square", "clamp", "abs", "log", "log1p", "expm1", "reciprocal", "sin", "cos", "tan", "erf",
     "neg"}
)  # fmt: skip
# Every name the tables know: an op of one of them returns a tensor.
_KNOWN_OPS = tables.KEEPS_OUTPUT_ONLY | tables.KEEPS_NEITHER | tables.KEEPS_INPUT_ONLY


def op_kind(expr: cst.BaseExpression, ctx: "Context", layers: Mapping[str, "Layer"]) -> Optional[str]:
    """The table name of the op at the top of `expr` ("Linear", "relu", "add", ...), or None for an
    op that is not known or may run in place."""
    if isinstance(expr, cst.BinaryOperation):
        operator = expr.operator
        if isinstance(operator, (cst.Add, cst.Subtract)):
            return "add"
        if isinstance(operator, cst.Multiply) and (_is_number(expr.left) or _is_number(expr.right)):
            return "scale"
        if isinstance(operator, cst.Divide) and _is_number(expr.right):
            return "scale"
        if isinstance(operator, (cst.Multiply, cst.Divide)):
            return "product"
        if isinstance(operator, cst.Power):
            return "pow" if _is_number(expr.right) else None  # a tensor exponent keeps the result too
        return "matmul" if isinstance(operator, cst.MatrixMultiply) else None
    if isinstance(expr, cst.UnaryOperation):
        return "add" if isinstance(expr.operator, cst.Minus) else None
    if not isinstance(expr, cst.Call):
        return None
    func = expr.func
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == "self":
        layer = layers.get(func.attr.value)
        return _layer_kind(layer) if layer is not None else None
    qualified = ctx.resolve(func)
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        if module not in ("torch", "torch.nn.functional"):
            return None
        position = tables.INPLACE_FUNCTIONS.get(name)
        if position is not None and inplace_argument(expr, position)[1] is not False:
            return None
        if name == "pow" and not _number_exponent(expr.args[1:2]):
            return None  # `torch.pow(x, y)` with a tensor exponent keeps its result too
        return name
    if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_METHODS and isinstance(func.value, _TENSOR_RECEIVERS):
        if func.attr.value == "pow" and not _number_exponent(expr.args[:1]):
            return None
        return func.attr.value  # `h.relu()`, `(a - b).pow(2)`: a method of a tensor held in a name or computed
    return None


def _number_exponent(args) -> bool:
    """Is the exponent (the one positional argument given, or `exponent=`) a number?"""
    return len(args) == 1 and args[0].keyword is None and _is_number(args[0].value)


def known_op(expr: cst.BaseExpression, ctx: "Context", layers: Mapping[str, "Layer"]) -> bool:
    """Is `expr` an op the tables know (a layer of torch's, a torch function, a tensor method, an
    operator)?  Each returns a tensor when given one: evidence that a value is a tensor."""
    return op_kind(expr, ctx, layers) in _KNOWN_OPS


def keeps_output(expr: cst.BaseExpression, ctx: "Context", layers: Mapping[str, "Layer"]) -> Optional[bool]:
    """Does the op that computes `expr` keep its result for backward?"""
    kind = op_kind(expr, ctx, layers)
    if kind in tables.KEEPS_OUTPUT_ONLY:
        return True
    if kind in tables.KEEPS_NEITHER or kind in tables.KEEPS_INPUT_ONLY:
        return False
    return None


def reader_of(expr: cst.BaseExpression, name: str) -> Optional[cst.BaseExpression]:
    """The innermost operation in `expr` that takes `name` itself as an operand (`F.relu(h)`,
    `h + b`, `h.relu()`), or None when `name` is not a direct operand of one."""
    stack: list[cst.BaseExpression] = [expr]
    while stack:
        node = stack.pop()
        operands: list[cst.BaseExpression] = []
        if isinstance(node, cst.Call):
            operands = [a.value for a in node.args]
            if isinstance(node.func, cst.Attribute):
                operands.append(node.func.value)
        elif isinstance(node, cst.BinaryOperation):
            operands = [node.left, node.right]
        elif isinstance(node, cst.UnaryOperation):
            operands = [node.expression]
        if any(isinstance(o, cst.Name) and o.value == name for o in operands):
            return node
        stack.extend(o for o in operands if isinstance(o, (cst.Call, cst.BinaryOperation, cst.UnaryOperation)))
    return None


def keeps_input(reader: cst.BaseExpression, ctx: "Context", layers: Mapping[str, "Layer"]) -> Optional[bool]:
    """Does `reader` (an op taking the tensor as an operand) keep that operand for backward?"""
    kind = op_kind(reader, ctx, layers)
    if kind in tables.KEEPS_OUTPUT_ONLY or kind in tables.KEEPS_NEITHER:
        return False
    if kind in tables.KEEPS_INPUT_ONLY:
        return True
    return None


def _layer_kind(layer: "Layer") -> Optional[str]:
    kind = layer.kind
    if kind is None or kind.startswith("local:"):
        return None
    position = tables.INPLACE_MODULES.get(kind)
    if position is not None and inplace_argument(layer.call, position)[1] is not False:
        return None  # `nn.ReLU(inplace=True)`: its output is its input
    return kind


def _is_number(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) or (
        isinstance(expr, cst.UnaryOperation) and isinstance(expr.expression, (cst.Integer, cst.Float))
    )


def makes_fresh_tensor(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `expr` a call of such a function (`torch.cat([a, b])`, `F.gelu(h)`, `torch.mm(a, b)`) or
    tensor method (`h.div(rowsum)`)?"""
    if not isinstance(expr, cst.Call) or any((a.keyword is not None and a.keyword.value == "out") or a.star == "**" for a in expr.args):
        return False  # `torch.cat(xs, out=buffer)` returns the caller's buffer (`**kw` may hand one)
    qualified = ctx.resolve(expr.func)
    if qualified is None:
        return _fresh_method_result(expr.func)
    module, _, name = qualified.rpartition(".")
    if name == "einsum" and not einsum_of_operands(len(expr.args), any(a.star for a in expr.args)):
        return False
    return module in ("torch", "torch.nn.functional") and name in FRESH_RESULT_FUNCTIONS


def _fresh_method_result(func: cst.BaseExpression) -> bool:
    """`h.div(rowsum)`, `g.ndata["h"].sum(1)`: such a method of a tensor held in a name or computed
    (not of `self.<attr>`, which may hold anything with a method of that name)."""
    return (
        type(func) is cst.Attribute
        and func.attr.value in FRESH_RESULT_METHODS  # type: ignore[attr-defined]
        and isinstance(func.value, _TENSOR_RECEIVERS)  # type: ignore[attr-defined]
    )
