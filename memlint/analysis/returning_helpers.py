"""Functions of the file that can pass on what they are handed only through their return value.

A rollout hands the values it collected to a helper that computes returns from them:

    def compute_gae(next_value, rewards, masks, values, gamma=0.99, tau=0.95):
        values = values + [next_value]
        gae = 0
        returns = []
        for step in reversed(range(len(rewards))):
            delta = rewards[step] + gamma * values[step + 1] * masks[step] - values[step]
            gae = delta + gamma * tau * masks[step] * gae
            returns.insert(0, gae + values[step])
        return returns

Whatever of `values` the helper keeps, it keeps in what it returns: the call is a use of the argument
as the call's result is used (`returns = compute_gae(..., values)` then `torch.cat(returns).detach()`),
as if the body were written in place.  Evidence, all of it required, so the body can neither
backpropagate, nor store, nor hand on anything but through `return`:

- the callee is a module-level `def` the file binds once, anywhere in it (under an `if` or `try`
  too: `bindings.module_bindings`), not decorated (calling_helpers), and the calling function does
  not bind the name itself (a parameter or local of that name is another function);
- its body has no nested function, class, lambda, `global`/`nonlocal`, `yield`, `await`, `with`,
  `del`, `raise`, walrus (`:=`) or import;
- every name it reads is a parameter, a name it binds itself, a builtin the file binds nowhere (and
  no star import may bring), or a module-level import of torch, numpy or math: judged against the
  whole module, so a `def` or a name bound further down is no builtin;
- it assigns and loops only to names, or into one subscript of a container it built itself
  (`out[i] = x` with `out = []`; not `out[0][k] = x`, not `out[i] += x`); `+=` only to plain names
  it built, never to a parameter;
- it reads no method of an object as a value (`buf.append` handed on), only data attributes
  (`.shape`, `.data`);
- every call is of a builtin that stores nothing and calls nothing it is given (`len`, `zip`;
  not `map`, `filter`, `sorted(key=...)`), of a function of torch, numpy or math (not
  `torch.autograd`, `torch.func`, `torch.utils`, no function that takes a function, not an in-place
  `..._` one), a method of a container it built itself, or a method that returns a new value of a
  tensor (`.unsqueeze()`, `.sum()`; no in-place `_` method, no `.backward()`; `.to()`, `.cuda()`,
  `.half()`, which change a module in place, only on a value it computed itself; none with
  arguments on a parameter itself: `writer.log(values)`).

Anything else answers False: the argument escapes as before.  Read by `uses.classify_uses` (ML001's
accumulator uses).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.bindings import local_names, module_bindings, module_imports_only, parameter_names, target_names
from memlint.analysis.calling_helpers import function_defined_once, parameter_for
from memlint.analysis.walk import code_with_parents, dotted_name

if TYPE_CHECKING:
    from memlint.analysis.context import Context


# Builtins that store nothing and call nothing they are handed (`map`, `filter`, `sorted(key=f)` call
# it; a star import or a module-level binding of the name wins over these, see _module_name_ok).
_SAFE_BUILTINS = frozenset(
    {
        "len", "range", "zip", "enumerate", "reversed", "list", "tuple", "dict", "set", "frozenset", "int", "float",
        "bool", "str", "abs", "round", "sum", "min", "max", "sorted", "any", "all", "isinstance", "print",
    }
)  # fmt: skip
_KEYED_BUILTINS = frozenset({"min", "max", "sorted"})  # `key=` is a function they call
_LIBRARIES = frozenset({"torch", "numpy", "math"})
# Parts of the libraries that run what they are handed, or reach autograd.
_CALLING_LIBRARY_PARTS = (
    "torch.autograd", "torch.func", "torch.vmap", "torch.utils", "torch.jit", "torch.compile", "torch.cond",
    "numpy.vectorize", "numpy.frompyfunc", "numpy.apply_along_axis", "numpy.apply_over_axes", "numpy.piecewise",
)  # fmt: skip
# Tensor methods that return a new value and keep no reference anywhere else.
_PURE_METHODS = frozenset(
    {
        "detach", "item", "view", "reshape", "unsqueeze", "squeeze", "sum", "mean", "std", "var", "size", "numel",
        "dim", "clone", "pow", "exp", "abs", "max", "min", "tolist", "numpy", "flatten", "t", "transpose", "permute",
        "expand", "expand_as", "view_as", "contiguous", "clamp", "sqrt", "neg", "argmax", "gather", "index_select",
    }
)  # fmt: skip
# Tensor methods that, on an `nn.Module` or a logger, change it or store what they are handed: pure
# only on a value the helper computed itself.
_OWN_TENSOR_METHODS = frozenset({"cpu", "cuda", "to", "float", "double", "half", "long", "int", "bool", "type", "log"})
# Attributes that are data, not methods handed on as values.
_DATA_ATTRIBUTES = frozenset({"shape", "dtype", "device", "data", "T", "ndim", "is_cuda", "requires_grad"})
_FORBIDDEN = (
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal, cst.Yield, cst.Await, cst.With,
    cst.Del, cst.Import, cst.ImportFrom, cst.NamedExpr, cst.Raise,
)  # fmt: skip
_FRESH_VALUES = (
    cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Integer, cst.Float,
    cst.SimpleString, cst.BinaryOperation, cst.UnaryOperation,
)  # fmt: skip


def hands_back_only(call: cst.Call, argument: cst.Arg, parents: tuple, ctx: "Context") -> bool:
    """Does `call` (inside `parents`) hand `argument` to a function of the file that can pass it on
    only through what it returns (the module docstring's evidence)?"""
    if type(call.func) is not cst.Name or argument.star:
        return False
    name = call.func.value
    if any(isinstance(p, (cst.FunctionDef, cst.Lambda)) and name in local_names(p) for p in parents):
        return False  # a parameter or local of the caller named like the helper: another function
    function = function_defined_once(name, ctx)
    if function is None or parameter_for(call, argument, function) is None:
        return False
    return ctx.memo(("hands-back-only", id(function)), lambda: _keeps_only_in_return(function, ctx))  # type: ignore[return-value]


def _keeps_only_in_return(function: cst.FunctionDef, ctx: "Context") -> bool:
    parameters = parameter_names(function)
    bound: set[str] = set()
    fresh: dict[str, bool] = {}  # local name -> every binding of it is a value the function built
    for node, _ in code_with_parents(function.body):
        if isinstance(node, _FORBIDDEN):
            return False
        kind = type(node)
        if kind is cst.Assign:
            for target in node.targets:
                if _names_only(target.target):
                    for name in target_names(target.target):
                        bound.add(name)
                        built = type(target.target) is cst.Name and isinstance(node.value, _FRESH_VALUES)
                        fresh[name] = fresh.get(name, True) and built
                elif type(target.target) is not cst.Subscript:
                    return False  # `obj.attr = x`: stores into an object
        elif kind in (cst.AugAssign, cst.AnnAssign):
            if type(node.target) is cst.Name:
                bound.add(node.target.value)
                if kind is cst.AnnAssign:
                    fresh[node.target.value] = False
            elif kind is cst.AugAssign or type(node.target) is not cst.Subscript:
                return False  # `out[i] += x` adds into the element in place: maybe a caller's tensor
        elif kind in (cst.For, cst.CompFor):
            if not _names_only(node.target):
                return False  # `for store.last in values`: stores into an object
            for name in target_names(node.target):
                bound.add(name)
                fresh[name] = False
        elif kind is cst.ExceptHandler and node.name is not None:
            for name in target_names(node.name.name):
                bound.add(name)
                fresh[name] = False
    own = {name for name, built in fresh.items() if built and name not in parameters}
    for node, parents in code_with_parents(function.body):
        kind = type(node)
        if kind is cst.Assign:
            if any(type(t.target) is cst.Subscript and not _own_slot(t.target, own) for t in node.targets):
                return False  # `out[i] = x` only into a container it built, one level deep
        elif kind is cst.AnnAssign:
            if type(node.target) is cst.Subscript and not _own_slot(node.target, own):
                return False
        elif kind is cst.AugAssign and node.target.value not in own:  # type: ignore[attr-defined]
            # `+=` extends a list or a tensor in place: only on what the function built, or on a
            # number (`gae = 0`, then arithmetic) that it rebinds
            if node.target.value in parameters or not _builds_numbers(node.target.value, function):  # type: ignore[attr-defined]
                return False
        elif kind is cst.Name and not _is_attribute_name(node, parents):
            if node.value not in parameters and node.value not in bound and not _module_name_ok(node.value, ctx):
                return False
        elif kind is cst.Attribute and not _attribute_ok(node, parents, ctx):
            return False
        elif kind is cst.Call and not _call_ok(node, parameters, own, ctx):
            return False
    return True


def _names_only(target: cst.BaseExpression) -> bool:
    if type(target) is cst.Name:
        return True
    if type(target) in (cst.Tuple, cst.List):
        return all(_names_only(e.value) for e in target.elements)  # type: ignore[attr-defined]
    if type(target) is cst.StarredElement:
        return _names_only(target.value)  # type: ignore[attr-defined]
    return False


def _own_slot(target: cst.BaseExpression, own: set[str]) -> bool:
    """`out[i]` with `out` a container the function built: a slot of it, not of what it holds."""
    value = target.value  # type: ignore[attr-defined]
    return type(value) is cst.Name and value.value in own


def _builds_numbers(name: str, function: cst.FunctionDef) -> bool:
    """Every plain assignment of `name` in the function binds a literal number or arithmetic
    (`gae = 0`, `gae = delta + c * gae`): `+=` on it then rebinds, and stores into nothing."""
    seen = False
    for node, _ in code_with_parents(function.body):
        if type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):
            if not isinstance(node.value, (cst.Integer, cst.Float, cst.BinaryOperation, cst.UnaryOperation)):
                return False
            seen = True
    return seen


