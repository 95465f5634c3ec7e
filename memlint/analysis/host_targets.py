"""Where the tensor that a move follows lives, when its function shows it is the host.

`t.type_as(x)`, `t.to(x.device)` and `t.to(x)` send `t` to `x`'s device: a copy to the accelerator
when `x` is on one, nothing at all when `x` is a host tensor (annotated-transformer's
`inference_test`: `src = torch.LongTensor([[1, 2, 3]])`, then `torch.zeros(1, 1).type_as(src)` in
its decoding loop only casts the dtype).  `follows_host_tensor(device, ctx)` answers "is `x` here
known to be on the host?" for the device of such a move (`device_targets.destination`'s `x.device`).

Evidence, all in the function that holds the move: `x` (through `.data`, `.detach()` and casts or
reshapes that keep a tensor where it is) is a local name, not a parameter nor declared `global` /
`nonlocal`, and every binding of it in the function (nested code included) is `x = <a host
construction>`, one that is on the host whatever torch's default device is (another file may set
it: `torch.set_default_tensor_type('torch.cuda.FloatTensor')` makes `torch.ones(3)` a device
tensor): a legacy typed constructor (`torch.LongTensor(...)`) given sizes or literal numbers,
`torch.from_numpy(a)`, a torch factory or data constructor given `device="cpu"` /
`torch.device("cpu")`, or `y.cpu()`; maybe cast or filled in place (`.long()`, `.fill_(0)`).  A size
factory or `torch.tensor` without `device=` follows the default device: unknown; `out=` too.

And every other use of the name is a read that can neither move the tensor nor hand it to code
that could (`x.data = ...` through a tuple, `setattr`, an alias, a helper): the move's own target,
an operand of arithmetic or a comparison, a subscript's base, an argument of a torch function or
of a call whose result the code uses, the receiver of a tensor method (not `set_`), `x.device` /
`x.shape` / `x.dtype`; each maybe through `.data`.  A use of any other kind (an argument of a call
made for its effect alone, `alias = x`, a target of any assignment, a function that calls
`exec` / `eval` / `vars` / `locals`) makes the answer "unknown".  A file that changes torch's
default device (`torch.set_default_device`, `torch.set_default_tensor_type`, `with
torch.device(...)`) gets no answer either.

Anything else (a parameter, an attribute, a batch) is unknown: the rules keep their behaviour.
ML013 asks it (a host factory moved to a host tensor's device moves nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, target_names
from memlint.analysis.precision_api import keyword
from memlint.analysis.host_factories import is_size
from memlint.analysis.model import names_cpu
from memlint.analysis.tables import IN_PLACE_FILLS, LEGACY_SIZED_CONSTRUCTORS, SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES
from memlint.analysis.walk import code_descendants, dotted_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods that return the tensor where it already is: casts, reshapes, detaching, in-place fills.
_KEEP_PLACE = TENSOR_CASTS | SHAPE_METHODS | IN_PLACE_FILLS | {"detach"}
# torch functions that build a tensor from data: on the default device unless `device=` says otherwise.
_DATA_CONSTRUCTORS = frozenset({"tensor", "as_tensor"})
_DEFAULT_DEVICE_SETTERS = frozenset({"set_default_device", "set_default_tensor_type"})
# Attributes whose value is not the tensor: reading them hands nothing on.
_METADATA = frozenset({"device", "dtype", "shape", "is_cuda", "ndim", "requires_grad"})
# Builtins that reach a function's names by their spelling: any of them makes every answer unknown.
_REFLECTION = frozenset({"exec", "eval", "vars", "locals", "globals", "setattr", "getattr", "delattr"})
# The one tensor method that replaces a tensor's storage (and so may change its device) in place.
_REPLACES_STORAGE = frozenset({"set_"})


def follows_host_tensor(device: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `device`, the `x.device` a move follows (`.type_as(x)`, `.to(x.device)`, `.to(x)`), the
    device of a tensor its function builds on the host?  See the module's docstring."""
    if type(device) is not cst.Attribute or device.attr.value != "device":
        return False
    function = ctx.function_node
    root = _tensor_root(device.value)
    if function is None or root is None:
        return False
    # one answer per (name, function): every move in a long function asks the same question
    key = ("host target", root.value, id(function))
    return bool(ctx.memo(key, lambda: (function, _local_host_tensor(root.value, function, ctx)))[1])  # type: ignore[index]


def _tensor_root(expr: cst.BaseExpression) -> Optional[cst.Name]:
    """`x` of `x`, `x.data`, `x.detach()`, `x.data.long()`: the name whose tensor keeps its place."""
    while True:
        if type(expr) is cst.Name:
            return expr
        if type(expr) is cst.Attribute and expr.attr.value == "data":
            expr = expr.value
        elif type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _KEEP_PLACE:
            expr = expr.func.value
        else:
            return None


