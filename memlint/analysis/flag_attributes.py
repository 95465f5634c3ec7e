"""An attribute that keeps a constructor's opt-in flag: `if self.lu_factorize:` in a method of a
class whose `__init__(self, n, lu_factorize=False)` binds `self.lu_factorize = lu_factorize`.

Like `if init:` of `forward(self, x, init=False)` (`iteration.opt_in_parameter`), the branch runs
only for an instance a caller built with the flag on: off unless some construction turns it on.
The evidence is the whole file's: the one binding of the attribute anywhere in it (any receiver:
`model.lu_factorize = True` elsewhere would turn it on) is that copy of the parameter in the class's
own `__init__`, and no `setattr` may name it.  Whether every construction of the class in the
project turns the flag on is the project pass's `flag_on` of the class's `__init__`
(memlint.analysis.flag_arguments); then the branch runs on every call, as a flag every caller of
a function turns on does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def opt_in_attribute(test: cst.BaseExpression, ctx: "Context") -> Optional[str]:
    """`if self.flag:` / `if self.flag is True:` in a method, where the class's `__init__` binds
    `self.flag` (its one binding in the file) to a parameter defaulting to False: that parameter's
    name, else None."""
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not (isinstance(target.operator, (cst.Is, cst.Equal)) and isinstance(target.comparator, cst.Name) and target.comparator.value == "True"):
            return None
        test = test.left
    if type(test) is not cst.Attribute or type(test.value) is not cst.Name or test.value.value != "self":  # type: ignore[attr-defined]
        return None
    key, function = ctx.function_key, ctx.function_node
    if key is None or key[0] != "method" or function is None or _first_parameter(function) != "self":
        return None
    frames = ctx.frames
    cls = next((f.node for f in reversed(frames) if f.kind == "class"), None)
    if type(cls) is not cst.ClassDef or cls.name.value != key[1]:  # type: ignore[attr-defined]
        return None
    attr = test.attr.value  # type: ignore[attr-defined]
    return ctx.memo(("opt-in-attribute", id(cls), attr), lambda: _constructor_flag(ctx.module, cls, attr))  # type: ignore[return-value]


def _constructor_flag(module: cst.Module, cls: cst.ClassDef, attr: str) -> Optional[str]:
    init = next((s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None)  # type: ignore[attr-defined]
    if init is None or _first_parameter(init) != "self":
        return None
    bindings = [node for node in code_descendants(module) if _binds(node, attr)]
    if len(bindings) != 1 or type(bindings[0]) is not cst.Assign or len(bindings[0].targets) != 1:  # type: ignore[attr-defined]
        return None
    binding: cst.Assign = bindings[0]  # type: ignore[assignment]
    target, value = binding.targets[0].target, binding.value
    if type(target) is not cst.Attribute or type(target.value) is not cst.Name or target.value.value != "self" or type(value) is not cst.Name:  # type: ignore[attr-defined]
        return None
    if not any(node is binding for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))):
        return None  # bound in another method, or in a function nested in `__init__`
    parameters = init.params
    for param in (*parameters.params, *parameters.kwonly_params):
        if param.name.value == value.value:  # type: ignore[attr-defined]
            default = param.default
            return param.name.value if type(default) is cst.Name and default.value == "False" else None  # type: ignore[attr-defined]
    return None


def _binds(node: cst.CSTNode, attr: str) -> bool:
    """Does `node` bind `<anything>.attr` (an assignment, also unpacked, augmented or annotated, a
    `for` or `with` target, a `del`) or call `setattr` with that name, or with a name not written out?"""
    kind = type(node)
    if kind is cst.Call:
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value == "setattr":
            args = node.args  # type: ignore[attr-defined]
            name = args[1].value if len(args) > 1 else None
            return not (type(name) is cst.SimpleString and name.evaluated_value != attr)  # type: ignore[attr-defined]
        return False
    if kind is cst.Assign:
        targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
    elif kind in (cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor, cst.Del):
        targets = [node.target]  # type: ignore[attr-defined]
    elif kind is cst.AsName:
        targets = [node.name]  # type: ignore[attr-defined]
    else:
        return False
    return any(type(n) is cst.Attribute and n.attr.value == attr for t in targets for n in (t, *code_descendants(t)))  # type: ignore[attr-defined]


def _first_parameter(function: cst.FunctionDef) -> Optional[str]:
    params = (*function.params.posonly_params, *function.params.params)
    return params[0].name.value if params else None
