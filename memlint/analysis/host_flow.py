"""What a function's local names hold on the way to a move, for `host_factories.factory_under`.

A host tensor stays a fresh host tensor when the code transforms it before the move: arithmetic
with numbers (`torch.ones(n) * i`, `torch.linspace(...) / self.fs`), elementwise math
(`torch.exp(torch.arange(h) * -c)`, a Hamming window `0.54 - 0.46 * torch.cos(2 * math.pi * n / N)`)
or a name it was bound to (`n = torch.linspace(0, N, steps=N)` then the window from `n`).
`Flow` holds, for one statement, the names bound earlier in its function (in its block or a block
around it) to such a host tensor, and the names bound to numbers.  `statement_flows` computes it
for each statement of a block, forward, one scan per block.

Evidence that an operand is a number (`number_like`): a literal, the model's valuation, `math`'s
functions and constants, a name bound earlier to a number, or a name (a parameter, a loop's counter)
or `self` attribute that its function reads only as a number: in arithmetic and comparisons, as
the size of a torch factory or of `range`, never as an object with attributes or items.  A value of
unknown kind used otherwise (passed to a call, indexed, its attributes read) is not a number: its
placement is unknown, and arithmetic with it is no fresh host tensor.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping, Optional, Sequence

import libcst as cst

from memlint.analysis.bindings import bound_by
from memlint.analysis.moves import single_binding
from memlint.analysis.values import Kind, evaluate
from memlint.analysis.tables import ELEMENTWISE_FUNCTIONS, SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES, VARIABLE_CLASSES
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Builtins that return a Python number.
_NUMBER_BUILTINS = frozenset({"int", "float", "len", "round", "abs", "min", "max"})
# Methods of a tensor that return a Python number or a size.
_SIZE_READS = frozenset({"size", "item", "dim", "numel"})
_ARITHMETIC = (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget, cst.BooleanOperation)


@dataclass(frozen=True)
class Flow:
    """At one statement: names bound earlier to a fresh host tensor (the value each holds) and names
    bound earlier to a number."""

    host: Mapping[str, cst.BaseExpression] = field(default_factory=dict)
    numbers: frozenset[str] = frozenset()


EMPTY = Flow()
HoldsHost = Callable[[cst.BaseExpression, Flow], bool]


def statement_flows(statements: Sequence[cst.BaseStatement], entry: Flow, holds_host: HoldsHost, ctx: "Context") -> dict[int, Flow]:
    """The `Flow` at each statement of a block (by `id`), starting from `entry` (the flow at the
    statement that holds the block), and at the first statement of each block nested in them.
    `holds_host(value, flow)` says whether a value holds a fresh host tensor given the flow."""
    flows: dict[int, Flow] = {}
    flow = entry
    for index, statement in enumerate(statements):
        flows[id(statement)] = flow
        for block, loop in _inner_blocks(statement):
            inner = flow if loop is None else _forget(flow, _bound_names(loop))  # a loop's body may see its own rebindings
            flows[id(block)] = inner
        flow = _after(statement, statements[index + 1 :], flow, holds_host, ctx)
    return flows


def factory_names(function: cst.FunctionDef, is_factory: Callable[[cst.Call], bool]) -> frozenset[str]:
    """The names `function` binds (`name = value`) to a value with a factory call in it (`is_factory`),
    or to a value that reads such a name, to a fixed point: the only names a flow can say hold a fresh
    host tensor, and so the cheap test before one is computed."""
    assigns: list[tuple[str, set[str]]] = []
    names: set[str] = set()
    for node in code_descendants(function):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:  # type: ignore[attr-defined]
            continue
        name = node.targets[0].target.value  # type: ignore[attr-defined]
        inside = list(code_descendants(node.value))  # type: ignore[attr-defined]
        if any(type(n) is cst.Call and is_factory(n) for n in (node.value, *inside)):  # type: ignore[attr-defined,arg-type]
            names.add(name)
        else:
            assigns.append((name, {n.value for n in inside if type(n) is cst.Name}))  # type: ignore[attr-defined]
    grown = bool(names)
    while grown:
        grown = False
        for name, read in assigns:
            if name not in names and read & names:
                names.add(name)
                grown = True
    return frozenset(names)


def _after(statement: cst.BaseStatement, rest: Sequence[cst.BaseStatement], flow: Flow, holds_host: HoldsHost, ctx: "Context") -> Flow:
    """The flow after `statement`: its binding added (`name = value`: a host tensor read once in
    the rest of the block, so that the move of what it feeds is its only use; or a number) and
    every other name it binds or may change forgotten."""
    bound = _bound_names(statement)
    if not bound:
        return flow
    single = single_binding(statement)
    flow = _forget(flow, bound)
    if single is None:
        return flow
    name, value = single
    if holds_host(value, flow):
        if _only_computed_on(rest, name, ctx):
            return Flow({**flow.host, name: value}, flow.numbers)
        return flow
    if number_like(value, ctx, flow):
        return Flow(flow.host, flow.numbers | {name})
    return flow


# Methods whose result is a new tensor (or a view) where the receiver is: computing on a host tensor with them
# keeps the result on the host; moving it sends it to the device.
_COMPUTING_METHODS = SHAPE_METHODS | TENSOR_CASTS | ELEMENTWISE_FUNCTIONS | {"cuda", "to", "type_as"}


def _only_computed_on(statements: Sequence[cst.BaseStatement], name: str, ctx: "Context") -> bool:
    """Is the host tensor `name` holds read by `statements` (up to the first that rebinds the name,
    itself included) only to compute other tensors or to move it, and at least once: an operand of
    arithmetic (`torch.ones(n, n) - mask`), the receiver of a reshape, a cast, elementwise math or a
    move (`mask.cuda()`), or the tensor the legacy `Variable(mask)` wraps (the tensor itself since
    PyTorch 0.4)?  Then a tensor made on the device instead would serve every read; a read
    that hands it to a call, returns or keeps it would need the host tensor."""
    reads = 0
    for statement in statements:
        targets = _targets_in(statement)
        stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode], Optional[cst.CSTNode]]] = [(statement, None, None)]
        while stack:
            node, parent, grandparent = stack.pop()
            if type(node) is cst.Name and node.value == name and id(node) not in targets:  # type: ignore[attr-defined]
                if not (_computes_on(parent) or _wrapped(parent, grandparent, ctx)):
                    return False
                reads += 1
            stack.extend((child, node, parent) for child in code_children(node))
        if name in _bound_names(statement):
            break
    return reads > 0


def _computes_on(parent: Optional[cst.CSTNode]) -> bool:
    kind = type(parent)
    if kind in (cst.BinaryOperation, cst.UnaryOperation):
        return True
    return kind is cst.Attribute and parent.attr.value in _COMPUTING_METHODS  # type: ignore[union-attr]


def _wrapped(parent: Optional[cst.CSTNode], grandparent: Optional[cst.CSTNode], ctx: "Context") -> bool:
    """Is the read the first (positional) argument of `Variable(...)` (`tables.VARIABLE_CLASSES`)?"""
    if type(parent) is not cst.Arg or type(grandparent) is not cst.Call:
        return False
    args = grandparent.args  # type: ignore[attr-defined]
    return args[0] is parent and parent.keyword is None and not parent.star and ctx.resolve(grandparent.func) in VARIABLE_CLASSES  # type: ignore[attr-defined]


def _forget(flow: Flow, names: frozenset[str]) -> Flow:
    if not names or not (names & flow.host.keys() or names & flow.numbers):
        return flow
    return Flow({k: v for k, v in flow.host.items() if k not in names}, flow.numbers - names)


def _inner_blocks(statement: cst.BaseStatement):
    """(block, the loop owning it or None) for each block directly inside a compound statement."""
    kind = type(statement)
    if kind is cst.If:
        yield statement.body, None  # type: ignore[attr-defined]
        orelse = statement.orelse  # type: ignore[attr-defined]
        while orelse is not None:
            yield orelse.body, None
            orelse = orelse.orelse if type(orelse) is cst.If else None
    elif kind in (cst.For, cst.While):
        yield statement.body, statement  # type: ignore[attr-defined]
    elif kind is cst.With:
        yield statement.body, None  # type: ignore[attr-defined]


def _bound_names(node: cst.CSTNode) -> frozenset[str]:
    """Names `node` binds or may change in place: what it binds anywhere (`bindings.bound_by`; not a
    comprehension's own loop target), and the names whose items are written or deleted or whose
    in-place methods run (`m[i] = x`, `m.scatter_(...)`)."""
    names: set[str] = set()
    for child in (node, *code_descendants(node)):
        kind = type(child)
        if kind is cst.Call and type(child.func) is cst.Attribute and child.func.attr.value.endswith("_"):  # type: ignore[attr-defined]
            receiver = child.func.value  # type: ignore[attr-defined]
            if type(receiver) is cst.Name:
                names.add(receiver.value)
        elif kind is not cst.CompFor:
            for target in bound_by(child):
                names.update(_target_roots(target))
    return frozenset(names)


def _target_roots(target: cst.CSTNode) -> list[str]:
    """The names a target binds, and the name whose item or slice it writes (`m` of `m[i, 0] = 1`)."""
    kind = type(target)
    if kind is cst.Name:
        return [target.value]  # type: ignore[attr-defined]
    if kind in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_roots(e.value)]  # type: ignore[attr-defined]
    if kind is cst.StarredElement:
        return _target_roots(target.value)  # type: ignore[attr-defined]
    if kind is cst.Subscript and type(target.value) is cst.Name:  # type: ignore[attr-defined]
        return [target.value.value]  # type: ignore[attr-defined]
    return []


def number_like(expr: cst.BaseExpression, ctx: "Context", flow: Flow = EMPTY, depth: int = 0) -> bool:
    """Is `expr` a Python number by the code's evidence (the module docstring's)?"""
    if depth > 6:
        return False
    kind = type(expr)
    if kind in (cst.Integer, cst.Float):
        return True
    if kind is cst.UnaryOperation:
        return number_like(expr.expression, ctx, flow, depth + 1)  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:
        return number_like(expr.left, ctx, flow, depth + 1) and number_like(expr.right, ctx, flow, depth + 1)  # type: ignore[attr-defined]
    if evaluate(expr, ctx).kind is Kind.NUMBER:
        return True
    qualified = ctx.resolve(expr.func if kind is cst.Call else expr) or ""  # type: ignore[attr-defined]
    if qualified.startswith("math."):
        return True  # `math.pi`, `math.log(10000)`
    if kind is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value in _NUMBER_BUILTINS and ctx.is_builtin(func.value):
            # `int(t)`, `float(t)`, `len(x)` are numbers whatever they read; `abs(w)`, `round(t)`, `max(a, b)`
            # are numbers only of numbers (of a tensor, a tensor where it is)
            return func.value in ("int", "float", "len") or all(number_like(a.value, ctx, flow, depth + 1) for a in expr.args)  # type: ignore[attr-defined]
        return type(func) is cst.Attribute and func.attr.value in _SIZE_READS and func.attr.value != "size" or (
            type(func) is cst.Attribute and func.attr.value == "size" and len(expr.args) == 1  # type: ignore[attr-defined]
        )
    if kind is cst.Name:
        if expr.value in flow.numbers:  # type: ignore[attr-defined]
            return True
        if expr.value in flow.host:  # type: ignore[attr-defined]
            return False
        return _read_only_as_number(expr.value, ctx)  # type: ignore[attr-defined]
    if kind is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":  # type: ignore[attr-defined]
        return _attribute_read_only_as_number(expr.attr.value, ctx)  # type: ignore[attr-defined]
    return False


def _read_only_as_number(name: str, ctx: "Context") -> bool:
    """Does the function read `name` only as a number, and bind it only to numbers or as a loop's
    counter?  (Its valuation must not say it holds a tensor, a model or a container.)"""
    if evaluate(cst.Name(name), ctx).kind in (Kind.TENSOR, Kind.MODULE, Kind.CONTAINER, Kind.FUNCTION):
        return False
    scope = ctx.function_node
    if scope is None:
        return False
    return ctx.memo(("number-name", id(scope), name), lambda: _uses_are_numeric(scope, lambda n: type(n) is cst.Name and n.value == name, ctx))  # type: ignore[return-value]


def _attribute_read_only_as_number(attr: str, ctx: "Context") -> bool:
    """`self.fs` of a class that binds it only to numbers, or to names that are numbers where they
    are bound (`self.fs = fs` with `fs=16000`, `_copies_numbers`), and reads it only as a number."""
    if ctx.lookup_self_attribute(attr).kind in (Kind.TENSOR, Kind.MODULE, Kind.CONTAINER, Kind.FUNCTION):
        return False
    cls = next((f.node for f in reversed(ctx.frames) if f.kind == "class"), None)
    if cls is None:
        return False

    def is_attr(node: cst.CSTNode) -> bool:
        return type(node) is cst.Attribute and node.attr.value == attr and type(node.value) is cst.Name and node.value.value == "self"  # type: ignore[attr-defined]

    return ctx.memo(("number-attribute", id(cls), attr), lambda: _uses_are_numeric(cls, is_attr, ctx) and _copies_numbers(cls, is_attr, ctx))  # type: ignore[return-value]


def _copies_numbers(cls: cst.CSTNode, is_attr: Callable[[cst.CSTNode], bool], ctx: "Context") -> bool:
    """Is every name a method of `cls` binds the attribute to (`self.fs = fs`) a number there: a
    parameter whose default is a number (`fs=16000`), or a name that method reads only as a number,
    in arithmetic at least once (`self.freq_scale = fs * 1.0`)?
    A parameter with no such evidence may be any tensor its caller gives (`self.mean = mean`)."""
    for method in code_descendants(cls):
        if type(method) is not cst.FunctionDef:
            continue
        for node in code_descendants(method):
            if type(node) is cst.Assign and type(node.value) is cst.Name and any(is_attr(t.target) for t in node.targets):  # type: ignore[attr-defined]
                name = node.value.value  # type: ignore[attr-defined]
                is_name = lambda n: type(n) is cst.Name and n.value == name  # type: ignore[attr-defined]  # noqa: E731
                if not (_number_default(method, name) or _uses_are_numeric(method, is_name, ctx, arithmetic_suffices=True)):
                    return False
    return True


def _number_default(function: cst.FunctionDef, name: str) -> bool:
    """Is `name` a parameter of `function` whose default is a number literal (`fs=16000`, `eps=-1e-3`)?"""
    for param in (*function.params.params, *function.params.kwonly_params):
        if param.name.value == name:
            default = param.default
            while type(default) is cst.UnaryOperation:
                default = default.expression  # type: ignore[attr-defined]
            return type(default) in (cst.Integer, cst.Float)
    return False


def _uses_are_numeric(scope: cst.CSTNode, matches: Callable[[cst.CSTNode], bool], ctx: "Context", arithmetic_suffices: bool = False) -> bool:
    """Is every occurrence in `scope` of what `matches` picks an operand of arithmetic or a
    comparison, an index or a slice's bound, a size given to a torch factory, `range` or a number builtin, or a
    target bound to a number-like value (by its syntax alone) or by a `for`?  At least one use
    must be arithmetic, and one a size or a binding in `scope` (a parameter or an attribute that
    nothing here binds or sizes may hold any tensor its caller gives); with `arithmetic_suffices`,
    the arithmetic alone (a constructor's parameter read as a number where it is copied to `self`)."""
    uses: list[tuple[cst.CSTNode, cst.CSTNode, Optional[cst.CSTNode]]] = []  # (use, its parent, the parent's parent)
    stack: list[tuple[cst.CSTNode, Optional[cst.CSTNode]]] = [(scope, None)]
    while stack:
        node, parent = stack.pop()
        for child in code_children(node):
            if matches(child):
                uses.append((child, node, parent))
            else:
                stack.append((child, node))
    targets = _targets_in(scope)
    arithmetic = sized = False
    for child, parent, grandparent in uses:
        kind = type(parent)
        if id(child) in targets or kind is cst.Attribute and parent.attr is child:  # type: ignore[attr-defined]
            continue  # a binding, or the attribute name of `self.fs` (no read of the name `fs`)
        if kind is cst.Param and arithmetic_suffices:
            continue  # the constructor's parameter itself (declared, not read)
        if kind in _ARITHMETIC:
            arithmetic = True
        elif kind is cst.Arg and type(grandparent) is cst.Call and _takes_numbers(grandparent, ctx):  # type: ignore[arg-type]
            sized = True
        elif kind in (cst.AssignTarget, cst.Index, cst.Slice, cst.FormattedStringExpression):
            continue  # a target, an index or a slice's bound (`queue[:, self.index:self.index + b]`), a formatted number
        elif kind is cst.For and parent.target is child:  # type: ignore[attr-defined]
            continue
        elif kind is cst.Assign and parent.value is child:  # type: ignore[attr-defined]
            continue  # copied to another name (`N = self.Filt_dim`)
        else:
            return False
    return arithmetic and _bound_only_to_numbers(scope, matches) and (sized or arithmetic_suffices or _bound_in(scope, matches, targets))


def _bound_in(scope: cst.CSTNode, matches: Callable[[cst.CSTNode], bool], targets: set[int]) -> bool:
    """Does `scope` bind what `matches` picks (a loop's counter, `half = dim // 2`, `self.fs = fs`)?
    With the uses, the evidence that it is a number; a value nobody binds may be any tensor."""
    return any(id(node) in targets and matches(node) for node in code_descendants(scope))


def _targets_in(scope: cst.CSTNode) -> set[int]:
    """The ids of the nodes `scope` binds as targets (of `=`, `for`, a comprehension)."""
    return {id(n) for node in code_descendants(scope) if type(node) in (cst.For, cst.AssignTarget, cst.CompFor) for n in _target_nodes(node.target)}  # type: ignore[attr-defined]


def _target_nodes(target: cst.CSTNode) -> list[cst.CSTNode]:
    kind = type(target)
    if kind in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_nodes(e.value)]  # type: ignore[attr-defined]
    if kind is cst.StarredElement:
        return _target_nodes(target.value)  # type: ignore[attr-defined]
    return [target]


