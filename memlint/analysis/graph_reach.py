"""Does a later backward in a loop's iteration go through the graph an earlier one retained?

`loss_a.backward(retain_graph=True)` keeps loss_a's graph alive for a later backward that goes
through it.  A later backward whose loss is built only from values computed after the first
backward (a fresh forward: infoGAN's generator step re-runs G and D after the discriminator's
backward), or from values that carry no autograd history (noise from `torch.rand`, labels, a
model's parameters through a fresh forward), cannot reach the earlier graph: the retained buffers
serve nothing.

`built_after(ctx, loop, earlier, later, names)`, asked where the traversal is at the later
backward, answers True only when it can follow every value: the two backward calls are statements
of the loop's own body (not behind an `if`), the names the later loss is built from are bound by
plain assignments between them (followed through their own values, to any depth) or not rebound
since before the earlier backward and known by the valuation to carry no history (a tensor without
graph, a number, a module).  Anything else (a container, a value the valuation cannot tell, a name
rebound in a nested block, `self.<attr>` assigned in the loop, an expression it does not follow)
answers False: the later backward may go through the retained graph.  Known limit: two networks
whose forwards both ran before the first backward (PPO's actor and critic) are not told apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst

from memlint.analysis import values
from memlint.analysis.values import Kind
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


# Values with no autograd history that a loss may be built from.
_CLEAN_KINDS = frozenset({Kind.TENSOR, Kind.NUMBER, Kind.OTHER, Kind.MODULE, Kind.FUNCTION})
_CONSTANTS = (cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
_MAX_DEPTH = 24
# Nodes that bind names other than a plain assignment statement of the window.
_BINDERS = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.NamedExpr, cst.AsName})


def built_after(ctx: "Context", loop: cst.CSTNode, earlier: cst.Call, later: cst.Call, names: Sequence[str]) -> bool:
    body = getattr(loop, "body", None)
    if not isinstance(body, cst.IndentedBlock) or not names:
        return False
    statements = list(body.body)
    first, last = _position(statements, earlier), _position(statements, later)
    if first is None or last is None or first >= last or type(statements[last]) is not cst.SimpleStatementLine:
        return False
    window = statements[first + 1 : last]
    return _Reach(ctx, window).names_fresh(names, len(window), 0)


def _position(statements: list, call: cst.Call) -> Optional[int]:
    for index, statement in enumerate(statements):
        if statement is call or any(node is call for node in code_descendants(statement)):
            return index
    return None


class _Reach:
    def __init__(self, ctx: "Context", window: list) -> None:
        self.ctx = ctx
        self.window = window
        # name -> [(index in the window, the assignment's value)] for plain direct assignments;
        # names bound in any other way in the window (nested blocks, `+=`, loop targets) are opaque.
        self.bindings: dict[str, list[tuple[int, cst.BaseExpression]]] = {}
        self.opaque: set[str] = set()
        self.assigned_attributes: set[str] = set()
        for index, statement in enumerate(window):
            plain = []
            if type(statement) is cst.SimpleStatementLine:
                plain = [small for small in statement.body if type(small) is cst.Assign]  # type: ignore[attr-defined]
                for small in plain:
                    for target in small.targets:  # type: ignore[attr-defined]
                        for name in _target_names(target.target, self.assigned_attributes, self.opaque):
                            self.bindings.setdefault(name, []).append((index, small.value))  # type: ignore[attr-defined]
            skip = {id(t) for small in plain for t in small.targets}  # type: ignore[attr-defined]
            for node in code_descendants(statement):
                if id(node) in skip or type(node) not in _BINDERS:
                    continue
                target = getattr(node, "target", None) or getattr(node, "name", None)
                if target is not None:
                    _target_names(target, self.assigned_attributes, self.opaque, into_opaque=True)

    def names_fresh(self, names: Sequence[str], limit: int, depth: int) -> bool:
        return all(self._name_fresh(name, None, limit, depth) for name in names)

    def _name_fresh(self, name: str, node: Optional[cst.Name], limit: int, depth: int) -> bool:
        """Is `name`'s value at window position `limit` free of the earlier graph?"""
        if depth > _MAX_DEPTH or name in self.opaque:
            return False
        bound = [(i, v) for i, v in self.bindings.get(name, ()) if i < limit]
        if bound:
            index, value = bound[-1]
            return self._expression_fresh(value, index, depth + 1)
        # Not rebound since before the earlier backward: it must carry no history at all.
        value = values.evaluate(node if node is not None else cst.Name(name), self.ctx)
        return value.graph is False and value.kind in _CLEAN_KINDS

    def _expression_fresh(self, expr: cst.BaseExpression, limit: int, depth: int) -> bool:
        leaves = _leaves(expr, self.ctx)
        if leaves is None:
            return False
        for leaf in leaves:
            if type(leaf) is cst.Name:
                if not self._name_fresh(leaf.value, leaf, limit, depth):
                    return False
            else:  # `self.<attr>` used as data
                if _attribute_text(leaf) in self.assigned_attributes:
                    return False
                value = values.evaluate(leaf, self.ctx)
                if not (value.graph is False and value.kind in _CLEAN_KINDS):
                    return False
        return True


