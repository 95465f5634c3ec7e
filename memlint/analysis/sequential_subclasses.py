"""Module classes of the file that are an `nn.Sequential` and nothing more: their constructor's own
`self.add_module(...)` calls build a sequence of layers that runs as `net.add_module(...)` on a
local `net = nn.Sequential()` does.

deeplab-pytorch's block:

    class _ConvBnReLU(nn.Sequential):
        def __init__(self, in_ch, out_ch, ..., relu=True):
            super().__init__()
            self.add_module("conv", nn.Conv2d(...))
            self.add_module("bn", BatchNorm2d(out_ch))
            if relu:
                self.add_module("relu", nn.ReLU())

Such a class runs its layers in the order they were added, each on its neighbour's output, where
nothing changes that: the class is a direct subclass of `nn.Sequential` alone (no other base, no
decorator, no metaclass) whose body defines no method but `__init__` and binds no `forward`,
`__call__` or other name that changes how it runs or is iterated; no class of the file derives
from it (a subclass's `forward` could run one layer alone); the constructor adds each layer under
its own literal key (a key added twice replaces the layer where it stood); and nothing in the file
replaces a container's elements or runs a part of one (`block[1](x)`, `block[1:]`: whoever holds an
instance is not known by name, so any such part counts).  The class's name is bound by its `class`
statement alone (no import, assignment, parameter or star import may rebind it; no attribute of the
class is set: `Block.forward = ...`), and every instance is made as `self.block = Block(...)` or
`net.add_module("key", Block(...))`, each `.block` / `.key` of the file only called, assigned or
read as a plain Sequential on `self` is (attribute_owners.path_used_other_than_called: not iterated,
extended, handed on, no child of it reached by its key).  Hooks are the asker's (with no name for the
instance, any hook of the file may be on one).  Instances made and used in other files are not
seen (the same limit as a Sequential stored on `self`).  ML003 asks it for the activations such a
constructor adds right after a layer that keeps nothing of its output.

DensePose's ASPP branches hand their layers to the Sequential's own constructor instead
(`super().__init__(*modules)`, `constructor_layers`), and keep their instances in a local list
that becomes one `self.convs = nn.ModuleList(modules)`: an instance may be held so where every
mention of that container runs its elements whole (analysis/sequential_homes.py).  Asked for the
order of the constructor's layers (not for what a call returns), a `forward` that runs
`super().forward(x)` and names `self` nowhere else (ASPPPooling's, which then resizes) keeps them
running in order too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis.attribute_owners import path_used_other_than_called
from memlint.analysis.bindings import bound_names
from memlint.analysis.constants import literal_bool
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.module_changes import ANY, elements_may_change_anywhere, module_changes
from memlint.analysis.norm_layers import norm_built
from memlint.analysis.sequences import added_layer, sequential_elements
from memlint.analysis.sequential_homes import runs_elements_whole
from memlint.analysis.walk import code_descendants, code_with_parents

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Names a class body may bind that change how an instance runs, is iterated or indexed.
_RUNNING_NAMES = frozenset(
    {"forward", "__call__", "_call_impl", "__iter__", "__getitem__", "__setitem__", "__delitem__", "__len__",
     "append", "extend", "insert", "pop", "add_module", "register_module", "_modules", "__getattr__", "__setattr__"}
)  # fmt: skip


def sequential_subclass_constructor(ctx: "Context", function: cst.FunctionDef) -> bool:
    """Is `function` the `__init__` of such a class (see the module's doc)?"""
    if function.name.value != "__init__" or ctx.class_name is None:
        return False
    owner = plain_sequential_class(ctx, ctx.class_name, whole_forward=True)
    return owner is not None and _constructor(owner) is function


def constructor_layers(ctx: "Context", function: cst.FunctionDef) -> list[tuple[cst.BaseExpression, Optional[cst.CSTNode]]]:
    """The layers the constructor of such a class (see the module's doc) hands the Sequential's own
    constructor, in order, each with the node whose comments belong to it: DensePose's `modules =
    [conv, norm, nn.ReLU()]`, then `super().__init__(*modules)`, or `super().__init__(pool, conv,
    norm, nn.ReLU())`.  The call is one line of the constructor's own body (not in a branch), the
    only such call; a list it unpacks is a display the constructor binds once and names nowhere
    else.  [] where that is not so: an instance runs these layers in order, each on its
    neighbour's output (layers the constructor adds after them follow the last)."""
    if not sequential_subclass_constructor(ctx, function) or type(function.body) is not cst.IndentedBlock:
        return []
    calls = [n for n in code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.Call and _super_init(n)]
    if len(calls) != 1 or not any(_statement_call(statement) is calls[0] for statement in function.body.body):
        return []
    call = calls[0]
    args = call.args  # type: ignore[attr-defined]
    if len(args) == 1 and args[0].star == "*" and type(args[0].value) is cst.Name:
        display = _display_only_unpacked(function, args[0].value.value)
        if display is None or not all(type(e) is cst.Element for e in display.elements):
            return []
        return [(e.value, e) for e in display.elements]
    if any(a.star or a.keyword is not None for a in args):
        return []
    return sequential_elements(call, ctx)  # type: ignore[arg-type]


def _super_init(call: cst.Call) -> bool:
    """`super().__init__(...)` or `super(Block, self).__init__(...)`."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "__init__":  # type: ignore[attr-defined]
        return False
    receiver = func.value  # type: ignore[attr-defined]
    return type(receiver) is cst.Call and type(receiver.func) is cst.Name and receiver.func.value == "super"  # type: ignore[attr-defined]


def _statement_call(statement: cst.CSTNode) -> Optional[cst.CSTNode]:
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1 or type(statement.body[0]) is not cst.Expr:  # type: ignore[attr-defined]
        return None
    return statement.body[0].value  # type: ignore[attr-defined]


def _display_only_unpacked(function: cst.FunctionDef, name: str) -> Optional[cst.List | cst.Tuple]:
    """The list or tuple display `name` is bound to, where the function binds it once (a plain
    `name = [...]`) and names it only there and where it is unpacked."""
    display = None
    mentions = 0
    for node in code_descendants(function.body):
        if type(node) is cst.Name and node.value == name:  # type: ignore[attr-defined]
            mentions += 1
        elif type(node) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == name for t in node.targets):  # type: ignore[attr-defined]
            if len(node.targets) != 1 or type(node.value) not in (cst.List, cst.Tuple) or display is not None:  # type: ignore[attr-defined]
                return None
            display = node.value  # type: ignore[attr-defined]
    return display if mentions == 2 else None  # type: ignore[return-value]


def plain_sequential_class(ctx: "Context", name: str, whole_forward: bool = False) -> Optional[cst.ClassDef]:
    """The top-level class `name` of the file where it is such a class (see the module's doc).  With
    `whole_forward`, also where the class defines a `forward` that runs the Sequential's own
    (`super().forward(x)`) and names `self` nowhere else (DensePose's ASPPPooling, which then
    interpolates the result): its layers still run in order, each on its neighbour's output, but
    what its call returns is no longer its last layer's output (`last_added_layer` does not ask so)."""
    return ctx.memo(("sequential-subclass", name, whole_forward), lambda: _plain_class(ctx, name, whole_forward))  # type: ignore[return-value]


def last_added_layer(ctx: "Context", built: cst.Call) -> Optional[str]:
    """The torch.nn class of the layer that `built` (`Block(c, relu=False)`, a call of such a class
    of the file) adds last, for that call's arguments: what its call returns is that layer's output.
    Known where the constructor's body is, in order, its docstring, `super().__init__()` with no
    arguments, `self.add_module("key", layer)` statements and `if flag:` blocks of such statements
    (no `else`), each `flag` a parameter the constructor never rebinds that the call gives a literal
    `True` / `False`, or leaves to such a default; a norm the file names otherwise (a module global
    every binding of which is a norm class: analysis/norm_layers.py) counts as "BatchNorm2d".  None
    where it is not known."""
    return ctx.memo(("sequential-last-layer", id(built)), lambda: _last_added_layer(ctx, built))  # type: ignore[return-value]


def _last_added_layer(ctx: "Context", built: cst.Call) -> Optional[str]:
    if type(built.func) is not cst.Name:
        return None
    owner = plain_sequential_class(ctx, built.func.value)  # type: ignore[attr-defined]
    init = _constructor(owner) if owner is not None else None
    if init is None or type(init.body) is not cst.IndentedBlock:
        return None
    flags = _literal_flags(init, built)
    if flags is None:
        return None
    last: Optional[cst.Call] = None
    for statement in init.body.body:
        if type(statement) is cst.If:
            test = statement.test
            if statement.orelse is not None or type(test) is not cst.Name or test.value not in flags:  # type: ignore[attr-defined]
                return None
            if type(statement.body) is not cst.IndentedBlock:
                return None
            for inner in statement.body.body:
                added = _added_to_self(inner)
                if added is None:
                    return None
                if flags[test.value]:  # type: ignore[attr-defined]
                    last = added
            continue
        added = _added_to_self(statement)
        if added is not None:
            last = added
        elif not _docstring_or_super_init(statement):
            return None  # (`self.head = nn.Linear(...)` adds a layer too; a helper may add any)
    if last is None:
        return None
    kind = torch_nn_name(ctx, last.func)
    if kind is None and type(last.func) is cst.Name and last.func.value not in _bound_in(init):  # type: ignore[attr-defined]
        kind = "BatchNorm2d" if norm_built(ctx, last, init) is not None else None
    return kind


def _constructor(owner: cst.ClassDef) -> Optional[cst.FunctionDef]:
    return next((s for s in owner.body.body if type(s) is cst.FunctionDef and s.name.value == "__init__"), None)  # type: ignore[attr-defined]


def _plain_class(ctx: "Context", name: str, whole_forward: bool = False) -> Optional[cst.ClassDef]:
    owner = next((s for s in ctx.module.body if type(s) is cst.ClassDef and s.name.value == name), None)  # type: ignore[attr-defined]
    if owner is None or sum(1 for s in ctx.module.body if type(s) is cst.ClassDef and s.name.value == name) != 1:  # type: ignore[attr-defined]
        return None  # (a class defined twice under one name: which one runs is not known here)
    if owner.decorators or len(owner.bases) != 1 or owner.keywords:
        return None
    base = owner.bases[0]
    if base.keyword is not None or base.star or torch_nn_name(ctx, base.value) != "Sequential":
        return None
    init = _constructor(owner)
    if init is None:
        return None
    forwards = 0
    for statement in owner.body.body:  # type: ignore[attr-defined]
        if statement is init:
            continue
        if whole_forward and type(statement) is cst.FunctionDef and statement.name.value == "forward" and _runs_whole(statement, name):  # type: ignore[attr-defined]
            forwards += 1
            continue
        if type(statement) is not cst.SimpleStatementLine:
            return None  # another method, a nested class, a branch binding who knows what
        for small in statement.body:  # type: ignore[attr-defined]
            if type(small) is cst.Expr and type(small.value) in (cst.SimpleString, cst.ConcatenatedString):  # type: ignore[attr-defined]
                continue  # the docstring
            targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target] if type(small) is cst.AnnAssign else None  # type: ignore[attr-defined]
            if targets is None or any(type(t) is not cst.Name or t.value in _RUNNING_NAMES for t in targets):  # type: ignore[attr-defined]
                return None
    if forwards > 1:
        return None
    changes = module_changes(ctx)
    if changes.subclasses.get(name) or changes.changed_elements or _parts_read(ctx) or elements_may_change_anywhere(ctx):
        return None
    return owner if _keys_distinct(init) and _instances_run_whole(ctx, owner) else None


def _runs_whole(forward: cst.FunctionDef, name: str) -> bool:
    """Does `forward` name `self` only as its first parameter and in `super(<name>, self)`, use
    `super()` only to call the Sequential's own `forward` (or `__init__`), and call that `forward`
    (no decorator, nothing nested)?"""
    if forward.decorators or not forward.params.params or forward.params.params[0].name.value != "self":
        return False
    runs = False
    for node, parents in code_with_parents(forward.body, nearest=3):
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            return False
        if kind is cst.Name and node.value == "self":  # type: ignore[attr-defined]
            if not _super_argument_of(node, parents, name):
                return False
        elif kind is cst.Call and type(node.func) is cst.Name and node.func.value == "super":  # type: ignore[attr-defined]
            if not _runs_own_method(node, parents):
                return False  # `super().__getitem__(2)`: the parts reached through `super()`
        elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "forward":  # type: ignore[attr-defined]
            receiver = node.func.value  # type: ignore[attr-defined]
            runs = runs or (type(receiver) is cst.Call and type(receiver.func) is cst.Name and receiver.func.value == "super")  # type: ignore[attr-defined]
    return runs


def _runs_own_method(node: cst.Call, parents: tuple) -> bool:
    """`super()` (or `super(<name>, self)`) as the receiver of `.forward(...)` or `.__init__(...)`
    called at once: the whole Sequential run, or built; any other use may reach its parts."""
    if len(parents) < 2 or type(parents[-1]) is not cst.Attribute or type(parents[-2]) is not cst.Call:
        return False
    attribute = parents[-1]
    return attribute.value is node and attribute.attr.value in ("forward", "__init__") and parents[-2].func is attribute  # type: ignore[attr-defined]


def _super_argument_of(node: cst.Name, parents: tuple, name: str) -> bool:
    """`self` in `super(<name>, self)`."""
    if len(parents) < 2 or type(parents[-1]) is not cst.Arg or type(parents[-2]) is not cst.Call:
        return False
    call = parents[-2]
    args = call.args  # type: ignore[attr-defined]
    if type(call.func) is not cst.Name or call.func.value != "super" or len(args) != 2 or args[1] is not parents[-1]:  # type: ignore[attr-defined]
        return False
    return type(args[0].value) is cst.Name and args[0].value.value == name


def _parts_read(ctx: "Context") -> bool:
    """Does the file run or read a part of something that may hold an instance?  A part of a name
    the file binds nowhere, neither as a name nor as an attribute (DensePose's `x.shape[-2:]`: a
    tensor's `shape`), is none of an instance's: each instance is held where the file puts it
    (`_instances_run_whole`), and putting it under that name would bind the name."""
    changes = module_changes(ctx)
    if not changes.parts_read:
        return False
    if changes.bindings.get(ANY) or any(changes.bindings.get(n, 0) for n in changes.parts_read):
        return True
    if any(n in bound for bound in changes.own.values() for n in changes.parts_read):
        return True
    bound_here: set = ctx.memo("names-bound-in-file", lambda: bound_names(ctx.module, nested=True))  # type: ignore[assignment]
    return any(n in bound_here or n is None for n in changes.parts_read)


def _instances_run_whole(ctx: "Context", owner: cst.ClassDef) -> bool:
    """Is the class's name bound by its `class` statement alone (no import, assignment, parameter or
    star import may rebind it; no attribute of the class is set: `Block.forward = ...`), and is each
    instance made where it is only ever run whole: `self.<attribute> = Block(...)` or
    `<module>.add_module("<key>", Block(...))`, every `.<attribute>` / `.<key>` of the file only
    called, assigned or read as a plain `self.block` is (analysis/attribute_owners.py: not iterated,
    no child of it run, reached or hooked by key, not extended, not handed on)?"""
    mentions, star = _class_mentions(ctx)
    if star:
        return False  # (`from layers import *` after the class may rebind its name)
    for node, parents in mentions.get(owner.name.value, ()):
        if node is owner.name or _super_argument(node, parents):
            continue
        home = _listed_home(ctx, node, parents)
        if home is not None:
            if not runs_elements_whole(ctx, home):
                return False
            continue
        held = _holder(node, parents)
        if held is None or path_used_other_than_called(held, ctx):
            return False
    return True


def _listed_home(ctx: "Context", node: cst.Name, parents: tuple) -> Optional[str]:
    """DensePose's ASPP: `modules.append(Block(...))`, where the function binds `modules` once, to
    `[]`, only appends to it, and hands it to one `self.<home> = nn.ModuleList(modules)`: the
    container's attribute, whose mentions say whether each element only ever runs whole
    (analysis/sequential_homes.py); None for any other mention."""
    if len(parents) < 4 or type(parents[-1]) is not cst.Call or parents[-1].func is not node:  # type: ignore[attr-defined]
        return None
    argument, adding = parents[-2], parents[-3]
    if type(argument) is not cst.Arg or argument.keyword is not None or argument.star or type(adding) is not cst.Call:  # type: ignore[attr-defined]
        return None
    func = adding.func  # type: ignore[attr-defined]
    if type(func) is not cst.Attribute or func.attr.value != "append" or type(func.value) is not cst.Name or len(adding.args) != 1:  # type: ignore[attr-defined]
        return None
    function = next((p for p in reversed(parents) if type(p) in (cst.FunctionDef, cst.ClassDef, cst.Lambda)), None)
    if type(function) is not cst.FunctionDef:
        return None
    name = func.value.value  # type: ignore[attr-defined]
    # once per function and list: every instance appended to it asks the same
    return ctx.memo(("list-given-to-container", id(function), name), lambda: _list_given_to_container(ctx, function, name))  # type: ignore[return-value]


def _list_given_to_container(ctx: "Context", function: cst.FunctionDef, name: str) -> Optional[str]:
    """The `<home>` of the one `self.<home> = nn.ModuleList(name)` of `function`, where every other
    mention of `name` there is its one binding to `[]` or the receiver of `.append(...)`."""
    home: Optional[str] = None
    bound = False
    for node, parents in code_with_parents(function.body, nearest=3):
        if type(node) is not cst.Name or node.value != name:  # type: ignore[attr-defined]
            continue
        parent = parents[-1] if parents else None
        grand = parents[-2] if len(parents) > 1 else None
        if type(parent) is cst.Attribute and parent.attr is node:  # type: ignore[attr-defined]
            continue  # (`self.branches`: an attribute's name, not the local)
        if type(parent) is cst.AssignTarget and not bound and type(grand) is cst.Assign and len(grand.targets) == 1:  # type: ignore[attr-defined]
            value = grand.value  # type: ignore[attr-defined]
            if type(value) is not cst.List or value.elements:  # type: ignore[attr-defined]
                return None
            bound = True
        elif type(parent) is cst.Attribute and parent.value is node and parent.attr.value == "append" and type(grand) is cst.Call and grand.func is parent:  # type: ignore[attr-defined]
            continue
        elif type(parent) is cst.Arg and home is None and not parent.star and parent.keyword is None and type(grand) is cst.Call:  # type: ignore[attr-defined]
            above = parents[-3] if len(parents) > 2 else None
            if len(grand.args) != 1 or torch_nn_name(ctx, grand.func) != "ModuleList":  # type: ignore[attr-defined]
                return None
            if type(above) is not cst.Assign or above.value is not grand or len(above.targets) != 1:  # type: ignore[attr-defined]
                return None
            target = above.targets[0].target  # type: ignore[attr-defined]
            if type(target) is not cst.Attribute or type(target.value) is not cst.Name or target.value.value != "self":  # type: ignore[attr-defined]
                return None
            home = target.attr.value  # type: ignore[attr-defined]
        else:
            return None
    return home if bound else None


def _super_argument(node: cst.Name, parents: tuple) -> bool:
    """`super(Block, self)`: a mention that builds nothing and binds nothing."""
    if len(parents) < 2 or type(parents[-1]) is not cst.Arg or parents[-1].value is not node:  # type: ignore[attr-defined]
        return False
    call = parents[-2]
    return type(call) is cst.Call and type(call.func) is cst.Name and call.func.value == "super"  # type: ignore[attr-defined]


def _holder(node: cst.Name, parents: tuple) -> Optional[str]:
    """The attribute or key an instance built by this mention of the class is held under, where the
    mention is such a call (see `_instances_run_whole`); None for any other mention."""
    if len(parents) < 3 or type(parents[-1]) is not cst.Call or parents[-1].func is not node:  # type: ignore[attr-defined]
        return None
    # (a branch of a conditional expression, `Block(...) if downsample else nn.Identity()`, is held as the whole)
    call, at = parents[-1], len(parents) - 2
    while at > 0 and type(parents[at]) is cst.IfExp and parents[at].test is not call:  # type: ignore[attr-defined]
        call, at = parents[at], at - 1
    above = parents[at]
    if type(above) is cst.Assign and above.value is call and len(above.targets) == 1:  # type: ignore[attr-defined]
        target = above.targets[0].target  # type: ignore[attr-defined]
        if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":  # type: ignore[attr-defined]
            return target.attr.value  # type: ignore[attr-defined]
        return None
    adding = parents[at - 1]
    if type(above) is not cst.Arg or above.value is not call or above.keyword is not None or type(adding) is not cst.Call:  # type: ignore[attr-defined]
        return None
    func, args = adding.func, adding.args  # type: ignore[attr-defined]
    if type(func) is not cst.Attribute or func.attr.value != "add_module" or len(args) != 2 or args[1] is not above:  # type: ignore[attr-defined]
        return None
    key = args[0].value
    if args[0].keyword is not None or type(key) is not cst.SimpleString or not isinstance(key.evaluated_value, str):  # type: ignore[attr-defined]
        return None
    return key.evaluated_value  # type: ignore[attr-defined, return-value]


def _class_mentions(ctx: "Context") -> tuple[dict[str, list], bool]:
    """Every mention of the file's top-level class names, with its parents (one walk per file), and
    whether the file has a star import."""
    return ctx.memo("sequential-class-mentions", lambda: _collect_mentions(ctx.module))  # type: ignore[return-value]


def _collect_mentions(module: cst.Module) -> tuple[dict[str, list], bool]:
    names = {s.name.value for s in module.body if type(s) is cst.ClassDef}  # type: ignore[attr-defined]
    mentions: dict[str, list] = {}
    for node, parents in code_with_parents(module):
        if type(node) is cst.Name and node.value in names:  # type: ignore[attr-defined]
            mentions.setdefault(node.value, []).append((node, parents))  # type: ignore[attr-defined]
    # (a star import is allowed at module level only)
    star = any(
        type(small) is cst.ImportFrom and type(small.names) is cst.ImportStar  # type: ignore[attr-defined]
        for statement in module.body if type(statement) is cst.SimpleStatementLine
        for small in statement.body  # type: ignore[attr-defined]
    )  # fmt: skip
    return mentions, star


def _added_to_self(statement: cst.CSTNode) -> Optional[cst.Call]:
    """`self.add_module("key", layer)` -> the layer."""
    added = added_layer(statement)
    return added[2] if added is not None and added[:2] == ("add_module", "self") else None


def _docstring_or_super_init(statement: cst.CSTNode) -> bool:
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return False
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is not cst.Expr:
        return False
    value = small.value
    if type(value) in (cst.SimpleString, cst.ConcatenatedString):
        return True
    return type(value) is cst.Call and not value.args and _super_init(value)  # type: ignore[attr-defined]


def _literal_flags(init: cst.FunctionDef, built: cst.Call) -> Optional[dict[str, bool]]:
    """The constructor's parameters that `built` gives a literal `True` / `False` (or leaves to such a
    default) and that the constructor never rebinds: name -> value.  None where a call argument is
    unpacked (`*args`, `**kw`): then no parameter's value is known."""
    if any(a.star for a in built.args):
        return None
    params = [p for p in init.params.params][1:]  # (after `self`)
    given: dict[str, cst.BaseExpression] = {}
    positional = [a.value for a in built.args if a.keyword is None]
    if len(positional) > len(params):
        return None
    for param, value in zip(params, positional):
        given[param.name.value] = value
    for arg in built.args:
        if arg.keyword is not None:
            given[arg.keyword.value] = arg.value
    rebound = _bound_in(init)
    flags: dict[str, bool] = {}
    for param in (*params, *init.params.kwonly_params):
        name = param.name.value
        flag = literal_bool(given.get(name, param.default))
        if flag is not None and name not in rebound:
            flags[name] = flag
    return flags


def _bound_in(function: cst.FunctionDef) -> set[str]:
    """The plain names the function's body binds (an assignment, a loop, `with ... as`, ...)."""
    return bound_names(function.body)


def _keys_distinct(function: cst.FunctionDef) -> bool:
    """Does every `self.add_module(key, ...)` of the constructor name its own literal key?"""
    keys: list[str] = []
    for node in code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and func.attr.value in ("add_module", "register_module") and type(func.value) is cst.Name and func.value.value == "self":  # type: ignore[attr-defined]
            key = node.args[0].value if node.args else None  # type: ignore[attr-defined]
            if type(key) is not cst.SimpleString:
                return False  # (a key built per turn of a loop: the pairs are the asker's, added_layers.py)
            keys.append(key.value)  # type: ignore[attr-defined]
    return len(keys) == len(set(keys))