def _is_attribute_name(node: cst.Name, parents: tuple) -> bool:
    """`x.attr`'s `attr`, a keyword argument's name: no read of a variable."""
    parent = parents[-1] if parents else None
    if type(parent) is cst.Attribute and parent.attr is node:
        return True
    return type(parent) is cst.Arg and parent.keyword is node


def _attribute_ok(node: cst.Attribute, parents: tuple, ctx: "Context") -> bool:
    """An attribute read as a value is data (`x.shape`) or a library's name (`math.pi`), never a
    method handed on (`map(buf.append, values)` stores through it)."""
    parent = parents[-1] if parents else None
    if type(parent) is cst.Call and parent.func is node:
        return True  # a call: _call_ok judges it
    if type(parent) is cst.Attribute and parent.value is node:
        return True  # part of a longer chain, judged whole
    if node.attr.value in _DATA_ATTRIBUTES:
        return True
    dotted = dotted_name(node)
    root = dotted.split(".", 1)[0] if dotted is not None else None
    return root is not None and _library_name(root, ctx)


def _module_name_ok(name: str, ctx: "Context") -> bool:
    """A name the helper does not bind: what the module binds it to by the time the helper runs."""
    if name in ("True", "False", "None"):
        return True
    if module_bindings(ctx)[name]:
        return _library_name(name, ctx)
    if ctx.from_star_import(name) or not hasattr(builtins, name):
        return False
    return name in _SAFE_BUILTINS