def _local_host_tensor(name: str, function: cst.FunctionDef, ctx: "Context") -> bool:
    bound = False
    for node in code_descendants(function):
        kind = type(node)
        if kind is cst.Assign and any(_mentions(t.target, name) and type(t.target) is not cst.Name for t in node.targets):
            return False  # `x.data = ...`, `x.data, b = ...`, `[x.data] = ...`
        if kind in (cst.AugAssign, cst.AnnAssign, cst.Del) and _mentions(node.target, name):
            return False
        if kind is cst.For and _mentions(node.target, name):
            return False
        targets = bound_by(node, parameters=True, declarations=True)
        if not targets or not any(name in target_names(t) for t in targets):
            continue
        if kind is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            return False  # a parameter, a loop's target, a `global`, an unpacking, `x += ...`: unknown
        if not _built_on_host(node.value, ctx):
            return False
        bound = True
    if not bound or not _only_read(name, function, ctx):
        return False
    return not ctx.memo("default device changed", lambda: _changes_default_device(ctx.module, ctx))


def _mentions(target: cst.BaseExpression, name: str) -> bool:
    return (type(target) is cst.Name and target.value == name) or any(
        type(n) is cst.Name and n.value == name for n in code_descendants(target)
    )


def _only_read(name: str, function: cst.FunctionDef, ctx: "Context") -> bool:
    """Is every use of `name` in `function` a read that can neither move its tensor nor hand it to
    code that could?  (See the module's docstring.)  The binding `name = ...` itself counts as read."""
    safe: set[int] = set()  # ids of the `Name` nodes whose use is harmless
    skip: set[int] = set()  # ids of `Name` nodes that are not the variable (`a.name`, `f(name=...)`)
    effect_calls: set[int] = set()  # calls made for their effect alone (`helper(x)` as a statement)

    def read(expr: cst.BaseExpression) -> None:
        while type(expr) is cst.Attribute and expr.attr.value == "data":
            expr = expr.value
        if type(expr) is cst.Name and expr.value == name:
            safe.add(id(expr))

    nodes = list(code_descendants(function))
    for node in nodes:
        kind = type(node)
        if kind is cst.Expr and type(node.value) is cst.Call:
            effect_calls.add(id(node.value))
    for node in nodes:
        kind = type(node)
        if kind is cst.Attribute:
            skip.add(id(node.attr))
            if node.attr.value in _METADATA:
                read(node.value)
        elif kind is cst.Arg and node.keyword is not None:
            skip.add(id(node.keyword))
        elif kind is cst.Assign and len(node.targets) == 1:
            read(node.targets[0].target)  # `x = <host>` (any other binding was refused already)
        elif kind is cst.BinaryOperation:
            read(node.left)
            read(node.right)
        elif kind is cst.UnaryOperation:
            read(node.expression)
        elif kind is cst.Comparison:
            read(node.left)
            for comparison in node.comparisons:
                read(comparison.comparator)
        elif kind is cst.Subscript:
            read(node.value)
        elif kind is cst.Call:
            callee = dotted_name(node.func) or ""
            if callee in _REFLECTION or callee.endswith("__setattr__"):
                return False
            if type(node.func) is cst.Attribute and node.func.attr.value not in _REPLACES_STORAGE and not node.func.attr.value.startswith("__"):
                read(node.func.value)  # `x.long()`, `x.data.cuda()`: a new value, `x` stays where it is
            qualified = ctx.resolve(node.func) or ""
            if qualified.startswith("torch.") or id(node) not in effect_calls:
                for arg in node.args:
                    read(arg.value)
    return all(id(n) in safe or id(n) in skip for n in nodes if type(n) is cst.Name and n.value == name)


def _built_on_host(value: cst.BaseExpression, ctx: "Context") -> bool:
    """A host construction (see the module's docstring), maybe cast or filled in place."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _KEEP_PLACE:
        value = value.func.value
    if type(value) is not cst.Call or any(a.star == "**" for a in value.args) or keyword(value, "out") is not None:
        return False
    if type(value.func) is cst.Attribute and value.func.attr.value == "cpu" and not value.args:
        return True  # `y.cpu()`: a host copy, wherever `y` was
    qualified = ctx.resolve(value.func)
    if qualified is None or qualified.rpartition(".")[0] != "torch":
        return False
    name = qualified.rpartition(".")[2]
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    device = keyword(value, "device")
    if name == "from_numpy":
        return device is None
    if name in TORCH_FACTORIES or name in _DATA_CONSTRUCTORS:
        return device is not None and names_cpu(device.value, ctx)  # without it: the default device
    if name in LEGACY_SIZED_CONSTRUCTORS:
        return (
            device is None and bool(positional) and len(positional) == len(value.args)
            and all(_literal_numbers(v) or is_size(v) for v in positional)
        )  # fmt: skip
    return False


def _literal_numbers(expr: cst.BaseExpression) -> bool:
    """`[[1, 2], [3, 4]]`, `(0.5, -1)`, `3`: numbers written in the code, never a tensor."""
    if type(expr) in (cst.List, cst.Tuple):
        return all(not getattr(e, "star", None) and _literal_numbers(e.value) for e in expr.elements)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        return _literal_numbers(expr.expression)
    return type(expr) in (cst.Integer, cst.Float)


def _changes_default_device(module: cst.Module, ctx: "Context") -> bool:
    """Does the file set torch's default device or tensor type, or build under `with torch.device(...)`?"""
    for node in code_descendants(module):
        if type(node) is cst.Call:
            callee = dotted_name(node.func) or ""
            if callee.rpartition(".")[2] in _DEFAULT_DEVICE_SETTERS:
                return True
        elif type(node) is cst.WithItem and type(node.item) is cst.Call and (dotted_name(node.item.func) or "").endswith("device"):
            return True
    return False
