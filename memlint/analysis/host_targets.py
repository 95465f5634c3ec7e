"""Where the tensor that a move follows lives, when its function shows it is the host.

`t.type_as(x)`, `t.to(x.device)` and `t.to(x)` send `t` to `x`'s device: a copy to the accelerator
when `x` is on one, nothing at all when `x` is a host tensor (annotated-transformer's
`inference_test`: `src = torch.LongTensor([[1, 2, 3]])`, then `torch.zeros(1, 1).type_as(src)` in
its decoding loop only casts the dtype).  `follows_host_tensor(device, ctx)` answers "is `x` here
known to be on the host?" for the device of such a move (`device_targets.destination`'s `x.device`).

Evidence, all in the function that holds the move: `x` (through `.data`, `.detach()` and casts or
reshapes that keep a tensor where it is) is a local name, not a parameter nor declared `global` /
`nonlocal`, and every binding of it in the function (nested code included) is `x = <a host
construction>`: a torch size factory without `device=` (`torch.zeros(n)`, `torch.arange(n)`), a
legacy typed constructor (`torch.LongTensor(...)`) given sizes or literal numbers, `torch.tensor` /
`torch.as_tensor` of literal numbers without `device=`, or `torch.from_numpy(a)`; maybe cast or
filled in place (`.long()`, `.fill_(0)`).  Nothing sets an attribute of it (`x.data = x.data.cuda()`).
Since Python makes a name bound anywhere in a function local to all of it, every read of `x` then
sees one of those host tensors: a later `x.cuda()` that binds nothing leaves `x` where it is, and a
later `x = x.cuda()` is a binding of another kind, which makes the answer "unknown".  A file that
changes torch's default device (`torch.set_default_device`, `torch.set_default_tensor_type`,
`with torch.device(...)`) gets no answer: its factories may build on the accelerator.

Or `x` is a parameter of a plain module-level `def` of a module no other file imports (nor reads
by reflection: `script_globals.module_names_private`), whose name the file reads only as the callee
of calls made inside functions, each giving the parameter (by position or keyword) a name that is
such a local host tensor of its caller; nothing in the function binds the parameter again.

Anything else (another parameter, an attribute, a batch) is unknown: the rules keep their behaviour.
ML013 asks it (a host factory moved to a host tensor's device moves nothing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, exact_names_bound_by, target_names
from memlint.analysis.precision_api import keyword
from memlint.analysis.script_globals import module_names_private
from memlint.analysis.tables import IN_PLACE_FILLS, LEGACY_SIZED_CONSTRUCTORS, TORCH_FACTORIES
from memlint.analysis.walk import code_descendants, dotted_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods that return the tensor where it already is: casts, reshapes, detaching, in-place fills.
_KEEP_PLACE = frozenset({
    "float", "double", "long", "int", "half", "bfloat16", "bool", "byte", "contiguous", "view", "reshape",
    "squeeze", "unsqueeze", "permute", "transpose", "t", "clone", "detach", "flatten", "expand", "repeat",
}) | IN_PLACE_FILLS  # fmt: skip
# torch functions that build a tensor from data: on the host unless `device=` says otherwise, when
# the data are literal numbers (a tensor given as data would keep its own device).
_DATA_CONSTRUCTORS = frozenset({"tensor", "as_tensor"})
_DEFAULT_DEVICE_SETTERS = frozenset({"set_default_device", "set_default_tensor_type"})


def follows_host_tensor(device: cst.BaseExpression, ctx: "Context") -> bool:
    """Is `device`, the `x.device` a move follows (`.type_as(x)`, `.to(x.device)`, `.to(x)`), the
    device of a tensor its function builds on the host?  See the module's docstring."""
    if type(device) is not cst.Attribute or device.attr.value != "device":
        return False
    function = ctx.function_node
    root = _tensor_root(device.value)
    if function is None or root is None:
        return False
    answer = ctx.remember(
        "host target", root, lambda: _local_host_tensor(root.value, function, ctx) or _given_host_tensors(root.value, function, ctx)
    )
    return bool(answer)


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
        if kind is cst.Assign and any(_sets_attribute_of(t.target, name) for t in node.targets):
            return False  # `x.data = x.data.cuda()`
        targets = bound_by(node, parameters=True, declarations=True)
        if not targets or not any(name in target_names(t) or _sets_attribute_of(t, name) for t in targets):
            continue
        if kind is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
            return False  # a parameter, a loop's target, a `global`, an unpacking, `x += ...`: unknown
        if not _built_on_host(node.value, ctx):
            return False
        bound = True
    return bound and not ctx.memo("default device changed", lambda: _changes_default_device(ctx.module, ctx))


