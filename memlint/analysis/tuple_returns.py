"""Methods that return a tuple display, the names that hold their result, and reads of them that raise.

A method whose every `return` is a tuple display (`return hiddens, noise`) hands its caller a tuple,
never a tensor.  `hiddens = self.encode(images)` in another method of the same class binds that tuple,
so `hiddens.size()` or `hiddens.data` read on it raises AttributeError: a tuple has no attributes but
`count` and `index` (and its dunders).  Code that reads one (`torch.randn(hiddens.size())`) never gets
past that read, whatever a rule would say of what comes after it.

`returned_tuple_length(function)` is the first fact (the length every `return` agrees on): a function
that is no generator, whose body ends in a `return` (it cannot fall off its end and give None), and
whose every `return` (nested functions, classes and lambdas aside) is a tuple display of that length
with no starred element.  Other rules may read "the other results of the call" by position from it.

`tuple_names(ctx)` are the names of the method being visited that certainly hold such a tuple:
each bound once in the whole method (nested scopes and `global` / `nonlocal` counted: when unsure,
bound), by `name = self.m(...)`, not a parameter, with `self` the method's first parameter and never
rebound; `m` a plain method (undecorated, taking `self`) that the class body defines once and binds
nothing else to, that no assignment `<anything>.m = ...` or `setattr(x, "m", ...)` of the file replaces on
an instance, and that nothing in the file may make another function: no class of the file derives from
this one (by any base naming it, `Net[int]` too), the class is undecorated, bound once, and its name is read
only as a base, a callee or `super()`'s first argument (no alias `Base = Net`, no borrowed `Net.forward`),
and the file makes no class with `type(name, bases, body)` nor derives one from a base that is no dotted
name (`_FixedMethods`, read once per file; the answer is kept per class and method).  (A subclass in another file could still override
`m` to return a tensor; an asker that stays silent on this fact misses a finding then, it reports none
wrongly.)  Any read of such a name in the method sees that binding or raises UnboundLocalError.

`raising_tuple_read(expr, ctx)` finds, in `expr`, an attribute a tuple lacks read on such a name where
evaluating `expr` certainly evaluates it (not under a conditional expression, a boolean operator, a
lambda or a comprehension): `expr` cannot complete.  ML013 asks it of a factory's arguments: a factory
that can never run makes no host tensor to copy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, target_names
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# What a tuple has besides its dunders: any other attribute read on one raises AttributeError.
_TUPLE_ATTRIBUTES = frozenset({"count", "index"})
# Where a read inside an expression may not be evaluated when the expression is (or is another scope).
_MAYBE_EVALUATED = (cst.IfExp, cst.BooleanOperation, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
_NO_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def returned_tuple_length(function: cst.FunctionDef) -> Optional[int]:
    """The length of the tuple display every `return` of `function` gives, or None where some
    `return` may give anything else, the body may end without one, or the function is a generator."""
    body = function.body
    if type(body) is not cst.IndentedBlock or not body.body:
        return None
    last = body.body[-1]
    if type(last) is not cst.SimpleStatementLine or type(last.body[-1]) is not cst.Return:
        return None  # the body may fall off its end and return None
    length = None
    for node in code_descendants(body, skip=_NO_SCOPES):
        kind = type(node)
        if kind is cst.Yield or kind is cst.Await:
            return None
        if kind is cst.Return:
            value = node.value  # type: ignore[attr-defined]
            if type(value) is not cst.Tuple or any(type(e) is cst.StarredElement for e in value.elements):
                return None
            if length is not None and len(value.elements) != length:
                return None
            length = len(value.elements)
    return length


def tuple_names(ctx: "Context") -> frozenset[str]:
    """The names of the method being visited that certainly hold a tuple a method of its own class
    returned (the module's docstring), computed once per method."""
    function = ctx.function_node
    if function is None or len(ctx.frames) < 2 or ctx.frames[-2].kind != "class":
        return frozenset()
    class_node = ctx.frames[-2].node
    return ctx.memo(("tuple-names", id(function)), lambda: _tuple_names(function, class_node, ctx))  # type: ignore[return-value]


def raising_tuple_read(expr: cst.BaseExpression, ctx: "Context") -> Optional[cst.Attribute]:
    """An attribute a tuple lacks, read on a `tuple_names` name, that evaluating `expr` evaluates."""
    names = tuple_names(ctx)
    if not names:
        return None
    stack: list[cst.CSTNode] = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in _MAYBE_EVALUATED:
            continue
        if kind is cst.Attribute:
            base, attr = node.value, node.attr.value  # type: ignore[attr-defined]
            if type(base) is cst.Name and base.value in names and attr not in _TUPLE_ATTRIBUTES and not attr.startswith("__"):
                return node  # type: ignore[return-value]
        stack.extend(code_children(node))
    return None


def _tuple_names(function: cst.FunctionDef, class_node: cst.ClassDef, ctx: "Context") -> frozenset[str]:
    params = function.params.params
    if not params or params[0].name.value != "self" or _decorated_as_non_method(function):
        return frozenset()
    counts: dict[str, int] = {}
    plain: dict[str, cst.BaseExpression] = {}
    for node in code_descendants(function.body):  # nested scopes too: a `nonlocal` there may rebind
        for target in bound_by(node, parameters=True, declarations=True):
            for name in target_names(target):
                counts[name] = counts.get(name, 0) + 1
    for node in code_descendants(function.body, skip=_NO_SCOPES):  # the method's own bindings
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            plain[node.targets[0].target.value] = node.value
    if "self" in counts:
        return frozenset()
    every = function.params
    stars = [p for p in (every.star_arg, every.star_kwarg) if isinstance(p, cst.Param)]  # `*args`, `**kwargs`
    parameters = {p.name.value for p in (*params, *every.kwonly_params, *every.posonly_params, *stars)}
    found = set()
    for name, value in plain.items():
        if counts.get(name) != 1 or name in parameters:
            continue
        method = _self_method(value)
        if method is not None and _returns_tuple(class_node, method, ctx):
            found.add(name)
    return frozenset(found)


def _self_method(value: cst.BaseExpression) -> Optional[str]:
    """`m` of `self.m(...)`."""
    if type(value) is not cst.Call:
        return None
    func = value.func  # type: ignore[attr-defined]
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        return func.attr.value
    return None


def _returns_tuple(class_node: cst.ClassDef, method: str, ctx: "Context") -> bool:
    """Does `self.<method>(...)` in `class_node` certainly run the class's own `method`, whose every
    `return` is a tuple display?  Computed once per (class, method); the file's part once per file."""
    return ctx.memo(("tuple-method", id(class_node), method), lambda: _own_tuple_method(class_node, method, ctx))  # type: ignore[return-value]


def _own_tuple_method(class_node: cst.ClassDef, method: str, ctx: "Context") -> bool:
    definitions = []
    for statement in class_node.body.body:  # type: ignore[union-attr]
        inside = () if isinstance(statement, _NO_SCOPES) else tuple(code_descendants(statement, skip=_NO_SCOPES))
        for node in (statement, *inside):  # what binds in the class body: a `def` under an `if` too
            if method in (name for target in bound_by(node) for name in target_names(target)):
                definitions.append(node)
    if len(definitions) != 1 or type(definitions[0]) is not cst.FunctionDef:
        return False
    definition = definitions[0]
    params = definition.params.params
    if definition.decorators or not params or params[0].name.value != "self":
        return False
    if returned_tuple_length(definition) is None:
        return False
    fixed = ctx.memo(("tuple-file", id(ctx.module)), lambda: _FixedMethods(ctx.module))
    return fixed.keeps(class_node, method)  # type: ignore[attr-defined]


class _FixedMethods:
    """What the file does that could make `self.m` run another function than the class's own `m`,
    read in one walk of the file.  Anything it cannot follow makes it answer no (the asker reports).

    A class is unsafe (no method of it is fixed) when it is decorated or has keywords (a metaclass),
    when its name is bound more than once in the file (`class Net(Net)`), when its name is read but as a
    base, a callee `Net(...)` or `super(Net, ...)`'s first argument (an alias `Base = Net`, a borrowed
    `forward = Net.forward`, `Net.encode = ...`), or when a class of the file derives from it (by the
    base's last name, `Net[int]` too).  The whole file is unsafe when it calls `setattr` or `type` with
    three arguments, or a class of it has a base that is no dotted name (a call, an alias bound in the
    file).  A method name is unsafe when the file assigns `<anything>.<name>` or calls `setattr(x, "<name>", ...)`.
(A `setattr` whose name is computed, `setattr(self.module, self.name, w)`, is taken to set no method:
like a subclass in another file, it is a limit, and an asker silent on this fact misses, never invents.)"""

    def __init__(self, module: cst.Module) -> None:
        self.file_unsafe = False
        self.unsafe_classes: set[str] = set()
        self.replaced: set[str] = set()
        class_bindings: dict[str, int] = {}
        assigned: set[str] = set()
        allowed: set[int] = set()  # Name nodes read as a base, callee or super()'s first argument
        classes: list[cst.ClassDef] = []
        names: list[cst.Name] = []
        for node in code_descendants(module):
            kind = type(node)
            if kind is cst.ClassDef:
                classes.append(node)  # type: ignore[arg-type]
                allowed.add(id(node.name))  # type: ignore[attr-defined]
                if node.decorators or node.keywords:  # type: ignore[attr-defined]
                    self.unsafe_classes.add(node.name.value)  # type: ignore[attr-defined]
                for base in node.bases:  # type: ignore[attr-defined]
                    value = base.value.value if type(base.value) is cst.Subscript else base.value
                    for part in (value, *code_descendants(value)):
                        if type(part) is cst.Name:
                            allowed.add(id(part))
            elif kind is cst.Call:
                func = node.func  # type: ignore[attr-defined]
                if type(func) is cst.Name:
                    allowed.add(id(func))
                    if func.value == "type" and len(node.args) == 3:  # type: ignore[attr-defined]
                        self.file_unsafe = True  # a class made at run time, of any bases and methods
                    if func.value == "setattr" and len(node.args) >= 2:  # type: ignore[attr-defined]
                        name = node.args[1].value  # type: ignore[attr-defined]
                        if type(name) is cst.SimpleString:
                            self.replaced.add(name.evaluated_value)  # type: ignore[attr-defined,arg-type]
                    if func.value == "super" and node.args and type(node.args[0].value) is cst.Name:  # type: ignore[attr-defined]
                        allowed.add(id(node.args[0].value))  # type: ignore[attr-defined]
            elif kind is cst.Name:
                names.append(node)  # type: ignore[arg-type]
            for target in bound_by(node, parameters=True, declarations=True):
                for part in (target, *code_descendants(target)):
                    if type(part) is cst.Attribute:
                        self.replaced.add(part.attr.value)  # type: ignore[attr-defined]
                for name in target_names(target):
                    assigned.add(name)
                    if kind is cst.ClassDef:
                        class_bindings[name] = class_bindings.get(name, 0) + 1
                    else:
                        class_bindings[name] = class_bindings.get(name, 0) + 2  # any other binding: more than once
        class_names = {c.name.value for c in classes}
        for name, count in class_bindings.items():
            if name in class_names and count != 1:
                self.unsafe_classes.add(name)
        for node in names:
            if node.value in class_names and id(node) not in allowed:
                self.unsafe_classes.add(node.value)
        for node in classes:
            for base in node.bases:
                value = base.value.value if type(base.value) is cst.Subscript else base.value
                dotted = _dotted_last(value)
                if dotted is None:
                    self.file_unsafe = True
                    continue
                if type(value) is cst.Name and value.value in assigned and value.value not in class_names:
                    self.file_unsafe = True  # an alias the file binds: it may name any class
                self.unsafe_classes.add(dotted)  # its methods may be overridden there

    def keeps(self, class_node: cst.ClassDef, method: str) -> bool:
        return not self.file_unsafe and class_node.name.value not in self.unsafe_classes and method not in self.replaced


def _dotted_last(expr: cst.BaseExpression) -> Optional[str]:
    """The last name of a dotted name (`nn.Module` -> `Module`), or None for anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute and _dotted_last(expr.value) is not None:  # type: ignore[attr-defined]
        return expr.attr.value  # type: ignore[attr-defined]
    return None


def _decorated_as_non_method(function: cst.FunctionDef) -> bool:
    return any(type(d.decorator) is cst.Name and d.decorator.value in ("staticmethod", "classmethod") for d in function.decorators)