def _target_names(target: cst.BaseExpression, attributes: set[str], opaque: set[str], into_opaque: bool = False) -> list[str]:
    names = []
    stack = [target]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            names.append(node.value)  # type: ignore[attr-defined]
            if into_opaque:
                opaque.add(node.value)  # type: ignore[attr-defined]
        elif kind in (cst.Tuple, cst.List):
            stack.extend(e.value for e in node.elements)  # type: ignore[attr-defined]
        elif kind is cst.StarredElement:
            stack.append(node.value)  # type: ignore[attr-defined]
        elif kind is cst.Attribute:
            attributes.add(_attribute_text(node))  # type: ignore[arg-type]
        else:
            for inner in code_descendants(node):
                if type(inner) is cst.Name:
                    opaque.add(inner.value)  # type: ignore[attr-defined]
    return names


def _attribute_text(node: cst.Attribute) -> str:
    parts = []
    current: cst.BaseExpression = node
    while type(current) is cst.Attribute:
        parts.append(current.attr.value)  # type: ignore[attr-defined]
        current = current.value  # type: ignore[attr-defined]
    parts.append(current.value if type(current) is cst.Name else "?")  # type: ignore[attr-defined]
    return ".".join(reversed(parts))


def _leaves(expr: cst.BaseExpression, ctx: "Context") -> Optional[list]:
    """The names and `self.<attr>` chains whose values `expr` is computed from, or None where the
    expression is of a shape not followed.  A callee that is an import, a builtin, the file's own
    function, a module, or an attribute of self (a submodule, a loss) is no data."""
    kind = type(expr)
    if kind is cst.Name:
        return [] if expr.value in ("True", "False", "None") else [expr]  # type: ignore[attr-defined]
    if kind in _CONSTANTS:
        return []
    if kind is cst.Attribute:
        root = expr
        while type(root) is cst.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is cst.Name and root.value == "self":  # type: ignore[attr-defined]
            return [expr]
        if ctx.resolve(expr) is not None:
            return []  # `torch.float32`
        return _leaves(expr.value, ctx)  # type: ignore[attr-defined]
    if kind is cst.Call:
        found = _callee_leaves(expr.func, ctx)  # type: ignore[attr-defined]
        if found is None:
            return None
        for arg in expr.args:  # type: ignore[attr-defined]
            inner = _leaves(arg.value, ctx)
            if inner is None:
                return None
            found += inner
        return found
    if kind is cst.BinaryOperation or kind is cst.Comparison or kind is cst.BooleanOperation:
        parts = [expr.left] if kind is not cst.Comparison else [expr.left, *(c.comparator for c in expr.comparisons)]  # type: ignore[attr-defined]
        if kind is not cst.Comparison:
            parts.append(expr.right)  # type: ignore[attr-defined]
        return _all(parts, ctx)
    if kind is cst.UnaryOperation:
        return _leaves(expr.expression, ctx)  # type: ignore[attr-defined]
    if kind in (cst.Tuple, cst.List):
        return _all([e.value for e in expr.elements], ctx)  # type: ignore[attr-defined]
    if kind is cst.Subscript:
        parts = [expr.value]  # type: ignore[attr-defined]
        for element in expr.slice:  # type: ignore[attr-defined]
            index = element.slice
            if type(index) is cst.Index:
                parts.append(index.value)
            elif type(index) is cst.Slice:
                parts += [p for p in (index.lower, index.upper, index.step) if p is not None]
        return _all(parts, ctx)
    return None


def _all(parts: list, ctx: "Context") -> Optional[list]:
    found: list = []
    for part in parts:
        inner = _leaves(part, ctx)
        if inner is None:
            return None
        found += inner
    return found


def _callee_leaves(func: cst.BaseExpression, ctx: "Context") -> Optional[list]:
    if ctx.resolve(func) is not None:
        return []  # `torch.max`, `F.mse_loss`
    if type(func) is cst.Name:
        if ctx.is_builtin(func.value) or values.own_definition(func, ctx) is not None:  # type: ignore[attr-defined]
            return []
        return [] if values.evaluate(func, ctx).kind is Kind.MODULE else None
    if type(func) is cst.Attribute:
        root = func
        while type(root) is cst.Attribute:
            root = root.value  # type: ignore[attr-defined]
        if type(root) is cst.Name and root.value == "self":  # type: ignore[attr-defined]
            # `self.D(x)`, `self.BCE_loss(a, b)`: a submodule runs on its arguments; a method of the
            # object may read what the object keeps (`self.penalty()`): not followed
            return [] if values.evaluate(func, ctx).kind is Kind.MODULE else None
        return _leaves(func.value, ctx)  # type: ignore[attr-defined]  # `D_fake.mean()`: the receiver is data
    return None
