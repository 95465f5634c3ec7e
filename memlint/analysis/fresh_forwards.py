"""Module classes of the file whose `forward` returns a fresh tensor.

StyleGAN's `NoiseInjection.forward` returns `image + self.weight * noise`; its `FusedDownsample`
returns `out` bound just before to `F.conv2d(...)`; pyGAT's `GraphAttentionLayer.forward` returns
`h_prime` (a `torch.matmul` result) or `F.elu(h_prime)`.  Each such result is a new tensor that the
op producing it does not keep for backward (`+`, `-`, `*`, `/`, `@`, analysis/saved.py's functions,
an out-of-place activation that keeps only its input), that the class neither stores nor hands to
anything: what `self.noise1(out, noise)` returns is as fresh as what `nn.Conv2d` returns.

A class counts when, in the file, it is defined once at module level on `nn.Module` alone (or on
one torch layer whose output nothing keeps, registering no hook: CloserLookFewShot's
`Conv2d_fw(nn.Conv2d)`, with no `forward` of its own or one whose returns are fresh, `super().forward(x)`
included), no class of the file derives from it, it defines no `__call__` and one undecorated `forward`, and every
`return` of that `forward` (at least one) returns such an expression, or a name whose last binding
before the return, a plain assignment at the top of `forward`'s body (not in a branch or loop), is
one, and that after that binding is read only by the returns and by `assert` statements; or a name
that every branch of the `if` / `else` right before the return ends binding to one, and that
`forward` mentions nowhere else (`out = F.conv2d(...)` / `out = super().forward(x)`, `return out`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.activations import inplace_argument
from memlint.analysis.bindings import bound_by, erring_names
from memlint.analysis.inventory import single_module_classes, torch_nn_name
from memlint.analysis.producers import producers_before
from memlint.analysis.reaching import only_harmless_reads
from memlint.analysis.saved import makes_fresh_tensor
from memlint.analysis.tables import FRESH_OUTPUT_LAYERS, INPLACE_FUNCTIONS, KEEPS_INPUT_ONLY
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Operators whose backward reads only their operands: the result is kept by nothing.
_FRESH_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.MatrixMultiply)
_NESTED = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def fresh_output_classes(ctx: "Context") -> frozenset[str]:
    """The names of the file's module classes whose `forward` returns only fresh tensors (memoised)."""
    return ctx.memo("fresh-output-classes", lambda: _collect(ctx))  # type: ignore[return-value]


def fresh_element_classes(ctx: "Context") -> dict[str, frozenset[int]]:
    """The file's module classes on `nn.Module` whose `forward` returns a tuple display from every
    `return` (Glow's `Actnorm`: `return z, logdet`), with, per class, the positions whose element is
    a fresh tensor in every one of them (memoised): `self.actnorm(x)[0]` is as fresh as what
    `nn.Conv2d` returns.  An element named (`z`) counts where it is fresh as a returned name is and
    no other element of that `return` mentions it (what they compute from it is dropped with the
    tuple, and nothing else keeps it)."""
    return ctx.memo("fresh-element-classes", lambda: _collect_elements(ctx))  # type: ignore[return-value]


def _plain_forwards(ctx: "Context", layer_subclasses: tuple[cst.ClassDef, ...]):
    """(class name, its one undecorated `forward` or None for a torch-layer subclass without one)
    for the candidate classes no class of the file derives from and that define no `__call__`."""
    candidates = single_module_classes(ctx)
    if not candidates and not layer_subclasses:
        return
    derived = {
        _last_name(base.value)
        for statement in ctx.module.body if type(statement) is cst.ClassDef
        for base in statement.bases
    }  # fmt: skip
    for node in (*candidates, *layer_subclasses):
        name = node.name.value
        if name in derived:
            continue
        methods = [s for s in node.body.body if type(s) is cst.FunctionDef]  # type: ignore[attr-defined]
        forwards = [m for m in methods if m.name.value == "forward"]
        if any(m.name.value == "__call__" for m in methods):
            continue
        if not forwards and node in layer_subclasses:
            yield name, None  # the torch layer's own `forward`
            continue
        if len(forwards) != 1 or forwards[0].decorators:
            continue
        yield name, forwards[0]