def _takes_numbers(call: cst.Call, ctx: "Context") -> bool:
    """A torch factory (sizes), `range(...)`, or a builtin that takes numbers (`int(n / 2)`)."""
    func = call.func
    if type(func) is cst.Name and func.value in _NUMBER_BUILTINS | {"range"} and ctx.is_builtin(func.value):
        return True
    qualified = ctx.resolve(func) or ""
    return qualified.startswith("math.") or qualified.rpartition(".")[2] in TORCH_FACTORIES and qualified.startswith("torch.")


def _bound_only_to_numbers(scope: cst.CSTNode, matches: Callable[[cst.CSTNode], bool]) -> bool:
    """Every `x = value` binding what `matches` picks assigns a literal, a name, an attribute of
    `self` or arithmetic of those (no call but `int(...)`, `len(...)`, `math...`)."""
    for node in code_descendants(scope):
        if type(node) is cst.Assign and any(matches(t.target) for t in node.targets):  # type: ignore[attr-defined]
            if not _syntactically_numeric(node.value):  # type: ignore[attr-defined]
                return False
        elif type(node) is cst.AugAssign and matches(node.target):  # type: ignore[attr-defined]
            if not _syntactically_numeric(node.value):  # type: ignore[attr-defined]
                return False
    return True


def _syntactically_numeric(expr: cst.BaseExpression) -> bool:
    kind = type(expr)
    if kind in (cst.Integer, cst.Float, cst.Name):
        return True
    if kind is cst.Attribute:
        return type(expr.value) is cst.Name  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation:
        return _syntactically_numeric(expr.expression)  # type: ignore[attr-defined]
    if kind is cst.BinaryOperation:
        return _syntactically_numeric(expr.left) and _syntactically_numeric(expr.right)  # type: ignore[attr-defined]
    if kind is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value in _NUMBER_BUILTINS:
            return all(_syntactically_numeric(a.value) for a in expr.args)  # type: ignore[attr-defined]
        return type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "math"
    return False
