"""Where each element of a known callee's returned tuple gets its autograd history from.

`loss, loss_node = loss_compute(out, y, n)` followed by `loss_node.backward()`: the history fact
guesses that every result of the call that produced a backpropagated value carries history (the
"sibling" evidence of model.py).  Where the file shows the callee and its `return` says otherwise
(`return sloss.data * norm, sloss`: the first element is detached, scaled by a parameter), direct
evidence beats that guess.

`element_sources(function)` reads, for a function whose every `return` (nested scopes aside) is a
tuple display of one length, per position: None where the element may carry history of its own,
else the set of the function's parameters whose history it may carry (empty: none at all).  An
element is known only as `.data` of a value other than `self`, a method of anything that hands back
no history (`.detach()`, `.item()`, `.argmax(1)`, `.size(0)`: tables.GRAPH_FREE_METHODS), a number, an unrebound parameter (its caller's argument), or
arithmetic of those; a local name counts where every binding of it in the function is such a value.

`CalleeIndex.definitions(call, ...)` finds the callee, only where the file shows every function the
call may run (a subclass or a caller in another file is not seen: the asker then stays silent on
history it would otherwise have guessed, it reports nothing wrongly):
- `f(...)` of a module-level `def` the module binds once, the caller binding no `f` of its own;
- `obj(...)` where every assignment of `obj` in the file builds one class of the file bound once at
  module level (`constructed`): its `__call__` (its `forward` for an nn.Module class);
- `fn(...)` of a parameter `fn` of a module-level function F the caller is, never rebound in F, where
  F's name is read only as the callee of calls and every such call hands `C(...)` of one class of the
  file at that parameter (the annotated transformer's `run_epoch(..., SimpleLossCompute(...), ...)`);
Each definition must be an undecorated plain `def` taking `self` first where it is a method, in a
file with no star import; which argument a call hands each parameter is `call_arguments.argument_for`'s.  Not read: `self.m(...)` (a mixin earlier
in the method order or an override in another file may run instead: a review found both), a call in
a nested function (an enclosing one may define the name again).  A local changed in place
(`stats.mul_(loss)`, `stats[0] = loss`) is not known.  An argument whose history the valuation
cannot tell makes the element unknown (silent), not "history" by the sibling guess.
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.call_arguments import argument_for
from memlint.analysis.bindings import SCOPES, exact_names_bound_by, parameter_names
from memlint.analysis.walk import code_descendants, dotted_name

Sources = Optional[frozenset[str]]  # None: may carry history of its own; else the parameters it may carry it from

_NONE: frozenset[str] = frozenset()
# Methods whose result carries no autograd history, whatever their receiver holds (a count, an index,
# a comparison, a detached copy; not `sample`, which a model may define to return anything).
_GRAPH_FREE_METHODS = tables.GRAPH_FREE_METHODS - {"sample"}
_ARITHMETIC = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Power, cst.Modulo)
_PARAMETER = object()  # a name's binding as a parameter


def element_sources(function: cst.FunctionDef) -> Optional[tuple[Sources, ...]]:
    """Per position of the tuple every `return` of `function` gives: None (history of its own) or
    the parameters whose history the element may carry.  None where some `return` is no tuple
    display of the common length, or the function is a generator."""
    returns: list[cst.Return] = []
    bindings: dict[str, list] = {}
    for node in code_descendants(function.body, skip=SCOPES):
        kind = type(node)
        if kind is cst.Return:
            returns.append(node)  # type: ignore[arg-type]
        elif kind in (cst.Yield, cst.Await):
            return None
        elif kind is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
            bindings.setdefault(node.targets[0].target.value, []).append(node.value)  # type: ignore[attr-defined]
        elif kind is cst.Call and _writes_in_place(node.func):  # type: ignore[attr-defined]
            # `stats.mul_(loss)`: the tensor a name holds is changed in place and may take history
            bindings.setdefault(node.func.value.value, []).append(None)  # type: ignore[attr-defined]
        elif kind in (cst.AssignTarget, cst.AugAssign) and type(node.target) in (cst.Subscript, cst.Attribute):  # type: ignore[attr-defined]
            # `stats[0] = loss`, `stats.data = loss`: a store into what the name holds
            root = node.target.value  # type: ignore[attr-defined]
            while type(root) in (cst.Subscript, cst.Attribute):
                root = root.value  # type: ignore[attr-defined]
            if type(root) is cst.Name:
                bindings.setdefault(root.value, []).append(None)
        else:
            for name in exact_names_bound_by(node, declarations=True):
                bindings.setdefault(name, []).append(None)  # bound some other way: not known here
    if not returns or any(type(r.value) is not cst.Tuple for r in returns):
        return None
    widths = {len(r.value.elements) for r in returns}  # type: ignore[union-attr]
    if len(widths) != 1 or any(type(e) is cst.StarredElement for r in returns for e in r.value.elements):  # type: ignore[union-attr]
        return None
    for name in parameter_names(function):
        bindings.setdefault(name, []).append(_PARAMETER)
    return tuple(
        _union(_sources(r.value.elements[i].value, bindings, 0) for r in returns)  # type: ignore[union-attr]
        for i in range(widths.pop())
    )


def _writes_in_place(func: cst.BaseExpression) -> bool:
    """`name.mul_(...)`: a tensor method of the `_` family (not a dunder) called on a plain name."""
    return (
        type(func) is cst.Attribute
        and type(func.value) is cst.Name  # type: ignore[attr-defined]
        and func.attr.value.endswith("_")  # type: ignore[attr-defined]
        and not func.attr.value.startswith("__")  # type: ignore[attr-defined]
    )


def _union(parts: Iterable[Sources]) -> Sources:
    found: set[str] = set()
    for part in parts:
        if part is None:
            return None
        found |= part
    return frozenset(found)


def _sources(expr: cst.BaseExpression, bindings: dict[str, list], depth: int) -> Sources:
    if depth > 4:
        return None
    kind = type(expr)
    if kind in (cst.Integer, cst.Float):
        return _NONE
    if kind is cst.Name:
        values = bindings.get(expr.value)  # type: ignore[attr-defined]
        if not values or expr.value == "self":  # type: ignore[attr-defined]
            return None
        if values == [_PARAMETER]:
            return frozenset({expr.value})  # type: ignore[attr-defined]
        if any(v is None or v is _PARAMETER for v in values):
            return None
        return _union(_sources(v, bindings, depth + 1) for v in values)
    if kind is cst.Attribute:
        # `sloss.data`: the tensor without its history (`self.data` may be any attribute)
        owner = expr.value  # type: ignore[attr-defined]
        if expr.attr.value == "data" and not (type(owner) is cst.Name and owner.value == "self"):  # type: ignore[attr-defined]
            return _NONE
        return None
    if kind is cst.Call:
        func = expr.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in _GRAPH_FREE_METHODS:
            return _NONE
        return None
    if kind is cst.BinaryOperation and type(expr.operator) in _ARITHMETIC:  # type: ignore[attr-defined]
        return _union((_sources(expr.left, bindings, depth + 1), _sources(expr.right, bindings, depth + 1)))  # type: ignore[attr-defined]
    if kind is cst.UnaryOperation and type(expr.operator) is cst.Minus:  # type: ignore[attr-defined]
        return _sources(expr.expression, bindings, depth + 1)  # type: ignore[attr-defined]
    return None


class CalleeIndex:
    """The file's module-level functions and classes, and how their names are used: built once per
    file, on the first call the Context asks about."""

    def __init__(self, module: cst.Module, constructed: dict[str, Optional[str]], text: Optional[str] = None) -> None:
        counts: dict[str, int] = {}
        for node in code_descendants(module, skip=SCOPES):
            for name in exact_names_bound_by(node):
                counts[name] = counts.get(name, 0) + 1
        for node in code_descendants(module) if text is None or "global" in text else ():
            if type(node) is cst.Global:  # a function that rebinds a module name
                for item in node.names:  # type: ignore[attr-defined]
                    counts[item.name.value] = counts.get(item.name.value, 0) + 2
        self.functions: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        for statement in module.body:
            if type(statement) is cst.FunctionDef and counts.get(statement.name.value) == 1:
                self.functions[statement.name.value] = statement
            elif type(statement) is cst.ClassDef and counts.get(statement.name.value) == 1 and not statement.decorators:
                self.classes[statement.name.value] = statement
        self.constructed = constructed
        self._module = module
        self._uses: Optional[tuple[dict[str, list[cst.Call]], set[str], set[str], list[cst.ClassDef]]] = None
        self._locals: dict[int, set[str]] = {}  # id(caller) -> the names it binds
        self._sources: dict[int, Optional[tuple[Sources, ...]]] = {}  # id(def) -> element_sources

    def _file_uses(self) -> tuple[dict[str, list[cst.Call]], set[str], set[str]]:
        """One walk of the whole file, only when a call may reach a method or a handed instance:
        each module-level function's calls; the functions whose name is read otherwise too (as a
        value, or as an attribute's name: their callers are not all seen); the attribute names some
        assignment sets on an object (`self.step = fn`; "*" with `setattr`, any may)."""
        if self._uses is not None:
            return self._uses
        calls: dict[str, list[cst.Call]] = {}
        escaping: set[str] = set()
        replaced: set[str] = set()
        callees = {id(f.name) for f in self.functions.values()}  # (a `def`'s own name is no read)
        for node in code_descendants(self._module):
            kind = type(node)
            if kind in (cst.Assign, cst.AugAssign, cst.AnnAssign):
                targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
                while targets:
                    target = targets.pop()
                    if type(target) is cst.Attribute:
                        replaced.add(target.attr.value)  # type: ignore[attr-defined]
                    elif type(target) in (cst.Tuple, cst.List):
                        targets.extend(e.value for e in target.elements)  # type: ignore[attr-defined]
                    elif type(target) is cst.StarredElement:
                        targets.append(target.value)  # type: ignore[attr-defined]
            elif kind is cst.Call and type(node.func) is cst.Name and node.func.value in self.functions:  # type: ignore[attr-defined]
                calls.setdefault(node.func.value, []).append(node)  # type: ignore[attr-defined]
                callees.add(id(node.func))  # type: ignore[attr-defined]
            elif kind is cst.Name:
                if node.value == "setattr":  # type: ignore[attr-defined]
                    replaced.add("*")
                elif node.value in self.functions and id(node) not in callees:  # type: ignore[attr-defined]
                    escaping.add(node.value)  # type: ignore[attr-defined]
        self._uses = (calls, escaping, replaced)
        return self._uses

    def element_sources(self, function: cst.FunctionDef) -> Optional[tuple[Sources, ...]]:
        key = id(function)
        if key not in self._sources:
            self._sources[key] = element_sources(function)
        return self._sources[key]

    def definitions(
        self, call: cst.Call, caller: Optional[cst.FunctionDef], module_classes: frozenset[str]
    ) -> Optional[list[tuple[cst.FunctionDef, int]]]:
        """The definitions `call` may run, each with how many of its parameters the call does not
        fill (1: `self`), or None where the file does not show them all."""
        func = call.func
        if type(func) is cst.Name:
            name = func.value
            if caller is not None and id(caller) not in self._locals:
                self._locals[id(caller)] = _local_names(caller)
            local = caller is not None and name in self._locals[id(caller)]
            if not local and name in self.functions and not self.functions[name].decorators:
                # (a star import may bind the name again: `from losses import *` after the `def`)
                return None if "*" in self._file_uses()[2] else [(self.functions[name], 0)]
            if local and name in parameter_names(caller):  # type: ignore[arg-type]
                return self._handed_instance(name, caller, module_classes)  # type: ignore[arg-type]
            return self._called_instance(self.constructed.get(name), module_classes)
        if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
            # `self._forward(...)`: which definition runs depends on the instance's class, mixins
            # and overrides in other files included; the file cannot show them all
            return None
        if type(func) is cst.Attribute:
            built = self.constructed.get(dotted_name(func) or "")
            return self._called_instance(built, module_classes)
        return None

    def _called_instance(self, built: Optional[str], module_classes: frozenset[str]) -> Optional[list[tuple[cst.FunctionDef, int]]]:
        """What calling an instance of the file's class `built` runs: its `forward` (an nn.Module
        class) or its `__call__`, defined in its own body."""
        cls = self.classes.get(built or "")
        if cls is None or "*" in self._file_uses()[2]:
            return None
        method = _method(cls, "forward" if built in module_classes else "__call__")
        return [(method, 1)] if method is not None else None

    def _handed_instance(self, name: str, caller: cst.FunctionDef, module_classes: frozenset[str]) -> Optional[list[tuple[cst.FunctionDef, int]]]:
        """`loss_compute(out, y, n)` where `loss_compute` is a parameter of the module-level
        function `caller`, never rebound, and every call of `caller` in the file hands it an
        instance of one class of the file."""
        owner = caller.name.value
        if self.functions.get(owner) is not caller:
            return None
        calls, escaping, _ = self._file_uses()
        if owner in escaping or not calls.get(owner):
            return None
        params = caller.params
        if params.star_arg is not None and type(params.star_arg) is cst.Param or params.posonly_params:
            return None
        positional = [p.name.value for p in params.params]
        keyword_only = {p.name.value for p in params.kwonly_params}
        if name not in positional and name not in keyword_only:
            return None
        if any(name in exact_names_bound_by(node) for node in code_descendants(caller.body, skip=SCOPES)):
            return None  # rebound in the function: not only what the callers hand
        built: set[str] = set()
        for site in calls[owner]:
            argument = argument_for(site, caller, name)
            if argument is None or type(argument) is not cst.Call or type(argument.func) is not cst.Name:  # type: ignore[attr-defined]
                return None
            built.add(argument.func.value)  # type: ignore[attr-defined]
        if len(built) != 1:
            return None
        return self._called_instance(built.pop(), module_classes)

    def combined_sources(self, definitions: list[tuple[cst.FunctionDef, int]]) -> Optional[tuple[tuple[Sources, ...], list[tuple[cst.FunctionDef, int]]]]:
        """Per position, what every definition's element there may carry history from (None where
        one may carry its own), or None where they disagree on the tuple's length or one is not known."""
        combined: Optional[list[Sources]] = None
        for function, _ in definitions:
            sources = self.element_sources(function)
            if sources is None:
                return None
            if combined is None:
                combined = list(sources)
            elif len(combined) != len(sources):
                return None
            else:
                combined = [_union((a, b)) for a, b in zip(combined, sources)]
        return (tuple(combined), definitions) if combined is not None else None


def handed_argument(call: cst.Call, function: cst.FunctionDef, skipped: int, parameter: str) -> Optional[cst.BaseExpression]:
    """The argument `call` hands `function`'s `parameter` (the first `skipped` parameters are
    filled by the call itself: `self`), or None where it may be a default or cannot be told."""
    return argument_for(call, function, parameter, skipped)


def _method(cls: cst.ClassDef, name: str) -> Optional[cst.FunctionDef]:
    """The class body's one undecorated `def name(self, ...)`, or None (none, several, or another binding)."""
    found = [s for s in cls.body.body if type(s) is cst.FunctionDef and s.name.value == name]
    others = [
        s for s in cls.body.body
        if type(s) is not cst.FunctionDef and any(name in exact_names_bound_by(x) for x in (s, *code_descendants(s, skip=SCOPES)))
    ]
    if len(found) != 1 or others or found[0].decorators:
        return None
    params = found[0].params.params
    return found[0] if params and params[0].name.value == "self" else None


def _local_names(function: cst.FunctionDef) -> set[str]:
    names = parameter_names(function)
    for node in code_descendants(function.body, skip=SCOPES):
        names.update(exact_names_bound_by(node))
    return names

