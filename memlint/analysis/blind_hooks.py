"""Forward pre-hooks that can neither see nor replace a module's input.

A forward pre-hook is called as `hook(module, args)` (and `kwargs` with `with_kwargs=True`) before the
module runs.  What an in-place activation could change is a tensor the hook receives in `args`: the
hook may keep it, or return another input that the activation would then overwrite.  A hook that
never reads any parameter after `module` and returns nothing (StyleGAN's equalised learning rate,
`EqualLR.__call__(self, module, input)`, which only recomputes `module.weight`) sees no tensor of the
forward pass, whichever module it is registered on, so it silences nothing.

The hook is followed by name within the file: the argument of the registration is a call of a class
of the file with `__call__` (`EqualLR(name)`), a function of the file, or a name whose every binding
in the file is one of those (`fn = EqualLR(name)`; a parameter or anything else binding it: unknown),
or `self.<method>` where every method of that name in the file is such a hook.  Anything else may see
its input.
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.bindings import exact_names_bound_by, target_names
from memlint.analysis.walk import code_descendants

PRE_HOOK_REGISTRATIONS = frozenset({"register_forward_pre_hook", "register_module_forward_pre_hook"})


def blind_pre_hook(call: cst.Call, module: cst.Module) -> bool:
    """Is `call` (a forward pre-hook registration) handing torch a hook that reads none of its
    inputs and returns nothing?"""
    hook = _hook_argument(call)
    if hook is None:
        return False
    return _Index(module).blind(hook, depth=0)


def _hook_argument(call: cst.Call) -> Optional[cst.BaseExpression]:
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None or arg.keyword.value == "hook":
            return arg.value
    return None


class _Index:
    """The file's functions, classes and name bindings, by name."""

    def __init__(self, module: cst.Module) -> None:
        self.functions: dict[str, list[cst.FunctionDef]] = {}
        self.classes: dict[str, list[cst.ClassDef]] = {}
        self.bindings: dict[str, list[Optional[cst.BaseExpression]]] = {}  # None: bound by other than `=`
        for node in code_descendants(module):
            kind = type(node)
            if kind is cst.FunctionDef:
                self.functions.setdefault(node.name.value, []).append(node)  # type: ignore[attr-defined]
                for param in _all_params(node.params):  # type: ignore[attr-defined]
                    self.bindings.setdefault(param.name.value, []).append(None)
            elif kind is cst.ClassDef:
                self.classes.setdefault(node.name.value, []).append(node)  # type: ignore[attr-defined]
            elif kind is cst.Assign:
                for target in node.targets:  # type: ignore[attr-defined]
                    if type(target.target) is cst.Name:
                        self.bindings.setdefault(target.target.value, []).append(node.value)  # type: ignore[attr-defined]
                    else:
                        for name in target_names(target.target):
                            self.bindings.setdefault(name, []).append(None)
            else:  # bound otherwise (`+=`, a loop, `with ... as`, an import, ...): value unknown
                for name in exact_names_bound_by(node):
                    self.bindings.setdefault(name, []).append(None)

    def blind(self, hook: cst.BaseExpression, depth: int) -> bool:
        if depth > 3:
            return False
        kind = type(hook)
        if kind is cst.Call:  # `EqualLR(name)`: an instance of a class of the file
            func = hook.func  # type: ignore[attr-defined]
            if type(func) is not cst.Name or func.value in self.bindings or func.value in self.functions:
                return False
            return self._blind_class(func.value)
        if kind is cst.Name:
            name = hook.value  # type: ignore[attr-defined]
            defined = self.functions.get(name, [])
            bound = self.bindings.get(name, [])
            if name in self.classes or not (defined or bound):
                return False
            if not all(_blind_function(f, method=_is_method(f, self)) for f in defined):
                return False
            return all(value is not None and self.blind(value, depth + 1) for value in bound)
        if kind is cst.Attribute and type(hook.value) is cst.Name and hook.value.value == "self":  # type: ignore[attr-defined]
            methods = self.functions.get(hook.attr.value, [])  # type: ignore[attr-defined]
            return bool(methods) and all(_blind_function(f, method=True) for f in methods)
        return False

    def _blind_class(self, name: str) -> bool:
        classes = self.classes.get(name, [])
        if len(classes) != 1 or classes[0].bases:
            return False  # a base class (of the file or not) may define `__call__` otherwise
        calls = [
            s for s in classes[0].body.body  # type: ignore[attr-defined]
            if type(s) is cst.FunctionDef and s.name.value == "__call__"
        ]
        return len(calls) == 1 and _blind_function(calls[0], method=True)


def _is_method(function: cst.FunctionDef, index: _Index) -> bool:
    params = function.params.params
    return bool(params) and params[0].name.value == "self"


def _blind_function(function: cst.FunctionDef, method: bool) -> bool:
    """Does the function read no parameter after `module` (`self, module, input`) and return nothing?"""
    params = function.params
    positional = [*params.posonly_params, *params.params]
    skipped = 2 if method else 1  # `self`, `module`
    if len(positional) < skipped:
        return False
    unread = [p.name.value for p in positional[skipped:]]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            unread.append(extra.name.value)
    unread.extend(p.name.value for p in params.kwonly_params)
    if not unread:
        return False  # torch passes the inputs: a function that takes none is not this hook
    for node in code_descendants(function.body):
        kind = type(node)
        if kind is cst.Name and node.value in unread:  # type: ignore[attr-defined]
            return False
        if kind is cst.Return and node.value is not None and not _is_none(node.value):  # type: ignore[attr-defined]
            return False
        if kind in (cst.Yield, cst.Await):
            return False
        if kind is cst.Call and type(node.func) is cst.Name and node.func.value in ("locals", "vars", "eval", "exec"):  # type: ignore[attr-defined]
            return False
    return True


def _is_none(value: cst.BaseExpression) -> bool:
    return type(value) is cst.Name and value.value == "None"  # type: ignore[attr-defined]


def _all_params(params: cst.Parameters) -> list[cst.Param]:
    found = [*params.posonly_params, *params.params, *params.kwonly_params]
    for extra in (params.star_arg, params.star_kwarg):
        if isinstance(extra, cst.Param):
            found.append(extra)
    return found