def _collect(ctx: "Context") -> frozenset[str]:
    return frozenset(name for name, forward in _plain_forwards(ctx, _fresh_layer_subclasses(ctx)) if forward is None or _returns_fresh(ctx, forward))


def _collect_elements(ctx: "Context") -> dict[str, frozenset[int]]:
    found: dict[str, frozenset[int]] = {}
    for name, forward in _plain_forwards(ctx, ()):
        positions = _fresh_positions(ctx, forward) if forward is not None else frozenset()
        if positions:
            found[name] = positions
    return found


def _fresh_layer_subclasses(ctx: "Context") -> tuple[cst.ClassDef, ...]:
    """Module-level classes of the file defined once on one torch layer whose output nothing keeps
    (CloserLookFewShot's `Conv2d_fw(nn.Conv2d)`, `BatchNorm2d_fw(nn.BatchNorm2d)`, which run
    `F.conv2d` / `F.batch_norm` with "fast" weights or `super().forward(x)`), registering no hook on
    themselves, assigning no `forward` and defining no method besides `_PLAIN_LAYER_METHODS`: the base's `forward` returns a fresh tensor, and so does the subclass's where every
    `return` does (`super(Conv2d_fw, self).forward(x)` counts)."""
    defined: dict[str, int] = {}
    found: list[cst.ClassDef] = []
    for statement in ctx.module.body:
        if type(statement) is not cst.ClassDef:
            continue
        defined[statement.name.value] = defined.get(statement.name.value, 0) + 1
        if len(statement.bases) != 1 or statement.bases[0].keyword is not None:
            continue
        if torch_nn_name(ctx, statement.bases[0].value) not in FRESH_OUTPUT_LAYERS:
            continue
        methods = {s.name.value for s in statement.body.body if type(s) is cst.FunctionDef}  # type: ignore[attr-defined]
        if not methods <= _PLAIN_LAYER_METHODS:
            continue  # `_conv_forward` or `_call_impl` overridden: the output may be kept there
        if any(_hooks_or_rebinds_forward(n) for n in code_descendants(statement)):
            continue  # `self.register_forward_hook(...)`, `self.forward = self.keep`: something may keep the output
        found.append(statement)
    return tuple(c for c in found if defined[c.name.value] == 1)


# The methods a torch layer's subclass may define and still compute its output with the base's
# code: anything else (`_conv_forward`, `_call_impl`) may keep the output on the way.
_PLAIN_LAYER_METHODS = frozenset({"__init__", "forward", "reset_parameters", "extra_repr"})


def _hooks_or_rebinds_forward(node: cst.CSTNode) -> bool:
    """`x.register_*_hook` (whatever happens to it) or an assignment to `x.forward` (a read such as
    `super().forward(x)` is the base's computation, a fresh result)."""
    if type(node) is cst.Attribute:
        return "hook" in node.attr.value  # type: ignore[attr-defined]
    return type(node) is cst.AssignTarget and type(node.target) is cst.Attribute and node.target.attr.value == "forward"  # type: ignore[attr-defined]


def _returns(forward: cst.FunctionDef) -> Optional[list[tuple[int, cst.Return]]]:
    """Each `return` of `forward` with the index of the top-level statement holding it; None where
    there is none, or `forward` yields or awaits."""
    body = list(forward.body.body)  # type: ignore[attr-defined]
    returns: list[tuple[int, cst.Return]] = []
    for index, statement in enumerate(body):
        for node in [statement, *code_descendants(statement, skip=_NESTED)]:
            if type(node) is cst.Return:
                returns.append((index, node))  # type: ignore[arg-type]
            elif type(node) in (cst.Yield, cst.Await):
                return None
    return returns or None