def _given_host_tensors(name: str, function: cst.FunctionDef, ctx: "Context") -> bool:
    """Is `name` a parameter of `function`, a plain module-level `def` of a module whose names only
    its own code reads (`script_globals.module_names_private`), that every call in the file gives a
    local host tensor of the calling function (`_local_host_tensor` there)?  The function's name is
    read nowhere but as the callee of those calls (not passed on, not bound again, not an
    attribute), each call is inside a function and gives the parameter by position or keyword
    (no `*args`, no default left to fill it), and nothing in `function` binds the parameter again."""
    if function.decorators or not any(s is function for s in ctx.module.body) or not module_names_private(ctx):
        return False
    params = function.params
    position = next((i for i, p in enumerate((*params.posonly_params, *params.params)) if p.name.value == name), None)
    if position is None and not any(p.name.value == name for p in params.kwonly_params):
        return False
    if sum(name in exact_names_bound_by(node, parameters=True, declarations=True) for node in code_descendants(function)) != 1:
        return False  # bound again (or by a nested function's parameter): unknown
    calls = ctx.memo(("calls by name", function.name.value), lambda: _calls_of(function.name.value, ctx.module))
    if not calls:
        return False
    for call, caller in calls:  # type: ignore[attr-defined]
        given = _argument(call, name, position)
        if caller is None or caller is function or type(given) is not cst.Name or not _local_host_tensor(given.value, caller, ctx):
            return False
    return True


def _calls_of(callee: str, module: cst.Module) -> list[tuple[cst.Call, Optional[cst.FunctionDef]]]:
    """Each `callee(...)` of the module with the module-level function or method that holds it (None
    at module level); empty where the module reads the name `callee` otherwise, or defines it twice."""
    mentions = sum(type(node) is cst.Name and node.value == callee for node in code_descendants(module))
    calls: list[tuple[cst.Call, Optional[cst.FunctionDef]]] = []
    for statement in module.body:
        holders = [statement] if type(statement) is cst.FunctionDef else []
        if type(statement) is cst.ClassDef:
            holders = [s for s in statement.body.body if type(s) is cst.FunctionDef]
        for holder in holders or [statement]:
            for node in code_descendants(holder):
                if type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == callee:
                    calls.append((node, holder if holders else None))
    return calls if mentions == len(calls) + 1 else []  # the calls and the `def`'s own name, nothing else


def _argument(call: cst.Call, name: str, position: Optional[int]) -> Optional[cst.BaseExpression]:
    """What `call` gives the parameter `name` (at `position`, None if keyword-only), as written."""
    if any(a.star for a in call.args):
        return None
    named = keyword(call, name)
    if named is not None:
        return named.value
    positional = [a.value for a in call.args if a.keyword is None]
    return positional[position] if position is not None and position < len(positional) else None


def _sets_attribute_of(target: cst.BaseExpression, name: str) -> bool:
    return type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == name


def _built_on_host(value: cst.BaseExpression, ctx: "Context") -> bool:
    """A host construction (see the module's docstring), maybe cast or filled in place."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _KEEP_PLACE:
        value = value.func.value
    if type(value) is not cst.Call or any(a.star == "**" for a in value.args) or keyword(value, "device") is not None:
        return False
    qualified = ctx.resolve(value.func)
    if qualified is None or qualified.rpartition(".")[0] != "torch":
        return False
    name = qualified.rpartition(".")[2]
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    if name == "from_numpy":
        return True
    if name in TORCH_FACTORIES:
        return True  # sizes, spread or not: the factory builds on the default device, the host
    if name in _DATA_CONSTRUCTORS:
        return len(positional) >= 1 and _literal_numbers(positional[0])
    if name in LEGACY_SIZED_CONSTRUCTORS:
        return bool(positional) and len(positional) == len(value.args) and all(_literal_numbers(v) or _size(v) for v in positional)
    return False


def _literal_numbers(expr: cst.BaseExpression) -> bool:
    """`[[1, 2], [3, 4]]`, `(0.5, -1)`, `3`: numbers written in the code, never a tensor."""
    if type(expr) in (cst.List, cst.Tuple):
        return all(not getattr(e, "star", None) and _literal_numbers(e.value) for e in expr.elements)
    if type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus:
        return _literal_numbers(expr.expression)
    return type(expr) in (cst.Integer, cst.Float)


def _size(expr: cst.BaseExpression) -> bool:
    """`x.size(0)`, `len(x)`, `n`-free sizes: a legacy constructor given a size builds an empty host tensor."""
    if type(expr) is cst.Call:
        callee = dotted_name(expr.func) or ""
        return callee == "len" or callee.endswith(".size")
    return False


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
