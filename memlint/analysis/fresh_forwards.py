"""Module classes of the file whose `forward` returns a fresh tensor.

StyleGAN's `NoiseInjection.forward` returns `image + self.weight * noise`; its `FusedDownsample`
returns `out` bound just before to `F.conv2d(...)`; pyGAT's `GraphAttentionLayer.forward` returns
`h_prime` (a `torch.matmul` result) or `F.elu(h_prime)`.  Each such result is a new tensor that the
op producing it does not keep for backward (`+`, `-`, `*`, `/`, `@`, analysis/saved.py's functions,
an out-of-place activation that keeps only its input), that the class neither stores nor hands to
anything: what `self.noise1(out, noise)` returns is as fresh as what `nn.Conv2d` returns.

A class counts when, in the file, it is defined once at module level on `nn.Module` alone, no class
of the file derives from it, it defines no `__call__` and one undecorated `forward`, and every
`return` of that `forward` (at least one) returns such an expression, or a name whose last binding
before the return, a plain assignment at the top of `forward`'s body (not in a branch or loop), is
one, and that after that binding is read only by the returns and by `assert` statements.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.activations import inplace_argument
from memlint.analysis.inventory import single_module_classes
from memlint.analysis.saved import makes_fresh_tensor
from memlint.analysis.tables import INPLACE_FUNCTIONS, KEEPS_INPUT_ONLY
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Operators whose backward reads only their operands: the result is kept by nothing.
_FRESH_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply)
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def fresh_output_classes(ctx: "Context") -> frozenset[str]:
    """The names of the file's module classes whose `forward` returns only fresh tensors (memoised)."""
    return ctx.memo("fresh-output-classes", lambda: _collect(ctx))  # type: ignore[return-value]


def _collect(ctx: "Context") -> frozenset[str]:
    candidates = single_module_classes(ctx)
    if not candidates:
        return frozenset()
    derived = {
        _last_name(base.value)
        for statement in ctx.module.body if type(statement) is cst.ClassDef
        for base in statement.bases
    }  # fmt: skip
    found = set()
    for node in candidates:
        name = node.name.value
        if name in derived:
            continue
        methods = [s for s in node.body.body if type(s) is cst.FunctionDef]  # type: ignore[attr-defined]
        forwards = [m for m in methods if m.name.value == "forward"]
        if len(forwards) != 1 or forwards[0].decorators or any(m.name.value == "__call__" for m in methods):
            continue
        if _returns_fresh(ctx, forwards[0]):
            found.add(name)
    return frozenset(found)


def _returns_fresh(ctx: "Context", forward: cst.FunctionDef) -> bool:
    body = list(forward.body.body)  # type: ignore[attr-defined]
    returns: list[tuple[int, cst.Return]] = []
    for index, statement in enumerate(body):
        for node in [statement, *code_descendants(statement, skip=_NESTED)]:
            if type(node) is cst.Return:
                returns.append((index, node))  # type: ignore[arg-type]
            elif type(node) in (cst.Yield, cst.Await):
                return False
    if not returns:
        return False
    for index, ret in returns:
        value = ret.value
        if value is None:
            return False
        if _fresh_expression(ctx, value):
            # `return F.elu(h_prime)`: the activation's input is read here; its own output is fresh
            continue
        if type(value) is not cst.Name or not _fresh_name(ctx, body, index, value.value):
            return False
    return True


def _fresh_expression(ctx: "Context", expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.BinaryOperation:
        return isinstance(expr.operator, _FRESH_OPERATORS)  # type: ignore[attr-defined]
    if type(expr) is not cst.Call:
        return False
    if makes_fresh_tensor(expr, ctx):
        return True
    qualified = ctx.resolve(expr.func)  # type: ignore[attr-defined]
    if qualified is None:
        return False
    module, _, name = qualified.rpartition(".")
    if module != "torch.nn.functional" or name not in INPLACE_FUNCTIONS or name not in KEEPS_INPUT_ONLY:
        return False
    _, inplace = inplace_argument(expr, INPLACE_FUNCTIONS[name])  # type: ignore[arg-type]
    return inplace is False  # `F.elu(h)` out of place keeps its input only; in place it returns `h`


def _fresh_name(ctx: "Context", body: list, at: int, name: str) -> bool:
    """Is `name`, returned by the top-level statement `at`, last bound before it by a top-level
    `name = <fresh>` and after that read only by returns and asserts?"""
    last: Optional[int] = None
    for index, statement in enumerate(body):
        for node in code_descendants(statement, skip=_NESTED):
            if type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem, cst.Del):
                target = getattr(node, "target", None) or getattr(getattr(node, "asname", None), "name", None)
                if target is not None and _binds(target, name):
                    return False  # bound otherwise than by a plain assignment
            elif type(node) is cst.AssignTarget and _binds(node.target, name):  # type: ignore[attr-defined]
                assign = statement.body[0] if type(statement) is cst.SimpleStatementLine else None  # type: ignore[attr-defined]
                if (
                    type(assign) is not cst.Assign or len(statement.body) != 1 or len(assign.targets) != 1  # type: ignore[attr-defined]
                    or type(assign.targets[0].target) is not cst.Name  # type: ignore[attr-defined]
                ):  # fmt: skip
                    return False  # bound in a branch, a loop, or together with other names
                if index < at:
                    last = index
    if last is None:
        return False
    value = body[last].body[0].value
    if not _fresh_expression(ctx, value):
        return False
    for statement in body[last + 1:]:
        for node, inside in _reads(statement):
            if type(node) is cst.Name and node.value == name and not inside:  # type: ignore[attr-defined]
                return False
    return True


def _reads(statement: cst.CSTNode):
    """Each node of the statement with whether it sits in a `return` or an `assert` (which hold nothing)."""
    stack = [(statement, False)]
    while stack:
        node, inside = stack.pop()
        if type(node) in _NESTED:
            for each in code_descendants(node):
                yield each, False  # a closure may keep it
            continue
        inside = inside or type(node) in (cst.Return, cst.Assert)
        yield node, inside
        stack.extend((child, inside) for child in code_children(node))


def _binds(target: cst.BaseExpression, name: str) -> bool:
    return any(type(n) is cst.Name and n.value == name for n in [target, *code_descendants(target)])  # type: ignore[attr-defined]


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return None