def _fresh_positions(ctx: "Context", forward: cst.FunctionDef) -> frozenset[int]:
    """The positions of the tuple every `return` of `forward` builds whose element is fresh in each."""
    returns = _returns(forward)
    if returns is None:
        return frozenset()
    body = list(forward.body.body)  # type: ignore[attr-defined]
    common: Optional[set[int]] = None
    for index, ret in returns:
        value = ret.value
        if type(value) is not cst.Tuple or any(type(e) is not cst.Element for e in value.elements):  # type: ignore[attr-defined]
            return frozenset()
        elements = [e.value for e in value.elements]  # type: ignore[attr-defined]
        fresh = set()
        for position, element in enumerate(elements):
            if _fresh_expression(ctx, element):
                fresh.add(position)
            elif type(element) is cst.Name and not any(
                _mentions(other, element.value) for other in elements[:position] + elements[position + 1:]  # type: ignore[attr-defined]
            ) and _fresh_name(ctx, body, index, element.value):  # type: ignore[attr-defined]
                fresh.add(position)
        common = fresh if common is None else common & fresh
        if not common:
            return frozenset()
    return frozenset(common or ())


def _returns_fresh(ctx: "Context", forward: cst.FunctionDef) -> bool:
    returns = _returns(forward)
    if returns is None:
        return False
    body = list(forward.body.body)  # type: ignore[attr-defined]
    for index, ret in returns:
        value = ret.value
        if value is None:
            return False
        if _fresh_expression(ctx, value):
            # `return F.elu(h_prime)`: the activation's input is read here; its own output is fresh
            continue
        if type(value) is not cst.Name:
            return False
        if not _fresh_name(ctx, body, index, value.value) and not _fresh_in_every_branch(ctx, forward, body, index, ret):
            return False
    return True


def _fresh_in_every_branch(ctx: "Context", forward: cst.FunctionDef, body: list, at: int, ret: cst.Return) -> bool:
    """`return out` at the top of `forward`, right after an `if` / `else` (nested ones too) each of
    whose branches ends binding `out` to a fresh value (`out = F.conv2d(x, w.fast, ...)` or `out =
    super(Conv2d_fw, self).forward(x)`), where `forward` mentions `out` nowhere else."""
    name = ret.value.value  # type: ignore[union-attr]
    if body[at] is not _line_of(body[at], ret):
        return False
    joined = producers_before(body, at, name)
    if joined is None or not all(_fresh_expression(ctx, v) for v in joined.values):
        return False
    mentions = sum(1 for n in code_descendants(forward.body) if type(n) is cst.Name and n.value == name)  # type: ignore[attr-defined]
    return mentions == len(joined.values) + 1


def _line_of(statement: cst.CSTNode, ret: cst.Return) -> Optional[cst.CSTNode]:
    """The top-level line whose only statement is `ret`, or None."""
    if type(statement) is cst.SimpleStatementLine and len(statement.body) == 1 and statement.body[0] is ret:  # type: ignore[attr-defined]
        return statement
    return None


def _fresh_expression(ctx: "Context", expr: cst.BaseExpression) -> bool:
    if type(expr) is cst.BinaryOperation:
        return isinstance(expr.operator, _FRESH_OPERATORS)  # type: ignore[attr-defined]
    if type(expr) is not cst.Call:
        return False
    if makes_fresh_tensor(expr, ctx) or _super_forward(expr):
        return True
    qualified = ctx.resolve(expr.func)  # type: ignore[attr-defined]
    if qualified is None:
        return False
    module, _, name = qualified.rpartition(".")
    if module != "torch.nn.functional" or name not in INPLACE_FUNCTIONS or name not in KEEPS_INPUT_ONLY:
        return False
    _, inplace = inplace_argument(expr, INPLACE_FUNCTIONS[name])  # type: ignore[arg-type]
    return inplace is False  # `F.elu(h)` out of place keeps its input only; in place it returns `h`


