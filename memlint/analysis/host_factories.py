"""Tensors made on the host from sizes: the torch factory call (`torch.zeros(n)`, `torch.LongTensor(64)`,
a project helper that returns such a tensor) under a value a move applies to, and what the factory
holds.  Evidence: the calls as written between the move and the factory (casts, reshapes, a
`Variable(...)` wrapper, arithmetic with a number, a concatenation with one such part, a triangle),
the factory resolved through the file's imports, its arguments (a size, not data: a literal, `x.size(i)`,
`len(x)`, `range(n)`; a number by the model's valuation), and the project pass's `makes_host_tensor`
for a helper of this file or another.  ML013 asks it what a `.cuda()` / `.to(d)` moves."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, Optional

import libcst as cst

from memlint.analysis.host_flow import EMPTY, Flow, number_like
from memlint.analysis.precision_api import keyword
from memlint.analysis.project_facts import makes_host_tensor
from memlint.analysis.tables import BUILT_FROM_PARTS, CONCATENATIONS, IN_PLACE_ARITHMETIC, IN_PLACE_FILLS, LEGACY_SIZED_CONSTRUCTORS, SHAPE_METHODS, TENSOR_CASTS
from memlint.analysis.tables import ELEMENTWISE_FUNCTIONS, TORCH_FACTORIES, VARIABLE_CLASSES, WINDOW_FACTORIES
from memlint.analysis.tensor_casts import dtype_cast, type_as_argument
from memlint.analysis.values import Kind, evaluate

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Their values depend on the device's random generator: made on the device, they change.
RANDOM_FACTORIES = frozenset({"rand", "randn", "randint", "randperm"})
# A triangle or a diagonal of a tensor keeps its values exact on any device (a causal mask's `triu`,
# `torch.diag(torch.ones(n))`, an identity mask): a new tensor where its argument is.
_TRIANGLES = frozenset({"triu", "tril", "diag", "diag_embed", "diagflat"})
_TRIANGLE_FUNCTIONS = frozenset({"torch.triu", "torch.tril", "torch.diag", "torch.diag_embed", "torch.diagflat"})
# Sorting a tensor gives new tensors (its values, their indices) where it is: `torch.randint(0, b, (n,)).sort()[0]`
# (`.values`, `torch.sort(t)[0]`) is as much the host's as the draw it sorts.
_ORDERINGS = frozenset({"sort", "msort", "argsort"})
_ORDERING_FUNCTIONS = frozenset({"torch.sort", "torch.msort", "torch.argsort"})
_ORDERING_PARTS = frozenset({"values", "indices"})
# What `factory_under` looks through: the expressions that may hold a host factory on the way to a move.
_WALKED = (cst.Call, cst.BinaryOperation, cst.Subscript, cst.UnaryOperation, cst.Name, cst.Comparison, cst.Attribute)


class HostFactory(NamedTuple):
    """What `factory_under` finds: the factory call, whether `device=` can move into it, and whether
    a local name lay on the way (the factory is in an earlier statement: the finding is there)."""

    call: cst.Call
    fixable: bool
    through_name: bool = False


def factory_under(receiver: cst.BaseExpression, ctx: "Context", flow: Flow = EMPTY) -> Optional[HostFactory]:
    """The factory call a move applies to, looking through dtype casts (`torch.full(...).long()`),
    reshapes (`torch.arange(n).view(-1, 1)`: `tables.SHAPE_METHODS`, same values on any device), the legacy
    `Variable(...)` wrapper, arithmetic with numbers (`host_flow.number_like`; also in place:
    `torch.ones(n).mul_(sigma)`) or with another fresh host tensor, elementwise math (`torch.exp(...)`, `.cos()`) and the local names `flow` says hold a fresh
    host tensor (`n = torch.linspace(0, N, steps=N)` then `0.54 - 0.46 * torch.cos(2 * math.pi * n / N)`);
    and whether `device=` can move into it without changing the result (not through `Variable(x,
    requires_grad=True)`, which makes a leaf of the host tensor; not through math, whose last bits a
    device may round otherwise; not through a name, bound in another statement)."""
    fixable = True
    named = False
    seen = 0
    while isinstance(receiver, _WALKED):
        seen += 1
        if seen > 40:
            return None
        if isinstance(receiver, cst.Name):  # a local name bound to a fresh host tensor earlier in the function
            bound = flow.host.get(receiver.value)
            if bound is None:
                return None
            fixable, named, receiver = False, True, bound
            continue
        if isinstance(receiver, cst.UnaryOperation):  # `-torch.arange(n)`
            receiver = receiver.expression
            continue
        if isinstance(receiver, cst.Attribute):  # `t.sort().values`: a part of the sort's result, where `t` is
            if receiver.attr.value not in _ORDERING_PARTS or _sorted_operand(receiver.value, ctx) is None:
                return None
            receiver = receiver.value
            continue
        if isinstance(receiver, cst.Comparison):  # `torch.eye(n) > .5`: a bool tensor where the compared one is
            side = _compared_operand(receiver, ctx)
            if side is None:
                return None
            receiver = side
            continue
        if isinstance(receiver, cst.Subscript):  # `torch.eye(d)[None, :, :]`, `torch.eye(n)[labels]`: a part of the host tensor, still on the host
            fixable = False  # an index computed on the host may not index the device tensor as written
            receiver = receiver.value
            continue
        if isinstance(receiver, cst.BinaryOperation):  # `(torch.rand(n) * 2 - 1).to(d)`: arithmetic with a number
            side = _host_operand(receiver, ctx, flow)
            if side is None:
                return None
            receiver, exact = side
            fixable = fixable and exact
            continue
        func = receiver.func
        if isinstance(func, cst.Attribute) and func.attr.value in TENSOR_CASTS and not receiver.args:
            receiver = func.value
            continue
        if type_as_argument(receiver) is not None or dtype_cast(receiver, ctx):  # `.type_as(attn).to(attn.device)`, `.type(torch.int)`: a cast on the way
            receiver = func.value
            continue
        joins = ctx.resolve(func)
        if joins in BUILT_FROM_PARTS:  # `torch.stack([zeros, ones], -1)`, `torch.meshgrid(torch.arange(h), torch.arange(w))`: all host parts
            part = _first_of_host_parts(receiver, ctx, flow)
            if part is None and joins in CONCATENATIONS:  # `torch.cat((torch.zeros(b, 1), batch), 1).to(d)`: the part a factory makes goes with the whole
                part = _factory_part(receiver, ctx)
            if part is None:
                return None
            fixable = False  # the other parts are on the host too: they need their own move
            receiver = part
            continue
        if ctx.resolve(func) in _TRIANGLE_FUNCTIONS:  # `torch.triu(torch.ones(n, n), diagonal=1)`: a causal mask; `torch.diag(torch.ones(n))`
            if not receiver.args or receiver.args[0].keyword is not None or receiver.args[0].star:
                return None
            receiver = receiver.args[0].value
            continue
        inner = _sorted_operand(receiver, ctx)
        if inner is not None:  # `torch.randint(0, b, (n,)).sort()[0]`: sorted where it was drawn
            fixable = False
            receiver = inner
            continue
        inner = _elementwise_argument(receiver, ctx, flow)
        if inner is not None:  # `torch.exp(torch.arange(h) * -c)`, `t.cos()`: a new tensor where its argument is
            fixable = False
            receiver = inner
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in SHAPE_METHODS | _TRIANGLES:  # `.view(-1, 1)`, `.unsqueeze(0)`, `.triu(1)`
            receiver = func.value
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in IN_PLACE_ARITHMETIC:  # `torch.ones(n).mul_(sigma / 255.)`: with a number
            exact = _in_place_number(receiver, ctx, flow)
            if exact is None:
                return None
            fixable = fixable and exact
            receiver = func.value
            continue
        if isinstance(func, cst.Attribute) and func.attr.value in IN_PLACE_FILLS:  # `torch.FloatTensor(n).zero_()`
            fixable = False  # the fill would have to move into a different factory
            receiver = func.value
            continue
        if ctx.resolve(func) in VARIABLE_CLASSES and receiver.args and receiver.args[0].keyword is None and not receiver.args[0].star:
            fixable = fixable and len(receiver.args) == 1
            receiver = receiver.args[0].value
            continue
        return HostFactory(receiver, fixable, named)
    return None


def _host_operand(operation: cst.BinaryOperation, ctx: "Context", flow: Flow) -> Optional[tuple[cst.BaseExpression, bool]]:
    """The operand of `a <op> b` that holds the host tensor, the other being a number, and whether
    that number is certain (a literal, the model's valuation: `device=` can then move into the
    factory); or either operand when both hold a fresh host tensor (`torch.ones(n, n) - mask`).
    None when the other operand may be any tensor: its placement is unknown."""
    left, right = operation.left, operation.right
    for number, other in ((right, left), (left, right)):
        if _numeric(number, ctx):
            return other, True
    holds = [side for side in (left, right) if holds_factory(side, ctx, flow)]
    if len(holds) == 2:
        return left, False
    if len(holds) == 1:
        other = right if holds[0] is left else left
        if number_like(other, ctx, flow):
            return holds[0], False
    return None


def _compared_operand(comparison: cst.Comparison, ctx: "Context") -> Optional[cst.BaseExpression]:
    """The tensor of `t > .5` / `0 == t` (one comparison, with a number: `_numeric`), whose result,
    a bool tensor, is made where `t` is; None for a comparison of two tensors or of a chain."""
    if len(comparison.comparisons) != 1:
        return None
    target = comparison.comparisons[0]
    if isinstance(target.operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
        return None
    left, right = comparison.left, target.comparator
    if _numeric(right, ctx):
        return left
    return right if _numeric(left, ctx) else None


def _sorted_operand(call: cst.BaseExpression, ctx: "Context") -> Optional[cst.BaseExpression]:
    """The tensor `t.sort()`, `t.argsort(dim=0)`, `torch.sort(t, descending=True)` orders, when every
    other argument is a literal (a dimension, a direction): the sorted values and the indices are
    new tensors where `t` is.  None for anything else."""
    if not isinstance(call, cst.Call):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in _ORDERINGS and not _is_module(func.value, ctx):
        operand, rest = func.value, call.args
    elif ctx.resolve(func) in _ORDERING_FUNCTIONS and call.args and call.args[0].keyword is None and not call.args[0].star:
        operand, rest = call.args[0].value, call.args[1:]
    else:
        return None
    if any(a.star or not _literal_option(a.value) for a in rest):
        return None
    return operand


def _literal_option(expr: cst.BaseExpression) -> bool:
    """`0`, `-1`, `True`: a dimension or a flag written as a literal."""
    return _is_number(expr) or (isinstance(expr, cst.Name) and expr.value in ("True", "False"))


def _in_place_number(call: cst.Call, ctx: "Context", flow: Flow) -> Optional[bool]:
    """Is the one argument of `t.mul_(n)` (`tables.IN_PLACE_ARITHMETIC`) a number, and a certain one
    (True: a literal, the model's valuation, as `_host_operand` asks of `t * n`; False: a number by
    the function's flow only)?  None for anything else (a tensor operand, a keyword: `add_(x, alpha=2)`)."""
    if len(call.args) != 1 or call.args[0].keyword is not None or call.args[0].star:
        return None
    number = call.args[0].value
    if _numeric(number, ctx):
        return True
    return False if number_like(number, ctx, flow) else None


def _elementwise_argument(call: cst.Call, ctx: "Context", flow: Flow) -> Optional[cst.BaseExpression]:
    """The tensor `torch.exp(t)` / `t.cos()` / `torch.pow(t, 2)` computes on, when every other
    argument is a number: the result is a new tensor on `t`'s device."""
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in ELEMENTWISE_FUNCTIONS and not _is_module(func.value, ctx):
        operand, rest = func.value, call.args  # `t.cos()`, `t.pow(2)`
    else:
        qualified = ctx.resolve(func) or ""
        module, _, name = qualified.rpartition(".")
        if module != "torch" or name not in ELEMENTWISE_FUNCTIONS or not call.args or call.args[0].keyword is not None or call.args[0].star:
            return None
        operand, rest = call.args[0].value, call.args[1:]
    if any(a.star or not number_like(a.value, ctx, flow) for a in rest):
        return None
    return operand


def _is_module(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """`torch` of `torch.exp(...)`, `math` of `math.cos(...)`: a module, not a tensor."""
    return isinstance(expr, cst.Name) and (ctx.resolve(expr) or "").split(".")[0] in ("torch", "math", "numpy", "np")


def _first_of_host_parts(call: cst.Call, ctx: "Context", flow: Flow) -> Optional[cst.BaseExpression]:
    """The first tensor of `torch.stack([a, b], -1)`, `torch.cat((a, b))` or `torch.meshgrid(a, b)`
    (`tables.BUILT_FROM_PARTS`; also of one sequence they take: `torch.stack(torch.meshgrid(a, b))`)
    when every tensor it takes holds a fresh host tensor (`holds_factory`): the result is made on
    the host, where its parts are.  None when a part may be anything else."""
    positional = [a for a in call.args if a.keyword is None]
    if not positional or any(a.star for a in positional):
        return None
    if ctx.resolve(call.func) == "torch.meshgrid" and len(positional) > 1:
        parts = [a.value for a in positional]  # `torch.meshgrid(a, b, indexing="ij")`
    else:
        first = positional[0].value  # the others are a dimension
        if isinstance(first, (cst.Tuple, cst.List)):
            if any(isinstance(e, cst.StarredElement) for e in first.elements):
                return None
            parts = [e.value for e in first.elements]
        else:
            parts = [first]  # a sequence of tensors: `torch.meshgrid(...)`'s grids, a host tensor's rows
    if not parts or not all(holds_factory(part, ctx, flow) for part in parts):
        return None
    return parts[0]


def _factory_part(concatenation: cst.Call, ctx: "Context") -> Optional[cst.BaseExpression]:
    """The one part of `torch.cat((a, b, ...))` that a torch size factory makes (`factory_under`),
    when there is exactly one; None otherwise."""
    if not concatenation.args or concatenation.args[0].keyword is not None or concatenation.args[0].star:
        return None
    parts = concatenation.args[0].value
    if not isinstance(parts, (cst.Tuple, cst.List)):
        return None
    made = []
    for element in parts.elements:
        value = element.value
        if isinstance(element, cst.StarredElement) or not isinstance(value, (cst.Call, cst.BinaryOperation, cst.Subscript)):
            continue
        found = factory_under(value, ctx)
        if found is not None and factory_kind(found[0], ctx) is not None:
            made.append(value)
    return made[0] if len(made) == 1 else None


def factory_kind(factory: cst.Call, ctx: "Context") -> Optional[str]:
    """The torch size factory `factory` calls ("zeros"), or a legacy typed constructor called with sizes
    ("FloatTensor": two or more sizes, or one integer literal or `x.size(i)` / `len(x)`; one other
    argument may be data, as in `torch.FloatTensor(rewards)`), or the project's helper that returns a
    tensor it has just made on the host, as written and called ("causal_mask()":
    `project_facts.makes_host_tensor`, here or in another file); None for anything else."""
    helper = makes_host_tensor(factory, ctx)
    if helper is not None:
        return f"{helper}()"
    qualified = ctx.resolve(factory.func)
    if qualified is None or qualified.rpartition(".")[0] != "torch":
        return None
    name = qualified.rpartition(".")[2]
    if name in TORCH_FACTORIES:
        return name
    if name not in LEGACY_SIZED_CONSTRUCTORS or not factory.args or any(a.keyword is not None or a.star == "**" for a in factory.args):
        return None
    if any(a.star for a in factory.args):  # `torch.FloatTensor(*x.shape)`: a tensor's sizes spread out
        return name if len(factory.args) == 1 and _spreads_shape(factory.args[0].value) else None
    values = [a.value for a in factory.args]
    if len(values) == 1 and counts_range(values[0], ctx):  # `torch.LongTensor(range(n))`, `torch.LongTensor([range(n)])`
        return name
    if any(isinstance(v, (cst.List, cst.Tuple, cst.ListComp, cst.GeneratorExp, cst.SimpleString)) for v in values):
        return None
    if len(values) >= 2 or is_size(values[0]):
        return name
    return None


def from_helper(name: str) -> bool:
    """Is `name` (`factory_kind`'s) a project helper's, "causal_mask()", rather than torch's?"""
    return name.endswith("()")


def _spreads_shape(expr: cst.BaseExpression) -> bool:
    """`x.shape`, `x.size()`: a tensor's sizes, numbers when spread into a legacy constructor."""
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "shape"
    return isinstance(expr, cst.Call) and not expr.args and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size"


def counts_range(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """`range(n)`: the numbers an `arange` makes, not data (`torch.LongTensor(range(L))`); also a
    literal list or tuple of one such range, `[range(n)]`, the same numbers as one row (a `1 x n`
    tensor: face.evoLVe's prototype labels)."""
    if isinstance(expr, (cst.List, cst.Tuple)) and len(expr.elements) == 1 and isinstance(expr.elements[0], cst.Element):
        expr = expr.elements[0].value
    return (
        isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "range"
        and ctx.is_builtin("range") and all(a.keyword is None and not a.star for a in expr.args)
    )  # fmt: skip


def is_size(expr: cst.BaseExpression) -> bool:
    """`64`, `x.size(0)`, `x.size()`, `len(batch)`, `x.size() + (n,)` (a `torch.Size` joined with a
    tuple is a `torch.Size`): certainly a size, not data."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add) and isinstance(expr.right, cst.Tuple):
        return _spreads_shape(expr.left)  # `x.shape` / `x.size()`
    if isinstance(expr, cst.Integer):
        return True
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "size":
        return True  # `x.size(0)` a number; `x.size()` a `torch.Size`, which legacy constructors take as sizes (a tuple they take as data)
    return isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and expr.func.value == "len"


def _host_number(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """A Python number by the model's valuation (`L` of `B, H, L, D = v.shape`, `len(x)`): arithmetic
    with it keeps the tensor on the host, as a literal does."""
    return evaluate(expr, ctx).kind is Kind.NUMBER


# Calls that return a Python int: the process's place in a distributed run (`N * get_rank()`, the
# offset of a rank's labels in a gathered batch).
_COUNT_CALLS = frozenset({"torch.distributed.get_rank", "torch.distributed.get_world_size"})


def _numeric(expr: cst.BaseExpression, ctx: "Context") -> bool:
    """A Python number: a literal, a number by the model's valuation, the rank or world size of a
    distributed run, or arithmetic of such numbers (`N * torch.distributed.get_rank()`, moco-v3's
    label offset).  Arithmetic with it keeps a tensor on the host."""
    if _is_number(expr) or _host_number(expr, ctx):
        return True
    if isinstance(expr, cst.BinaryOperation):
        return _numeric(expr.left, ctx) and _numeric(expr.right, ctx)
    if isinstance(expr, cst.Call) and not expr.args:
        return ctx.resolve(expr.func) in _COUNT_CALLS
    return False


def _is_number(expr: cst.BaseExpression) -> bool:
    """`2`, `1.0`, `-1`: arithmetic with it keeps the tensor where it is, its shape and (for these
    float factories) its dtype."""
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, (cst.Integer, cst.Float))


def made_on_host(factory: cst.Call, name: str) -> bool:
    """Does the factory `name` (`factory_kind`'s) make its tensor on the host, with something in it to
    copy?  No `device=` of its own, no `**kwargs` (they may hold one), not `holds_nothing`."""
    if keyword(factory, "device") is not None or any(a.star == "**" for a in factory.args):
        return False
    return not holds_nothing(factory, "empty" if name in LEGACY_SIZED_CONSTRUCTORS else name)


def holds_nothing(factory: cst.Call, name: str) -> bool:
    """`torch.empty(0)`, `torch.zeros((0, 4))`, `torch.arange(0)`: a size with a literal 0 in it,
    nothing to copy."""
    positional = [a.value for a in factory.args if a.keyword is None]
    sizes = [a.value for a in factory.args if a.keyword is not None and a.keyword.value in ("size", "steps", "n")]
    if name in ("zeros", "ones", "empty", "rand", "randn"):
        sizes += positional
    elif name in ("full", "eye", "randperm") or name in WINDOW_FACTORIES or (name == "arange" and len(positional) == 1):
        sizes += positional[:1]
    elif name == "randint":
        sizes += positional[-1:]
    elif name in ("linspace", "logspace"):
        sizes += positional[2:3]
    for value in sizes:
        elements = [e.value for e in value.elements] if isinstance(value, (cst.Tuple, cst.List)) else [value]
        if any(isinstance(e, cst.Integer) and e.evaluated_value == 0 for e in elements):
            return True
    return False


def same_values_on_device(factory: cst.Call, name: str) -> bool:
    """Do the device's kernels compute exactly the CPU's values?  Not for the random factories
    (`RANDOM_FACTORIES`: the device's generator draws other numbers for the same seed).  Zeros, ones, `full` and `eye` are
    exact; `arange(end)` and `arange(start, end)` count in steps of 1 (exact); a step other than 1,
    `linspace` and `logspace` multiply and add (or raise to a power) in floating point, which a GPU
    compiler may fuse or round differently than the CPU's kernel: the last bit can change."""
    if name in RANDOM_FACTORIES:
        return False
    if name in ("linspace", "logspace") or name in WINDOW_FACTORIES:  # cosines: the last bit may differ
        return False
    if name == "arange":
        positional = [a.value for a in factory.args if a.keyword is None]
        given = keyword(factory, "step")
        step = positional[2] if len(positional) > 2 else (given.value if given is not None else None)
        return step is None or (isinstance(step, cst.Integer) and all(isinstance(v, cst.Integer) for v in positional))
    return True


def holds_factory(value: cst.BaseExpression, ctx: "Context", flow: Flow = EMPTY) -> bool:
    """Does `value` (a call, arithmetic, an index or a name `flow` knows) hold a tensor a factory made
    on the host (`factory_under`, `factory_kind`)?  A cheap test for `moves.later_moves`'s bindings."""
    if not isinstance(value, _WALKED):
        return False
    # Kept per node and flow: `factory_under` asks it of every part of a stack, then walks the first
    # part itself, so nested stacks (and sums of fresh tensors) would cost twice per level unkept.
    kept = ctx.memo(("holds-factory", id(value), id(flow)), lambda: (value, flow, _holds_factory(value, ctx, flow)))
    if kept[0] is value and kept[1] is flow:  # type: ignore[index]
        return kept[2]  # type: ignore[index]
    return _holds_factory(value, ctx, flow)  # an id reused by a newer flow: not kept


def _holds_factory(value: cst.BaseExpression, ctx: "Context", flow: Flow) -> bool:
    found = factory_under(value, ctx, flow)
    return found is not None and factory_kind(found.call, ctx) is not None


# Factory keywords that `device=` can join without changing the result.
_COMPATIBLE_KEYWORDS = frozenset({"dtype", "size"})


def device_keyword_joins(factory: cst.Call) -> bool:
    """Can `device=` join the factory's keywords without changing its result?  Only `dtype` and
    `size` beside it: `requires_grad=True` would change which tensor is the leaf, `generator=` is
    a CPU generator."""
    return all(a.keyword is None or a.keyword.value in _COMPATIBLE_KEYWORDS for a in factory.args)
