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

- the callee is a module-level `def` the file binds once, not decorated (calling_helpers);
- its body has no nested function, class, lambda, `global`/`nonlocal`, `yield`, `await`, `with`,
  `del` or import;
- every name it reads is a parameter, a name it binds itself, a builtin or an import of the module;
- it assigns only to names, or into a subscript of a container it built itself (`out[i] = x` with
  `out = []`); `+=` only to such containers' or plain names it built, never to a parameter;
- every call is of a builtin that stores nothing, of a function of torch, numpy or math (not
  `torch.autograd`, not an in-place `..._` one), a method of a container it built itself, or a method
  that returns a new value of any tensor (`.unsqueeze()`, `.sum()`; no in-place `_` method, no
  `.backward()`).

Anything else answers False: the argument escapes as before.  Read by `uses.classify_uses` (ML001's
accumulator uses).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.calling_helpers import function_defined_once, parameter_for
from memlint.analysis.walk import code_with_parents, target_names

if TYPE_CHECKING:
    from memlint.analysis.context import Context


# Builtins that run code or reach objects beyond their arguments.
_UNSAFE_BUILTINS = frozenset(
    {"setattr", "delattr", "exec", "eval", "compile", "globals", "locals", "vars", "__import__", "open", "input", "breakpoint", "getattr"}
)
_LIBRARIES = frozenset({"torch", "numpy", "math"})
# Tensor methods that return a new value and keep no reference anywhere else.
_PURE_METHODS = frozenset(
    {
        "detach", "item", "cpu", "cuda", "to", "float", "double", "half", "long", "int", "bool", "view", "reshape",
        "unsqueeze", "squeeze", "sum", "mean", "std", "var", "size", "numel", "dim", "clone", "pow", "exp", "log",
        "abs", "max", "min", "tolist", "numpy", "flatten", "t", "transpose", "permute", "expand", "expand_as",
        "view_as", "contiguous", "clamp", "sqrt", "neg", "argmax", "gather", "index_select", "type",
    }
)  # fmt: skip
_FORBIDDEN = (
    cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal, cst.Yield, cst.Await, cst.With,
    cst.Del, cst.Import, cst.ImportFrom, cst.NamedExpr,
)  # fmt: skip
_FRESH_VALUES = (
    cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp, cst.Integer, cst.Float,
    cst.SimpleString, cst.BinaryOperation, cst.UnaryOperation,
)  # fmt: skip


def hands_back_only(call: cst.Call, argument: cst.Arg, ctx: "Context") -> bool:
    """Does `call` hand `argument` to a function of the file that can pass it on only through what it
    returns (the module docstring's evidence)?"""
    if type(call.func) is not cst.Name or argument.star:
        return False
    function = function_defined_once(call.func.value, ctx)
    if function is None or parameter_for(call, argument, function) is None:
        return False
    return ctx.memo(("hands-back-only", id(function)), lambda: _returns_only(function, ctx))  # type: ignore[return-value]


def _returns_only(function: cst.FunctionDef, ctx: "Context") -> bool:
    params = function.params
    parameters = {p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params)}
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            parameters.add(star.name.value)
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
            elif type(node.target) is not cst.Subscript:
                return False
        elif kind in (cst.For, cst.CompFor):
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
            if any(type(t.target) is cst.Subscript and _root_name(t.target) not in own for t in node.targets):
                return False  # `out[i] = x` only into a container it built
        elif kind in (cst.AugAssign, cst.AnnAssign):
            target = node.target
            if type(target) is cst.Subscript and _root_name(target) not in own:
                return False
            if kind is cst.AugAssign and type(target) is cst.Name and target.value not in own:
                # `+=` extends a list or a tensor in place: only on what the function built, or on a
                # number (`gae = 0`, then arithmetic) that it rebinds
                if target.value in parameters or not _builds_numbers(target.value, function):
                    return False
        elif kind is cst.Name and not _is_attribute_name(node, parents):
            if node.value not in parameters and node.value not in bound and not _module_name_ok(node.value, ctx):
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


def _root_name(target: cst.BaseExpression):
    while type(target) is cst.Subscript:
        target = target.value  # type: ignore[attr-defined]
    return target.value if type(target) is cst.Name else None  # type: ignore[attr-defined]


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


def _module_name_ok(name: str, ctx: "Context") -> bool:
    if name in ("True", "False", "None"):
        return True
    binding = ctx.module_binding(name)
    if binding is None:
        return ctx.is_builtin(name) and name not in _UNSAFE_BUILTINS
    return _library(binding.qualified)


def _call_ok(call: cst.Call, parameters: set[str], own: set[str], ctx: "Context") -> bool:
    func = call.func
    if type(func) is cst.Name:
        if func.value in parameters or func.value in own:
            return False
        binding = ctx.module_binding(func.value)
        if binding is None:
            return ctx.is_builtin(func.value) and func.value not in _UNSAFE_BUILTINS
        return _library_function(binding.qualified)
    if type(func) is not cst.Attribute:
        return False
    root = func.value
    while type(root) is cst.Attribute:
        root = root.value
    dotted = _dotted(func)
    if type(root) is cst.Name and root.value not in parameters and root.value not in own and dotted is not None:
        binding = ctx.module_binding(root.value)
        if binding is not None and binding.qualified is not None:
            return _library_function(binding.qualified + dotted[len(root.value):])
    method = func.attr.value
    if method in _PURE_METHODS:
        return True
    return type(func.value) is cst.Name and func.value.value in own  # `returns.insert(0, x)` on its own list


def _library(qualified) -> bool:
    """torch, numpy or math, or one of their names."""
    return qualified is not None and qualified.split(".", 1)[0] in _LIBRARIES


def _library_function(qualified) -> bool:
    """A function of torch, numpy or math that makes a new value: not autograd's, not an in-place
    one (`torch.relu_`, `torch.Tensor.add_(x, y)` write into their first argument)."""
    return (
        _library(qualified) and qualified != "torch.autograd" and not qualified.startswith("torch.autograd.")
        and not qualified.endswith("_")
    )


def _dotted(expr: cst.BaseExpression):
    parts = []
    while type(expr) is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[attr-defined]
        expr = expr.value  # type: ignore[attr-defined]
    if type(expr) is not cst.Name:
        return None
    parts.append(expr.value)  # type: ignore[attr-defined]
    return ".".join(reversed(parts))