def _library_name(name: str, ctx: "Context") -> bool:
    """Is `name` bound at module level by imports of torch, numpy or math only?"""
    if not module_imports_only(ctx, name):
        return False
    binding = ctx.module_binding(name)
    return binding is not None and _library(binding.qualified)


def _call_ok(call: cst.Call, parameters: set[str], own: set[str], ctx: "Context") -> bool:
    func = call.func
    if type(func) is cst.Name:
        name = func.value
        if name in parameters or name in own:
            return False
        if module_bindings(ctx)[name]:
            binding = ctx.module_binding(name)
            return _library_name(name, ctx) and binding is not None and _library_function(binding.qualified)
        if not _module_name_ok(name, ctx) or name not in _SAFE_BUILTINS:
            return False
        return name not in _KEYED_BUILTINS or all(a.keyword is None or a.keyword.value != "key" for a in call.args)
    if type(func) is not cst.Attribute:
        return False
    dotted = dotted_name(func)
    root = dotted.split(".", 1)[0] if dotted is not None else None
    if root is not None and root not in parameters and root not in own and _library_name(root, ctx):
        binding = ctx.module_binding(root)
        return binding is not None and binding.qualified is not None and _library_function(binding.qualified + dotted[len(root):])  # type: ignore[index]
    receiver, method = func.value, func.attr.value
    if type(receiver) is cst.Name and receiver.value in own:
        return True  # `returns.insert(0, x)` on its own list
    if method in _OWN_TENSOR_METHODS:
        return isinstance(receiver, (cst.BinaryOperation, cst.UnaryOperation))  # a value it computed itself
    if method not in _PURE_METHODS:
        return False
    # `writer.log(values)`: a parameter that is no tensor may store what it is handed
    return not (type(receiver) is cst.Name and receiver.value in parameters and call.args)


def _library(qualified) -> bool:
    """torch, numpy or math, or one of their names."""
    return qualified is not None and qualified.split(".", 1)[0] in _LIBRARIES


def _library_function(qualified) -> bool:
    """A function of torch, numpy or math that makes a new value: not autograd's, none that runs
    what it is handed, not an in-place one (`torch.relu_`, `torch.Tensor.add_(x, y)` write into
    their first argument)."""
    return (
        _library(qualified)
        and not any(qualified == part or qualified.startswith(part + ".") for part in _CALLING_LIBRARY_PARTS)
        and not qualified.endswith("_")
    )