def _super_forward(call: cst.Call) -> bool:
    """`super().forward(x)` / `super(Conv2d_fw, self).forward(x)`: asked only of the classes on
    `nn.Module` (whose `forward` returns nothing usable: never the answer) or on a torch layer whose
    output nothing keeps (`_fresh_layer_subclasses`)."""
    func = call.func
    return (
        type(func) is cst.Attribute
        and func.attr.value == "forward"  # type: ignore[attr-defined]
        and type(func.value) is cst.Call  # type: ignore[attr-defined]
        and type(func.value.func) is cst.Name  # type: ignore[attr-defined]
        and func.value.func.value == "super"  # type: ignore[attr-defined]
    )


def _fresh_name(ctx: "Context", body: list, at: int, name: str) -> bool:
    """Is `name`, returned by the top-level statement `at`, last bound before it by a top-level
    `name = <fresh>` and after that read only by returns and asserts?"""
    last: Optional[int] = None
    for index, statement in enumerate(body):
        if _adds_in_place(ctx, statement, name):
            continue  # `x = x.add_(b)`: the same tensor, changed by an op that keeps nothing of it
        for node in code_descendants(statement, skip=_NESTED):
            if type(node) in (cst.AugAssign, cst.AnnAssign, cst.For, cst.NamedExpr, cst.WithItem, cst.Del):
                if any(name in erring_names(target) for target in bound_by(node)):
                    return False  # bound otherwise than by a plain assignment
            elif type(node) is cst.AssignTarget and name in erring_names(node.target):  # type: ignore[attr-defined]
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
        if _adds_in_place(ctx, statement, name):
            continue
        for node, inside in _reads(statement):
            if type(node) is cst.Name and node.value == name and not inside:  # type: ignore[attr-defined]
                return False
    return True


# In-place tensor methods whose backward reads nothing of the tensor they change (its grad passes
# through unchanged): a fresh tensor changed by one stays fresh (checked with PyTorch 2.13: `y = x @
# w.t()`, `y = y.add_(b)`, then `F.silu(y, inplace=True)` gives the out-of-place gradients).
_IN_PLACE_SUMS = frozenset({"add_", "sub_"})
_IN_PLACE_OPERATORS = (cst.AddAssign, cst.SubtractAssign)


def _adds_in_place(ctx: "Context", statement: cst.CSTNode, name: str) -> bool:
    """A top-level statement of `forward` that only adds to the tensor `name` holds in place: a line
    `name = name.add_(b)` / `name.add_(b)` / `name += b` / `name -= b` (`sub_` too), or an `if`
    with no `elif` / `else` whose body holds only such lines (`if self.bias is not None: x =
    x.add_(self.bias.to(x.dtype))`: edm's `Linear`); `b` and the test may read `name` only as
    reaching.only_harmless_reads allows (`x.dtype`)."""
    if type(statement) is cst.If:
        if statement.orelse is not None or not only_harmless_reads(statement.test, name, ctx):  # type: ignore[attr-defined]
            return False
        lines = statement.body.body  # type: ignore[attr-defined]
        return bool(lines) and all(_adds_in_place(ctx, line, name) for line in lines)
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return False
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is cst.AugAssign:
        return (
            type(small.operator) in _IN_PLACE_OPERATORS and type(small.target) is cst.Name
            and small.target.value == name and only_harmless_reads(small.value, name, ctx)
        )  # fmt: skip
    if type(small) is cst.Assign:
        if len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name or small.targets[0].target.value != name:
            return False
        call = small.value
    elif type(small) is cst.Expr:
        call = small.value
    else:
        return False
    if type(call) is not cst.Call or type(call.func) is not cst.Attribute or call.func.attr.value not in _IN_PLACE_SUMS:
        return False
    receiver = call.func.value
    return type(receiver) is cst.Name and receiver.value == name and all(only_harmless_reads(a.value, name, ctx) for a in call.args)


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


def _mentions(expr: cst.BaseExpression, name: str) -> bool:
    """Does `expr` read `name` anywhere in it?"""
    return any(type(n) is cst.Name and n.value == name for n in (expr, *code_descendants(expr)))  # type: ignore[attr-defined]


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return None
