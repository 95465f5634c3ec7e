"""What in a file can change a module after its constructor built it, or see what its layers output:
attributes bound more than once (`self.fc = nn.Linear(4, 4)`, then `self.fc = nn.Identity()` in a
branch, or `model.fc = nn.Identity()` elsewhere), containers whose elements are replaced
(`features[0] = ...`, `del features[0]`, `features.insert(...)`), and hooks that see a layer's input
or output (`register_forward_hook`, a full backward hook, a feature extractor; not a forward pre-hook
that reads none of its inputs: analysis/blind_hooks.py).

A rule that trusts "this attribute is the layer the constructor built" (ML003's `inplace=True` on a
fresh layer output) asks here first.  It is by name, and errs towards "may change": `self.fc` is
trusted in a class when the class and its subclasses in the file bind it once, and nothing else in
the file binds an attribute `fc` (`model.fc = ...`, `setattr(m, "fc", ...)`, `self.fc = ...` in a
function outside a class).  Code outside the file (another file replacing `model.fc`, hooking it)
is not seen.

Two facts narrow that for askers who need less than "the constructor's layer".  A `setattr` whose
name starts with a literal (`setattr(m, "bn" + suffix, ...)`, `f"bn{i}"`, `"bn%d" % i`, also a name
the file binds once to such a string) binds only attributes with that prefix.  And a binding whose
value is a new layer that keeps nothing of its output (`model.conv1 = nn.Conv2d(...)`, torch's
`fuse_conv_bn_eval(...)`, which returns a new convolution: DomainBed's batch-norm folding, also by
a name not literal) leaves `self.conv1(x)` a fresh output whichever object it lands on:
`rebound_only_to_fresh_layers` (ML003's fresh layer outputs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.bindings import bound_by, bound_targets, erring_names
from memlint.analysis.blind_hooks import PRE_HOOK_REGISTRATIONS, blind_pre_hook
from memlint.analysis.initialisers import resolve_global
from memlint.analysis.tables import FRESH_OUTPUT_LAYERS
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Registrations of code that sees a module's input or output (or wraps the output, as full backward
# hooks do, which then refuse an in-place change of it), and tools that return intermediate outputs.
# Not here: the legacy `register_backward_hook` / `register_module_backward_hook`.  Torch registers
# such a hook on the `grad_fn` of the module's output (the module's own last autograd node) when the
# module runs; it is handed that node's gradients, never the output tensor, and the output is not
# wrapped, so an in-place activation after the module changes neither what the hook sees nor the
# gradients (checked on the CPU: identical gradients with the hook, in place or not).
HOOK_REGISTRATIONS = frozenset(
    {"register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook",
     "register_full_backward_pre_hook", "register_module_forward_hook",
     "register_module_forward_pre_hook", "register_module_full_backward_hook",
     "register_module_full_backward_pre_hook", "create_feature_extractor", "IntermediateLayerGetter"}
)  # fmt: skip
# Libraries that hook the modules of a model handed to them (captum's DeepLift hooks every
# nonlinearity; grad-cam tools hook the layers they are given; shap's DeepExplainer hooks them all):
# any call of what the file imports from them is a hook on a module not known by name.
_HOOKING_LIBRARIES = ("captum", "pytorch_grad_cam", "torchcam", "shap", "lucent", "torchray")
# Registrations on the module they are called on (`register_module_forward_hook` and friends hook
# every module).
_ON_A_MODULE = ("register_forward", "register_full_backward", "register_backward")
# Values that bind a second name to an existing object.
_ALIASES = frozenset({cst.Name, cst.Attribute, cst.Subscript})
# Nodes whose `target` a subscript may be (stored into or deleted, not read out).
_TARGETED = frozenset({cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del, cst.For})
# Methods of nn.Sequential / nn.ModuleList / nn.ModuleDict that replace or remove elements.
_ELEMENT_CHANGES = frozenset({"insert", "pop", "__setitem__", "__delitem__"})
# Calls that bind an attribute by a name given as a string (a buffer or parameter cannot take the
# name of a submodule: torch refuses it).
_NAMED_BINDINGS = {"setattr": 1, "add_module": 0, "register_module": 0}
ANY = "*"  # an attribute bound by a name that is not a literal: every attribute may be
# torch functions that return a new layer whose output nothing keeps: `fuse_conv_bn_eval(conv, bn)`
# returns a deep copy of the convolution with the norm folded into its weights (torch 2.13's source).
_NEW_FRESH_LAYER_FUNCTIONS = frozenset(
    {"torch.nn.utils.fusion.fuse_conv_bn_eval", "torch.nn.utils.fuse_conv_bn_eval"}
)  # fmt: skip


@dataclass(frozen=True)
class ModuleChanges:
    bindings: dict  # attribute name -> places binding it other than `self.<name>` in a class (ANY: a name unknown)
    own: dict  # class name -> attribute name -> how many `self.<name> = ...` the class binds
    subclasses: dict  # class name -> the classes of the file derived from it (by name, transitively)
    changed_elements: frozenset[str]  # last names of containers whose elements are replaced or removed
    hooked: bool  # the file registers a hook or extracts intermediate outputs
    hooked_names: frozenset[str]  # attribute names on the way to a hooked module (`model.layer4[-1].conv2`: layer4, conv2)
    hooked_unknown: bool  # a hook on a module not reached by attribute names (`m` of `model.modules()`, a global hook)
    # of `bindings`, those whose value is a new layer keeping nothing of its output (ANY included)
    fresh_bindings: dict = field(default_factory=dict)
    # literal prefixes of `setattr` names otherwise unknown (`"bn" + suffix`): they bind only names so starting
    prefixes: frozenset = frozenset()
    # last names of containers a part of which is read out to run (`mlp[1:]`, `mlp[2](x)`, not `mlp[0].weight`)
    parts_read: frozenset = frozenset()
    # of `parts_read`, per name the positions (start, stop) of each part read; None for one not known
    part_ranges: dict = field(default_factory=dict)
    # of `changed_elements`, those changed through a plain name (`m[0] = ...` on `m` of `model.modules()`,
    # a parameter of a function handed to `model.apply`): it may be any module of the file
    changed_through_names: tuple = ()
    # Per container name of `parts_read` / `changed_elements`, whose container each read or change
    # may be: the top-level class whose method reads `self.<name>[...]` (`_nodes_with_owners`), or
    # None for any other receiver (another object, a plain name, a nested class's `self`), which may
    # be any class's.  A name missing here is owned by None alone (a hand-built ModuleChanges).
    part_owners: dict = field(default_factory=dict)  # name -> {owner: frozenset of (start, stop) or None}
    change_owners: dict = field(default_factory=dict)  # name -> frozenset of owners
    # Container names some class's `self.<name>` may hold another object's container under: a
    # class binds it to anything but a call (`self.body = net.body`, a constructor parameter), by
    # another form (`for`, `with`, a static method), or on another object.  A read or change
    # through `self.<name>` then may be of any class's, whichever class's method does it.
    shared_names: frozenset = frozenset()
    # The file relates classes in ways their plain-named bases do not show (`BasicBlock = Basic`
    # then `class Probe(BasicBlock)`, a base that is a call, `type("M", (Probe, Basic), {})`):
    # which classes share an instance is unknown, so every class counts as related to every other.
    relations_unknown: bool = False
    # The file names `_modules`, `__dict__` or `__setattr__`: a submodule may be replaced without a
    # `self.<name> = ...` the binding counts see.
    rebinds_unseen: bool = False
    _related_memo: dict = field(default_factory=dict, compare=False, repr=False)

    def bound_once(self, attribute: str, class_name: str | None) -> bool:
        """Is `self.<attribute>` of the class bound in exactly one place (its constructor's), with
        no other binding of that name in the file, on another object or in a subclass?"""
        if ANY in self.bindings or self.bindings.get(attribute, 0) or class_name is None or self._prefixed(attribute):
            return False
        classes = [class_name, *self.subclasses.get(class_name, ())]
        return sum(self.own.get(c, {}).get(attribute, 0) for c in classes) == 1

    def rebound_only_to_fresh_layers(self, attribute: str, class_name: str | None) -> bool:
        """Is `self.<attribute>` bound once in the class (and its subclasses), and every other
        binding of a name that may be it in the file (another object's `model.conv1 = ...`, a
        `setattr` by a name not literal) a new layer that keeps nothing of its output?  Then, where
        the constructor's layer is one too, its call returns a fresh output whichever binding holds."""
        if class_name is None or self._prefixed(attribute):
            return False
        if any(self.bindings.get(k, 0) != self.fresh_bindings.get(k, 0) for k in (attribute, ANY)):
            return False
        classes = [class_name, *self.subclasses.get(class_name, ())]
        return sum(self.own.get(c, {}).get(attribute, 0) for c in classes) == 1

    def _prefixed(self, attribute: str) -> bool:
        return any(bound_by_prefix(attribute, prefix) for prefix in self.prefixes)

    def class_bindings(self, attribute: str, class_name: str | None) -> int | None:
        """How many `self.<attribute> = ...` the class and its subclasses in the file write; None
        where something else in the file binds an attribute of that name (another object's, by a
        name not literal)."""
        if ANY in self.bindings or self.bindings.get(attribute, 0) or class_name is None or self._prefixed(attribute):
            return None
        classes = [class_name, *self.subclasses.get(class_name, ())]
        return sum(self.own.get(c, {}).get(attribute, 0) for c in classes)

    def hooks_may_see(self, names) -> bool:
        """Could a hook of the file see the output of a layer reached only through these attribute
        names (`self.body` for the layers of `self.body = nn.Sequential(...)`, `self.fc` for
        `F.relu(self.fc(x))`)?  A hook on a module reached by other names (`model.avgpool`,
        `self.head`) is on another module or an ancestor, which sees outputs only once every layer
        inside has run; one whose module is not known by name (`m` of `model.modules()`, a module
        passed in, a global hook, a feature extractor) may be on this one."""
        return self.hooked_unknown or any(name in self.hooked_names for name in names)

    def related(self, class_name: str) -> set[str]:
        """The classes of the file whose methods may run on an instance of `class_name`: itself,
        its subclasses, and every base of any of them (by name, transitively): a mixin another
        base of a subclass (`class Net(Basic, Probe)`) runs its methods on that instance too."""
        found = self._related_memo.get(class_name)
        if found is None:
            found = self._related_memo[class_name] = _related(self.subclasses, class_name)
        return found

    def _may_be_the_class(self, owners, class_name: str | None, name: str) -> bool:
        """Could a read or change by one of `owners` (see `part_owners`) be of `self.<name>` of
        `class_name` (None: of any container so named)?"""
        if class_name is None or None in owners or self.relations_unknown or name in self.shared_names:
            return True
        return bool(self.related(class_name) & set(owners))

    def elements_changed(self, name: str, class_name: str | None = None) -> bool:
        """Are elements of a container `name` replaced or removed anywhere in the file?  With
        `class_name`, of the class's `self.<name>`: a change through `self.<name>` in an unrelated
        class's method (two classes naming different containers alike) is not of it."""
        if ANY in self.changed_elements:
            return True
        if name not in self.changed_elements:
            return False
        return self._may_be_the_class(self.change_owners.get(name, (None,)), class_name, name)

    def parts_may_run_apart(self, name: str, class_name: str | None = None) -> bool:
        """Is a part of the container `name` read out (`mlp[1:]`, a Sequential of its layers from the
        second on) or one layer run alone (`mlp[2](x)`), so that a layer may run on a tensor its
        neighbour before it did not make (the caller's input, which an activation in place would
        overwrite)?  Not an element's attribute (`mlp[0].weight`, `mlp[-1].out_features`).  With
        `class_name`, of the class's `self.<name>`: KAIR's `SpyNet` indexes its ModuleList
        `self.basic_module[level]`, which says nothing of `BasicModule`'s Sequential of that name."""
        if name not in self.parts_read:
            return False
        return self._may_be_the_class(self.part_owners.get(name, {None: None}), class_name, name)

    def parts_run(self, name: str, class_name: str | None = None) -> frozenset | None:
        """The parts of the container `name` that run apart, as (start, stop) positions (stop None:
        to the end; negative: from the end): each a slice with literal bounds and no step called at
        once (robustness's VGG: `self.classifier[:4](x)`, `self.classifier[-2:](h)`) or one element
        by a literal index, called (`mlp[2](x)`: (2, 3)).  Within such a part each layer but the first
        runs on its neighbour's output, as in the whole.  None where a part is read otherwise (stored,
        iterated, a bound that is no literal, a step); empty where none is."""
        if name not in self.parts_read:
            return frozenset()
        owners = self.part_owners.get(name)
        if class_name is None or owners is None or self.relations_unknown or name in self.shared_names:
            ranges = self.part_ranges.get(name, frozenset())
        else:
            related = self.related(class_name) | {None}
            ranges = frozenset(r for owner, found in owners.items() if owner in related for r in found)
        return None if None in ranges else frozenset(ranges)


def module_changes(ctx: "Context") -> ModuleChanges:
    return ctx.memo("module-changes", lambda: _collect(ctx.module, ctx))  # type: ignore[return-value]


def elements_may_change_anywhere(ctx: "Context") -> bool:
    """Could the elements of a container the file holds under no name of its own (a Sequential kept
    in a `ModuleList`) be replaced?  Yes where a container reached by no name has its elements
    changed (ANY), where an attribute is bound by a name not literal (`setattr(model, name, ...)`
    may replace a Sequential's element "0"), or where a plain name has its elements changed (`m[0]
    = nn.Identity()` on each `m` of `model.modules()`, in a function handed to `model.apply`, on a
    parameter: it may be any module) unless its function proves it another object: a local, not a
    parameter, every binding of which there is a new tensor (`out = torch.zeros(...)`) or a display,
    number or string (a Sequential refuses those as elements, and so a change of theirs is none of
    a Sequential's)."""
    changes = module_changes(ctx)
    if ANY in changes.changed_elements or ANY in changes.bindings:
        return True
    if not changes.changed_through_names:
        return False
    return ctx.memo("elements-change-anywhere", lambda: _unproven_changes(ctx, len(changes.changed_through_names)))  # type: ignore[return-value]


_SCOPE_KINDS = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
# Calls that make a new container of the standard library, never a module (nor a Sequential's element).
_NEW_BUILTIN_CONTAINERS = frozenset({"dict", "list"})
_NEW_STANDARD_CONTAINERS = frozenset({"collections.OrderedDict", "collections.defaultdict", "collections.Counter"})


def _unproven_changes(ctx: "Context", expected: int) -> bool:
    """Do fewer than `expected` element changes through plain names fall on names their own scope
    proves are not modules (see `elements_may_change_anywhere`)?  (A walk of each function, asked
    only where a plain name's elements change.)"""
    module = ctx.module
    proven = 0
    for scope in (module, *(n for n in code_descendants(module) if type(n) is cst.FunctionDef)):
        inside = list(code_descendants(scope.body if type(scope) is cst.FunctionDef else scope, skip=_SCOPE_KINDS))  # type: ignore[attr-defined]
        changed: list[str] = []
        imported: dict[str, str] = {}  # `from collections import OrderedDict` in the scope: name -> what it names
        for node in inside:
            kind = type(node)
            if kind is cst.ImportFrom:
                imported.update(_standard_imports(node))  # type: ignore[arg-type]
            if kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del):
                target = node.target  # type: ignore[attr-defined]
                if type(target) is cst.Subscript and type(target.value) is cst.Name:  # type: ignore[attr-defined]
                    changed.append(target.value.value)  # type: ignore[attr-defined]
            elif kind is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _ELEMENT_CHANGES and type(node.func.value) is cst.Name:  # type: ignore[attr-defined]
                changed.append(node.func.value.value)  # type: ignore[attr-defined]
        if not changed:
            continue
        parameters = {p.name.value for p in _parameters(scope)} if type(scope) is cst.FunctionDef else set()
        values: dict[str, list] = {}
        for target, value in bound_targets(scope.body if type(scope) is cst.FunctionDef else scope):  # type: ignore[attr-defined]
            if type(target) is cst.Name:
                values.setdefault(target.value, []).append(value)  # type: ignore[attr-defined]
            elif type(target) in (cst.Tuple, cst.List):
                for name in erring_names(target):
                    values.setdefault(name, []).append(None)
        for name in changed:
            bound = values.get(name)
            # (a name the scope imports counts as bound only by that import: `values` says how often)
            local = {k: v for k, v in imported.items() if len(values.get(k, ())) == 1}
            if name not in parameters and bound and all(_not_a_module(ctx, value, values, local) for value in bound):
                proven += 1
    return proven < expected


def _parameters(function: cst.FunctionDef) -> list:
    params = function.params
    return [*params.posonly_params, *params.params, *params.kwonly_params,
            *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param))]


def _standard_imports(node: cst.ImportFrom) -> dict[str, str]:
    """`from collections import OrderedDict as OD` -> {"OD": "collections.OrderedDict"}: the names a
    function-level import of the standard containers binds (`resolve_global` reads only the module's)."""
    if node.relative or type(node.module) is not cst.Name or node.module.value != "collections" or isinstance(node.names, cst.ImportStar):
        return {}
    return {
        (alias.asname.name.value if alias.asname else alias.name.value): f"collections.{alias.name.value}"  # type: ignore[union-attr, attr-defined]
        for alias in node.names if type(alias.name) is cst.Name
    }  # fmt: skip


def _not_a_module(ctx: "Context", value: cst.BaseExpression | None, local: dict | frozenset = frozenset(), imported: dict | None = None) -> bool:
    """A new tensor (`torch.zeros(...)`, any `torch.` function but `torch.nn`'s), a new standard
    container (`OrderedDict()`, `dict()`: a state dict being filled, deep-person-reid's
    `new_state_dict[k] = v`) or a value a Sequential refuses as an element.  `local`: the names the
    scope binds (a builtin name bound there is not the builtin); `imported`: those the scope binds
    only by importing them, to what (`_standard_imports`)."""
    if value is None:
        return False
    if type(value) is cst.Call:
        func = value.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value in _NEW_BUILTIN_CONTAINERS and func.value not in local and ctx.module_binding(func.value) is None:  # type: ignore[attr-defined]
            return True
        qualified = (imported or {}).get(func.value) if type(func) is cst.Name and func.value in local else resolve_global(ctx, func)  # type: ignore[attr-defined]
        if qualified in _NEW_STANDARD_CONTAINERS:
            return True
        return bool(qualified) and qualified.startswith("torch.") and not qualified.startswith(("torch.nn", "torch.load", "torch.jit", "torch.hub", "torch.compile"))  # type: ignore[union-attr]
    return _evidently_not_a_module(value)


def _collect(module: cst.Module, ctx: "Context") -> ModuleChanges:
    bindings: dict[str, int] = {}
    fresh: dict[str, int] = {}  # of those, bound to a new layer that keeps nothing of its output
    prefixes: set[str] = set()
    once: dict[str, cst.BaseExpression] | None = None  # names the file binds once, to what (found on first need)

    def bound_once() -> dict[str, cst.BaseExpression]:
        nonlocal once
        if once is None:
            once = _bound_once(module)
        return once

    def fresh_layer(value: cst.BaseExpression | None) -> bool:
        if type(value) is not cst.Call:
            return False
        func = value.func  # type: ignore[attr-defined]
        qualified = resolve_global(ctx, func)
        if qualified is None and type(func) is cst.Name:  # `fuse = torch.nn.utils.fusion.fuse_conv_bn_eval`, bound once
            alias = bound_once().get(func.value)  # type: ignore[attr-defined]
            qualified = resolve_global(ctx, alias) if type(alias) is cst.Attribute else None
        if qualified in _NEW_FRESH_LAYER_FUNCTIONS:
            return True
        return bool(qualified) and qualified.startswith("torch.nn.") and qualified.count(".") == 2 and qualified[9:] in FRESH_OUTPUT_LAYERS  # type: ignore[union-attr]

    def named(name: str, value: cst.BaseExpression | None) -> None:
        bindings[name] = bindings.get(name, 0) + 1
        if fresh_layer(value):
            fresh[name] = fresh.get(name, 0) + 1
    changed: set[str] = set()
    through_names: list[str] = []  # of `changed`, containers reached by a plain name (one per change)
    parts_read: set[str] = set()
    part_ranges: dict[str, set] = {}
    not_read_out: set[int] = set()  # subscripts that are targets, or whose attribute is read
    run_parts: set[int] = set()  # subscripts called (`mlp[2](x)`)
    hooked = False
    hooked_names: set[str] = set()
    hooked_unknown = False
    own, in_classes, bases, relations_unknown, rebinds_unseen = _class_bindings(module)
    aliases: set[str] = set()  # attributes bound to another object's name: `self.head = self.fc`
    assigned: dict[int, cst.BaseExpression] = {}  # id(AssignTarget) -> the value (an Assign is met before its targets)

    part_owners: dict[str, dict] = {}  # name -> owner (see ModuleChanges.part_owners) -> the parts it reads
    change_owners: dict[str, set] = {}  # name -> the owners changing elements of containers so named
    owner: str | None = None  # the class whose `self` the node being read sees (`_nodes_with_owners`)
    # `self.<child>.add_module("relu", ...)` / `setattr(self.<child>, "relu", ...)` in a method of a
    # top-level class: (the class, child, the name bound, the value), counted unless `_torch_child`
    on_children: list[tuple] = []
    class_values: dict[tuple[str, str], list] = {}  # (class, attribute) -> every value its methods bind `self.<attribute>` to

    def note_change(container: cst.BaseExpression) -> None:
        name = _last_name(container)
        if name is not None:
            change_owners.setdefault(name, set()).add(_own(container, owner))

    def bind(target: cst.BaseExpression, value: cst.BaseExpression | None = None) -> None:
        if type(target) is cst.Attribute:
            on_self = type(target.value) is cst.Name and target.value.value == "self"  # type: ignore[attr-defined]
            named(target.attr.value, None if on_self else value)  # type: ignore[attr-defined]  # (a class's own are counted apart)
        elif type(target) in (cst.Tuple, cst.List):
            for element in target.elements:  # type: ignore[attr-defined]
                bind(element.value)
        elif type(target) is cst.StarredElement:
            bind(target.value)  # type: ignore[attr-defined]
        elif type(target) is cst.Subscript and _may_set_an_element(target):  # type: ignore[arg-type]
            changed.add(_last_name(target.value) or ANY)  # type: ignore[attr-defined]
            note_change(target.value)  # type: ignore[attr-defined]
            if type(target.value) is cst.Name:  # type: ignore[attr-defined]
                through_names.append(target.value.value)  # type: ignore[attr-defined]

    plain_setattrs: set[int] | None = None  # found on the first `setattr` under a name not literal (rare)
    hooking = _names_from_hooking_libraries(module)
    if ANY in hooking:  # `from captum.attr import *`: any call may be one
        hooked = hooked_unknown = True
    for node, owner in _nodes_with_owners(module):
        kind = type(node)
        if kind in _TARGETED:
            not_read_out.add(id(node.target))  # type: ignore[attr-defined]
        if kind is cst.Attribute and type(node.value) is cst.Subscript:  # type: ignore[attr-defined]
            not_read_out.add(id(node.value))  # type: ignore[attr-defined]
        elif kind is cst.Call and type(node.func) is cst.Subscript:  # type: ignore[attr-defined]
            run_parts.add(id(node.func))  # type: ignore[attr-defined]
        elif kind is cst.Subscript and id(node) not in not_read_out and _reads_a_part(node, id(node) in run_parts):  # type: ignore[arg-type]
            name = _last_name(node.value)  # type: ignore[attr-defined]
            parts_read.add(name)  # type: ignore[arg-type]
            part = literal_part(node) if id(node) in run_parts else None  # type: ignore[arg-type]
            part_ranges.setdefault(name, set()).add(part)  # type: ignore[arg-type]
            part_owners.setdefault(name, {}).setdefault(_own(node.value, owner), set()).add(part)  # type: ignore[arg-type, attr-defined]
        if kind is cst.AssignTarget:
            if owner is not None and _own(node.target, owner) is not None:  # type: ignore[attr-defined]
                class_values.setdefault((owner, node.target.attr.value), []).append(assigned.get(id(node)))  # type: ignore[attr-defined]
            if type(node.target) is cst.Attribute and type(assigned.get(id(node))) in _ALIASES:  # type: ignore[attr-defined]
                aliases.add(node.target.attr.value)  # type: ignore[attr-defined]
            value = assigned.get(id(node))
            if not (type(node.target) is cst.Subscript and (_evidently_not_a_module(value) or _moved_in_place(node.target, value))):  # type: ignore[attr-defined, arg-type]
                bind(node.target, value)  # type: ignore[attr-defined]
        elif kind is cst.Assign:
            for each in node.targets:  # type: ignore[attr-defined]
                assigned[id(each)] = node.value  # type: ignore[attr-defined]
        elif kind is cst.AugAssign:
            if not (type(node.target) is cst.Subscript and _evidently_not_a_module(node.value)):  # type: ignore[attr-defined]
                bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.AnnAssign:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.For:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.WithItem and node.asname is not None:  # type: ignore[attr-defined]
            bind(node.asname.name)  # type: ignore[attr-defined]
        elif kind is cst.Del:
            bind(node.target)  # type: ignore[attr-defined]
        elif kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            called = func.attr.value if type(func) is cst.Attribute else func.value if type(func) is cst.Name else None
            if hooking and _root_name(func) in hooking:
                hooked = hooked_unknown = True  # `DeepLift(net)`, `captum.attr.LayerGradCam(net, net.conv)`
            if called in PRE_HOOK_REGISTRATIONS and blind_pre_hook(node, module):  # type: ignore[arg-type]
                pass  # it reads no input and returns none: it sees no tensor (analysis/blind_hooks.py)
            elif called in HOOK_REGISTRATIONS:
                hooked = True
                names = _attribute_path(func.value) if type(func) is cst.Attribute and called.startswith(_ON_A_MODULE) else None
                if names:
                    hooked_names.update(names)
                else:
                    hooked_unknown = True
            elif called in _ELEMENT_CHANGES and type(func) is cst.Attribute:
                changed.add(_last_name(func.value) or ANY)
                note_change(func.value)
                if type(func.value) is cst.Name:
                    through_names.append(func.value.value)  # type: ignore[attr-defined]
            elif called in _NAMED_BINDINGS and not _sets_a_non_module(node):  # type: ignore[arg-type]
                position = _NAMED_BINDINGS[called]
                args = node.args  # type: ignore[attr-defined]
                label = args[position].value if len(args) > position and not args[position].keyword else None
                given = args[position + 1].value if len(args) > position + 1 and not args[position + 1].keyword else None
                if type(label) is cst.SimpleString and isinstance(label.evaluated_value, str):  # type: ignore[union-attr]
                    receiver = (args[0].value if args else None) if called == "setattr" else func.value if type(func) is cst.Attribute else None
                    child = _own(receiver, owner) if type(receiver) is cst.Attribute else None
                    if child is not None:  # `self.conv_1x1.add_module("relu", ...)`: on a child, settled below
                        on_children.append((owner, receiver.attr.value, label.evaluated_value, given))  # type: ignore[union-attr]
                    else:
                        named(label.evaluated_value, given)  # type: ignore[union-attr]
                elif called == "setattr" or (len(args) > position and position == 0):
                    if called == "setattr" and plain_setattrs is None:
                        plain_setattrs = _setattrs_of_computed_values(module)
                    if not (called == "setattr" and id(node) in plain_setattrs):  # type: ignore[operator]
                        if owner is not None and label is not None:
                            label = _label_from_method(module, owner, label, node) or label  # type: ignore[arg-type]
                        prefix = _literal_prefix(label, bound_once())
                        if prefix and _number_follows(label, bound_once()):
                            prefix += NUMBER_FOLLOWS  # `"fc{}".format(k + 1)`: "fc1", "fc2", never "fcs"
                        if prefix:
                            prefixes.add(prefix)  # `setattr(m, "bn" + suffix, ...)`: only names so starting
                        else:
                            named(ANY, given)
    if hooked_names & aliases:
        hooked_unknown = True  # `self.head = self.fc`, then `model.head` hooked: the hook is on `fc` too
    # `self.<name>` bound inside classes was counted above too: what is left is bound elsewhere.
    for name, count in in_classes.items():
        bindings[name] -= count
        if not bindings[name]:
            del bindings[name]
    subclasses = _subclasses(bases)
    labels = {label for _, _, label, _ in on_children}
    for holder, child, label, given in on_children:
        if not _torch_child(ctx, holder, child, own, subclasses, class_values, bindings, labels, prefixes):
            named(label, given)
    recorded: dict[str, list] = {}  # attribute -> every value a top-level class's method binds `self.<attribute>` to
    for (_, attribute), values in class_values.items():
        recorded.setdefault(attribute, []).extend(values)
    shared = frozenset(
        name for name in (*part_owners, *change_owners)
        if _may_hold_anothers(ctx, name, recorded.get(name, ()), in_classes.get(name, 0), bindings, prefixes)
    )  # fmt: skip
    return ModuleChanges(
        bindings, own, subclasses, frozenset(changed), hooked, frozenset(hooked_names), hooked_unknown, fresh, frozenset(prefixes),
        frozenset(parts_read), {name: frozenset(ranges) for name, ranges in part_ranges.items()}, tuple(through_names),
        {name: {o: frozenset(r) for o, r in found.items()} for name, found in part_owners.items()},
        {name: frozenset(found) for name, found in change_owners.items()},
        shared, relations_unknown, rebinds_unseen,
    )


def _may_hold_anothers(ctx: "Context", name: str, values, in_classes: int, bindings: dict, prefixes: set) -> bool:
    """May some class's `self.<name>` hold a container another object built (see
    `ModuleChanges.shared_names`)?  No only where every binding of `self.<name>` in the file is
    `self.<name> = <call>` in a method of a top-level class, a call that builds something, or None,
    and no other object's attribute so named is bound (nor one by a name not literal)."""
    if ANY in bindings or bindings.get(name, 0) or any(bound_by_prefix(name, p) for p in prefixes) or len(values) != in_classes:
        return True
    return not all(_builds_its_own(ctx, value) for value in values)


def _builds_its_own(ctx: "Context", value) -> bool:
    """A call of a name (`Block(c)`, `make_layers(cfg)`; not `getattr(net, "body")`), of an
    imported module's attribute (`nn.Sequential(...)`, `copy.deepcopy(m)`) or of a method of
    `self` (`self._make_head(...)`), or None; not a method of another object (`net.body.cuda()`
    gives the module itself back, `net.head()` may)."""
    if type(value) is cst.Name:
        return value.value == "None"  # type: ignore[attr-defined]
    if type(value) is not cst.Call:
        return False
    func = value.func  # type: ignore[attr-defined]
    if type(func) is cst.Name:
        return func.value != "getattr"
    if type(func) is not cst.Attribute or func.attr.value in _RETURN_THE_MODULE:
        return False
    on_self = type(func.value) is cst.Name and func.value.value == "self"
    return on_self or resolve_global(ctx, func) is not None


def _related(subclasses: dict, class_name: str) -> set[str]:
    """See `ModuleChanges.related`."""
    family = {class_name, *subclasses.get(class_name, ())}
    return family | {b for b, derived in subclasses.items() if not family.isdisjoint(derived)}


def _torch_child(ctx: "Context", holder: str, child: str, own: dict, subclasses: dict, class_values: dict,
                 bindings: dict, labels: set, prefixes: set) -> bool:
    """Is `self.<child>` of `holder` certainly an instance of a `torch.nn` class (`self.conv_1x1 =
    nn.Sequential()`, nasnet's cells, then `self.conv_1x1.add_module("relu", nn.ReLU())`)?  Then a
    name bound on it binds no attribute of any class of the file: a torch class's instance is no
    instance of theirs.  Evidence: `holder` and the classes related to it bind `self.<child>` once
    in all, to a call of a class of `torch.nn` itself (`torch.nn.<Class>`), and nothing else in the
    file binds an attribute `child` (another object's, a `setattr` by a name not literal or with
    its prefix, another such binding on a child)."""
    if ANY in bindings or bindings.get(child, 0) or child in labels or any(bound_by_prefix(child, p) for p in prefixes):
        return False
    related = _related(subclasses, holder)
    if sum(own.get(c, {}).get(child, 0) for c in related) != 1:
        return False
    values = [v for c in related for v in class_values.get((c, child), ())]
    if len(values) != 1 or type(values[0]) is not cst.Call:
        return False
    qualified = resolve_global(ctx, values[0].func)  # type: ignore[attr-defined]
    return bool(qualified) and qualified.count(".") == 2 and qualified.startswith("torch.nn.") and qualified[9:10].isupper()  # type: ignore[union-attr]


def _own(container: cst.BaseExpression, owner: str | None) -> str | None:
    """The class a container read or changed belongs to: `owner` for `self.<name>` in its method,
    None (anyone's) for every other receiver."""
    if owner is not None and type(container) is cst.Attribute and type(container.value) is cst.Name and container.value.value == "self":  # type: ignore[attr-defined]
        return owner
    return None


def _nodes_with_owners(module: cst.Module):
    """`code_descendants(module)`, in the same pre-order, each node with the top-level class whose
    `self` it sees: inside a method of the class whose first parameter is `self` (not a static
    method), nested functions included (their `self` is the method's), nested classes not (they have
    a `self` of their own); None everywhere else.  (attribute_owners.py draws the same line.)"""
    for statement in module.body:
        yield statement, None
        if type(statement) is not cst.ClassDef:
            yield from ((node, None) for node in code_descendants(statement))
            continue
        methods = {id(m) for m in statement.body.body if type(m) is cst.FunctionDef and _receives_self(m)}  # type: ignore[attr-defined]
        name = statement.name.value  # type: ignore[attr-defined]
        for node in code_descendants(statement, skip=(cst.FunctionDef,)):
            yield node, None
            if type(node) is not cst.FunctionDef:
                continue
            if id(node) not in methods:
                yield from ((inner, None) for inner in code_descendants(node))
                continue
            for inner in code_descendants(node, skip=(cst.ClassDef,)):
                yield inner, name
                if type(inner) is cst.ClassDef:
                    yield from ((nested, None) for nested in code_descendants(inner))


def _receives_self(method: cst.FunctionDef) -> bool:
    params = method.params.params
    static = any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in method.decorators)  # type: ignore[attr-defined]
    return bool(params) and params[0].name.value == "self" and not static


def built_name_prefix(ctx: "Context", label: cst.BaseExpression, call: cst.Call, owner: str | None) -> str:
    """The literal start of a name `call` (a method of the top-level class `owner`, or None) builds
    at run time as `label` (`_literal_prefix`, through `_label_from_method`), marked where a number's
    text follows it; "" where not known.  For an asker that reads names as module_changes does
    (sequential_homes: `getattr(self, layer_name)`)."""
    once: dict = ctx.memo("names-bound-once", lambda: _bound_once(ctx.module))  # type: ignore[assignment]
    if owner is not None:
        label = _label_from_method(ctx.module, owner, label, call) or label
    prefix = _literal_prefix(label, once)
    return prefix + NUMBER_FOLLOWS if prefix and _number_follows(label, once) else prefix


def _label_from_method(module: cst.Module, owner: str, label: cst.BaseExpression, call: cst.Call) -> cst.BaseExpression | None:
    """DensePose's `layer_name = self._get_layer_name(i)`, then `self.add_module(layer_name, layer)`
    (or `self.add_module(self._get_layer_name(i), layer)`): the string a method of the class builds
    (`return "body_conv_fcn{}".format(i + 1)`, or through one local bound and returned), where the
    method of the class that makes the call binds the name once, to `self.<method>(...)`, and the
    class defines that method once, as a body of that string alone; no other class of the file
    defines a method so named (a subclass may override it).  None where that is not so."""
    if type(label) not in (cst.Name, cst.Call):
        return None
    classes = [s for s in module.body if type(s) is cst.ClassDef and s.name.value == owner]  # type: ignore[attr-defined]
    if len(classes) != 1:
        return None
    methods = [m for m in classes[0].body.body if type(m) is cst.FunctionDef]  # type: ignore[attr-defined]
    # The method whose own statements make the call: a call in a function nested in it (or in a
    # comprehension) reads names that scope may bind (`def run(name): getattr(self, name)`): unsure.
    nested = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
    caller = next((m for m in methods if any(n is call for n in code_descendants(m.body, skip=nested))), None)
    if caller is None or not _receives_self(caller):
        return None
    value: cst.BaseExpression | None = label
    if type(label) is cst.Name:
        name = label.value  # type: ignore[attr-defined]
        found = [(t, v) for t, v in bound_targets(caller.body) if name in erring_names(t)]
        if len(found) != 1 or type(found[0][0]) is not cst.Name or name in {p.name.value for p in caller.params.params}:
            return None
        value = found[0][1]
    if type(value) is not cst.Call or type(value.func) is not cst.Attribute or type(value.func.value) is not cst.Name or value.func.value.value != "self":  # type: ignore[attr-defined]
        return None
    method = value.func.attr.value  # type: ignore[attr-defined]
    defined = [
        s for c in module.body if type(c) is cst.ClassDef for s in c.body.body  # type: ignore[attr-defined]
        if type(s) is cst.FunctionDef and s.name.value == method
    ]  # fmt: skip
    if len(defined) != 1 or defined[0] not in methods or defined[0].decorators or type(defined[0].body) is not cst.IndentedBlock:
        return None
    return _returned_string(defined[0])


def _returned_string(method: cst.FunctionDef) -> cst.BaseExpression | None:
    """`return <value>`, or `<local> = <value>` then `return <local>`, as the method's whole body
    (after a docstring): the value."""
    smalls = []
    for statement in method.body.body:  # type: ignore[attr-defined]
        if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
            return None
        smalls.append(statement.body[0])  # type: ignore[attr-defined]
    if smalls and type(smalls[0]) is cst.Expr and type(smalls[0].value) in (cst.SimpleString, cst.ConcatenatedString):  # type: ignore[attr-defined]
        smalls = smalls[1:]
    if len(smalls) == 1 and type(smalls[0]) is cst.Return:
        return smalls[0].value  # type: ignore[attr-defined]
    if len(smalls) != 2 or type(smalls[0]) is not cst.Assign or type(smalls[1]) is not cst.Return or len(smalls[0].targets) != 1:  # type: ignore[attr-defined]
        return None
    local = smalls[0].targets[0].target  # type: ignore[attr-defined]
    returned = smalls[1].value  # type: ignore[attr-defined]
    if type(local) is not cst.Name or type(returned) is not cst.Name or returned.value != local.value:  # type: ignore[attr-defined]
        return None
    return smalls[0].value  # type: ignore[attr-defined]


def _bound_once(module: cst.Module) -> dict[str, cst.BaseExpression]:
    """The plain names the file binds exactly once, by `name = value`, to that value (any scope:
    a name bound in two functions is bound twice here); any other binding of a name rules it out
    (analysis/bindings.py's `bound_targets`, parameters included)."""
    values: dict[str, list] = {}
    for target, value in bound_targets(module, nested=True):
        for name in erring_names(target):
            values.setdefault(name, []).append(value if type(target) is cst.Name else None)
    return {name: found[0] for name, found in values.items() if len(found) == 1 and found[0] is not None}


# Marks a prefix that a number's text follows (`"fc%d" % i`, `"fc{}".format(k + 1)`).
NUMBER_FOLLOWS = "\0"
# How the text of a number may start: a digit, a sign, a point, "inf", "nan", a complex's "(".
_NUMBER_STARTS = frozenset("0123456789-+.inIN(")


def bound_by_prefix(attribute: str, prefix: str) -> bool:
    """May a name built from `prefix` (`_literal_prefix`, marked where a number follows it) be
    `attribute`?  After a prefix a number follows, only a name going on as a number's text may
    (PointRend's `add_module("fc{}".format(k + 1), fc)` binds "fc1", "fc2": never "fcs")."""
    if not prefix.endswith(NUMBER_FOLLOWS):
        return attribute.startswith(prefix)
    literal = prefix[: -len(NUMBER_FOLLOWS)]
    return attribute.startswith(literal) and (len(attribute) == len(literal) or attribute[len(literal)] in _NUMBER_STARTS)


def _number_follows(label: cst.BaseExpression | None, once: dict[str, cst.BaseExpression]) -> bool:
    """Is the first thing formatted after the literal start of `label` (`_literal_prefix`) a
    number's text: `"fc%d" % i` (`%d` formats numbers alone, or raises), or `"fc{}".format(k + 1)` /
    `f"fc{k + 1}"`, a `+` or `-` with an integer literal (a string operand would raise, a number
    gives a number; not `*`: `"s" * 2` is a string)?  Any other value may be any text."""
    if type(label) is cst.Name and label.value in once:  # type: ignore[attr-defined]
        label = once[label.value]  # type: ignore[attr-defined]
    if type(label) is cst.BinaryOperation and type(label.operator) is cst.Modulo and type(label.left) is cst.SimpleString:  # type: ignore[attr-defined]
        text = label.left.evaluated_value  # type: ignore[attr-defined]
        if not isinstance(text, str) or "%" not in text:
            return False
        conversion = text.split("%", 1)[1].lstrip("0123456789-+#")  # (flags and width: a space flag would start with " ")
        return conversion[:1] in ("d", "i")
    if type(label) is cst.Call and type(label.func) is cst.Attribute and label.func.attr.value == "format":  # type: ignore[attr-defined]
        base = label.func.value  # type: ignore[attr-defined]
        text = base.evaluated_value if type(base) is cst.SimpleString else None  # type: ignore[attr-defined]
        args = label.args  # type: ignore[attr-defined]
        if not isinstance(text, str) or "{" not in text or not args or args[0].keyword is not None or args[0].star:
            return False
        field = text.split("{", 1)[1].split("}", 1)[0]
        return field in ("", "0") and _integer_arithmetic(args[0].value)
    if type(label) is cst.FormattedString and len(label.parts) > 1 and type(label.parts[1]) is cst.FormattedStringExpression:  # type: ignore[attr-defined]
        part = label.parts[1]  # type: ignore[attr-defined]
        return part.conversion is None and part.format_spec is None and _integer_arithmetic(part.expression)
    return False


def _integer_arithmetic(value: cst.BaseExpression) -> bool:
    """`k + 1`, `n - 1`: `+` or `-` with an integer literal on one side."""
    if type(value) is not cst.BinaryOperation or type(value.operator) not in (cst.Add, cst.Subtract):  # type: ignore[attr-defined]
        return False
    return type(value.left) is cst.Integer or type(value.right) is cst.Integer  # type: ignore[attr-defined]


def _literal_prefix(label: cst.BaseExpression | None, once: dict[str, cst.BaseExpression]) -> str:
    """The literal start of a string built at run time: `"bn" + suffix`, `f"bn{i}"`, `"bn%d" % i`,
    `"bn{}".format(i)`, or a name the file binds once to one of those; "" where not known."""
    if type(label) is cst.Name and label.value in once:  # type: ignore[attr-defined]
        label = once[label.value]  # type: ignore[attr-defined]
    if type(label) is cst.BinaryOperation and type(label.operator) in (cst.Add, cst.Modulo):  # type: ignore[attr-defined]
        left = label.left  # type: ignore[attr-defined]
        text = left.evaluated_value if type(left) is cst.SimpleString else None  # type: ignore[attr-defined]
        if type(label.operator) is cst.Modulo and isinstance(text, str):  # type: ignore[attr-defined]
            text = text.split("%", 1)[0]
        return text if isinstance(text, str) else ""
    if type(label) is cst.FormattedString and label.parts and type(label.parts[0]) is cst.FormattedStringText:  # type: ignore[attr-defined]
        text = label.parts[0].value  # type: ignore[attr-defined]
        # the source text, not the string: an escape (`"\x63onv"` is "conv") or `{{` reads otherwise
        return "" if "\\" in text or "{" in text or "}" in text else text
    if type(label) is cst.Call and type(label.func) is cst.Attribute and label.func.attr.value == "format":  # type: ignore[attr-defined]
        base = label.func.value  # type: ignore[attr-defined]
        text = base.evaluated_value if type(base) is cst.SimpleString else None  # type: ignore[attr-defined]
        prefix = text.split("{", 1)[0] if isinstance(text, str) else ""
        return "" if "}" in prefix else prefix  # `"a}}b{}"` formats to "a}b..."
    return ""


def _class_bindings(module: cst.Module) -> tuple[dict, dict, dict, bool, bool]:
    """Per class of the file: how often its methods bind each `self.<name>` (`=`, `+=`, `for`,
    `with ... as`, `del`); how many such bindings there are per name in all classes together; the
    last names of each class's bases; whether the file relates classes otherwise
    (`ModuleChanges.relations_unknown`); whether it names `_modules`, `__dict__`, `__setattr__`."""
    own: dict[str, dict[str, int]] = {}
    in_classes: dict[str, int] = {}
    bases: dict[str, list[str]] = {}
    unknown = unseen = False
    aliased: set[str] = set()  # names bound by `=` anywhere (`BasicBlock = Basic`)
    based: set[str] = set()  # names written as a base
    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.AssignTarget and type(node.target) is cst.Name:  # type: ignore[attr-defined]
            aliased.add(node.target.value)  # type: ignore[attr-defined]
        elif kind is cst.Call and type(node.func) is cst.Name and node.func.value == "type" and len(node.args) == 3:  # type: ignore[attr-defined]
            unknown = True
        elif (kind is cst.Attribute and node.attr.value in _UNSEEN_REBINDING) or (kind is cst.Name and node.value in _UNSEEN_REBINDING):  # type: ignore[attr-defined]
            unseen = True
        elif kind is cst.SimpleString and node.value.strip("'\"rbuRBU") in _UNSEEN_REBINDING:  # type: ignore[attr-defined]
            unseen = True
        if kind is not cst.ClassDef:
            continue
        for base in node.bases:  # type: ignore[attr-defined]
            if type(base.value) is cst.Name:
                based.add(base.value.value)  # type: ignore[attr-defined]
            elif type(base.value) is not cst.Attribute or base.keyword is not None or base.star:
                unknown = True
        name = node.name.value  # type: ignore[attr-defined]
        parents = [b for b in (_last_name(a.value) for a in node.bases) if b]  # type: ignore[attr-defined]
        bases.setdefault(name, []).extend(p for p in parents if p != name)
        counts: dict[str, int] = {}
        for inner in code_descendants(node.body, skip=(cst.ClassDef,)):  # type: ignore[attr-defined]
            for target in bound_by(inner):
                for attribute in _self_attributes(target):
                    counts[attribute] = counts.get(attribute, 0) + 1
                    in_classes[attribute] = in_classes.get(attribute, 0) + 1
        # A class defined again under the same name (a notebook's cell run twice, edited) builds its
        # own instances: each definition's bindings stand alone, unless it derives from the one before.
        earlier = own.setdefault(name, {})
        for attribute, count in counts.items():
            earlier[attribute] = earlier.get(attribute, 0) + count if name in parents else max(earlier.get(attribute, 0), count)
    return own, in_classes, bases, unknown or not based.isdisjoint(aliased), unseen


# Ways to replace a submodule that bind no `self.<name>` (`self._modules["bn"] = ...`, `vars(self)["bn"] = None`).
_UNSEEN_REBINDING = frozenset({"_modules", "__dict__", "__setattr__", "vars"})


def _self_attributes(target) -> list[str]:
    if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
        return [target.attr.value]
    if type(target) in (cst.Tuple, cst.List):
        return [a for e in target.elements for a in _self_attributes(e.value)]
    if type(target) is cst.StarredElement:
        return _self_attributes(target.value)
    return []


def _subclasses(bases: dict[str, list[str]]) -> dict[str, list[str]]:
    derived: dict[str, set[str]] = {}
    for name, parents in bases.items():
        for parent in parents:
            derived.setdefault(parent, set()).add(name)
    closed: dict[str, list[str]] = {}
    for name in derived:
        seen: set[str] = set()
        stack = list(derived[name])
        while stack:
            current = stack.pop()
            if current not in seen:
                seen.add(current)
                stack.extend(derived.get(current, ()))
        closed[name] = sorted(seen)
    return closed


def _last_name(expr: cst.BaseExpression) -> str | None:
    """`features` -> "features", `self.body` -> "body", `getattr(self, "body")` -> "body"; None for
    anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Call and type(expr.func) is cst.Name and expr.func.value == "getattr" and len(expr.args) >= 2:  # type: ignore[attr-defined]
        label = expr.args[1].value  # type: ignore[attr-defined]
        if type(label) is cst.SimpleString and isinstance(label.evaluated_value, str):  # type: ignore[attr-defined]
            return label.evaluated_value  # type: ignore[attr-defined]
    return None


def _reads_a_part(subscript: cst.Subscript, called: bool) -> bool:
    """`mlp[1:]` of a named container (one slice), or `mlp[2](x)`, `self.body[-1](h)` (one index that
    is no string, called: a dict's or a ModuleDict's element is no sequence's part).  An element
    handed on (`log_param(name, self.trunk[0])`) is taken to be read, not run."""
    if _last_name(subscript.value) is None or len(subscript.slice) != 1:
        return False
    index = subscript.slice[0].slice
    if type(index) is cst.Slice:
        return True
    return called and type(index.value) not in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)  # type: ignore[union-attr]


def literal_part(subscript: cst.Subscript) -> tuple[int, int | None] | None:
    """The (start, stop) a called subscript runs: `[:4]` -> (0, 4), `[-2:]` -> (-2, None), `[2]` ->
    (2, 3); None for a step, a bound that is no integer literal, several indices."""
    if len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if type(index) is cst.Index:
        at = _integer(index.value)  # type: ignore[attr-defined]
        return None if at is None else (at, None if at == -1 else at + 1)  # (`[-1]`: the last, to the end)
    if index.step is not None:  # type: ignore[attr-defined]
        return None
    lower, upper = index.lower, index.upper  # type: ignore[attr-defined]
    start = 0 if lower is None else _integer(lower)
    stop = None if upper is None else _integer(upper)
    if start is None or (upper is not None and stop is None):
        return None
    return start, stop


def _integer(expr: cst.BaseExpression) -> int | None:
    """`4` -> 4, `-2` -> -2; None for anything else."""
    negative = type(expr) is cst.UnaryOperation and type(expr.operator) is cst.Minus  # type: ignore[attr-defined]
    if negative:
        expr = expr.expression  # type: ignore[attr-defined]
    if type(expr) is not cst.Integer:
        return None
    value = int(expr.value, 0)  # type: ignore[attr-defined]
    return -value if negative else value


def _may_set_an_element(target: cst.Subscript) -> bool:
    """Could `<container>[key] = module` replace an element of a Sequential (or ModuleList)?  Their
    `__setitem__` takes one integer index: a slice, several indices (`buf[:, i]`) or a string key
    (`param_groups[0]["lr"]`, a dict or a ModuleDict, whose elements are whole modules and no
    sequence's neighbours) raise or reach no sequence.  Only `_modules["0"]` sets one by name."""
    if len(target.slice) != 1:
        return False
    index = target.slice[0].slice
    if type(index) is cst.Slice:
        return False
    key = index.value  # type: ignore[union-attr]
    if type(key) is cst.Call and type(key.func) is cst.Attribute and key.func.attr.value == "format" and type(key.func.value) is cst.SimpleString:  # type: ignore[attr-defined]
        key = key.func.value  # `"relu{}".format(i)`: a string key as well
    if type(key) is cst.BinaryOperation and type(key.operator) is cst.Modulo and type(key.left) in (cst.SimpleString, cst.ConcatenatedString):  # type: ignore[attr-defined]
        key = key.left  # `"layer_%d" % n`: a literal string formatted by `%` is a string
    if type(key) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString):
        return _last_name(target.value) == "_modules"
    return True


def _sets_a_non_module(call: cst.Call) -> bool:
    """`setattr(self.module, self.name, w / sigma)` (BigGAN's spectral norm): whatever the name, a
    value that is evidently no module rebinds no submodule (`nn.Module.__setattr__` refuses a
    tensor in a submodule's place: `cannot assign ... as child module`)."""
    args = call.args
    return (
        type(call.func) is cst.Name and call.func.value == "setattr" and len(args) == 3  # type: ignore[attr-defined]
        and not any(a.keyword or a.star for a in args) and _evidently_not_a_module(args[2].value)
    )  # fmt: skip


def _setattrs_of_computed_values(module: cst.Module) -> set[int]:
    """The `setattr(obj, name, value)` calls of the file's methods whose value is a local name the
    method binds once to something evidently no module, or to what a method of the same class returns
    when its every `return` is evidently no module: StyleGAN's `EqualLR.__call__` does `weight =
    self.compute_weight(module)` (which returns `weight * sqrt(2 / fan_in)`), then `setattr(module,
    self.name, weight)`.  Like `_sets_a_non_module`, such a call rebinds no submodule."""
    found: set[int] = set()
    for node in code_descendants(module):
        if type(node) is not cst.ClassDef:
            continue
        methods = {s.name.value: s for s in node.body.body if type(s) is cst.FunctionDef}  # type: ignore[attr-defined]
        computing = {name for name, m in methods.items() if _returns_no_module(m)}
        for method in methods.values():
            calls = [
                inner for inner in code_descendants(method.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))
                if type(inner) is cst.Call and type(inner.func) is cst.Name and inner.func.value == "setattr"  # type: ignore[attr-defined]
            ]  # fmt: skip
            if not calls:
                continue
            bound: dict[str, list] = {}
            for target, value in bound_targets(method.body):
                for name in erring_names(target):
                    bound.setdefault(name, []).append(value if type(target) is cst.Name else None)
            params = {p.name.value for p in (*method.params.posonly_params, *method.params.params, *method.params.kwonly_params)}
            for call in calls:
                args = call.args
                if len(args) != 3 or any(a.keyword or a.star for a in args) or type(args[2].value) is not cst.Name:
                    continue
                name = args[2].value.value  # type: ignore[attr-defined]
                values = bound.get(name, [])
                if name in params or len(values) != 1 or values[0] is None:
                    continue
                value = values[0]
                if _evidently_not_a_module(value) or (
                    type(value) is cst.Call and type(value.func) is cst.Attribute  # type: ignore[attr-defined]
                    and type(value.func.value) is cst.Name and value.func.value.value == "self"  # type: ignore[attr-defined]
                    and value.func.attr.value in computing  # type: ignore[attr-defined]
                ):  # fmt: skip
                    found.add(id(call))
    return found


def _returns_no_module(method: cst.FunctionDef) -> bool:
    returns = [n for n in code_descendants(method.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)) if type(n) is cst.Return]
    return bool(returns) and all(_evidently_not_a_module(r.value) for r in returns)  # type: ignore[attr-defined]


def _moved_in_place(target: cst.Subscript, value: cst.BaseExpression | None) -> bool:
    """`feats[name][-1] = feats[name][-1].cpu()` (KAIR's RVRT): the element is given back itself
    where it is a module (`Module.cpu()`, `.to(...)`, `.half()`, `.eval()` return the module), so
    no Sequential's element is replaced; a tensor there is no layer.  The subscript on both sides is
    the same text of names, attributes and literals only (no call that could pick another element)."""
    if type(value) is not cst.Call or type(value.func) is not cst.Attribute or value.func.attr.value not in _RETURN_THE_MODULE:  # type: ignore[attr-defined]
        return False
    moved = value.func.value  # type: ignore[attr-defined]
    return type(moved) is cst.Subscript and _plain_path(target) and target.deep_equals(moved)


def _plain_path(expr: cst.BaseExpression) -> bool:
    """Names, attributes, literals and subscripts of them only: evaluating it twice reads one place."""
    kind = type(expr)
    if kind in (cst.Name, cst.Integer, cst.SimpleString):
        return True
    if kind is cst.UnaryOperation and type(expr.operator) is cst.Minus:  # type: ignore[attr-defined]
        return type(expr.expression) is cst.Integer  # type: ignore[attr-defined]
    if kind is cst.Attribute:
        return _plain_path(expr.value)  # type: ignore[attr-defined]
    if kind is cst.Subscript:
        slices = expr.slice  # type: ignore[attr-defined]
        return _plain_path(expr.value) and len(slices) == 1 and type(slices[0].slice) is cst.Index and _plain_path(slices[0].slice.value)  # type: ignore[attr-defined]
    return False


# nn.Module methods that return the module itself.
_RETURN_THE_MODULE = frozenset({"cpu", "cuda", "to", "half", "float", "double", "bfloat16", "train", "eval", "requires_grad_", "type"})


def _evidently_not_a_module(value: cst.BaseExpression | None) -> bool:
    """A number, a string, a display, an arithmetic or comparison: a Sequential refuses it as an
    element (`cannot assign 'int' as child module`), so assigning it replaces no layer."""
    return type(value) in _NOT_MODULES


_NOT_MODULES = frozenset(
    {cst.Integer, cst.Float, cst.Imaginary, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString,
     cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation, cst.List, cst.Tuple,
     cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp}
)  # fmt: skip


def _attribute_path(receiver: cst.BaseExpression) -> list[str] | None:
    """The attribute names through which a hooked module is reached: `model.layer4[-1].conv2` ->
    ["layer4", "conv2"], `self.fc` -> ["fc"]; None where the module is not reached by attribute
    names from a plain name (`m`, `layers[0]`, `get_layer(...)`, `torch.nn.modules.module`)."""
    names: list[str] = []
    while True:
        kind = type(receiver)
        if kind is cst.Attribute:
            names.append(receiver.attr.value)  # type: ignore[attr-defined]
            receiver = receiver.value  # type: ignore[attr-defined]
        elif kind is cst.Subscript:
            inner = receiver.value  # type: ignore[attr-defined]
            if type(inner) is cst.Attribute and inner.attr.value == "_modules":  # type: ignore[attr-defined]
                # `self._modules["bn1"]` is the child `self.bn1`; a key not written out may be any
                key = _string_key(receiver)  # type: ignore[arg-type]
                if key is None:
                    return None
                names.append(key)
                inner = inner.value  # type: ignore[attr-defined]
            receiver = inner
        elif kind is cst.Name:
            # `torch.nn.modules.module.register_module_forward_hook` hooks every module
            return names if names and receiver.value != "torch" else None  # type: ignore[attr-defined]
        else:
            return None


def _string_key(subscript: cst.Subscript) -> str | None:
    """`"bn1"` of `x["bn1"]`; None for any other index."""
    if len(subscript.slice) != 1 or type(subscript.slice[0].slice) is not cst.Index:
        return None
    value = subscript.slice[0].slice.value  # type: ignore[attr-defined]
    if type(value) is not cst.SimpleString:
        return None
    key = value.evaluated_value  # type: ignore[attr-defined]
    return key if isinstance(key, str) else None


def _names_from_hooking_libraries(module: cst.Module) -> frozenset[str]:
    """Names the file binds to a hooking library or to what it imports from one (module level)."""
    found: set[str] = set()
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:  # type: ignore[attr-defined]
            if type(small) is cst.Import:
                for alias in small.names:  # type: ignore[attr-defined]
                    dotted = _dotted(alias.name)
                    if dotted.split(".")[0] in _HOOKING_LIBRARIES:
                        found.add(alias.asname.name.value if alias.asname else dotted.split(".")[0])  # type: ignore[union-attr]
            elif type(small) is cst.ImportFrom and small.module is not None and not small.relative:  # type: ignore[attr-defined]
                if _dotted(small.module).split(".")[0] in _HOOKING_LIBRARIES:  # type: ignore[attr-defined]
                    if isinstance(small.names, cst.ImportStar):  # type: ignore[attr-defined]
                        found.add(ANY)
                    else:
                        found.update((a.asname.name.value if a.asname else a.name.value) for a in small.names)  # type: ignore[union-attr, attr-defined]
    if ANY in found:
        return frozenset({ANY})
    return frozenset(found)


def _dotted(expr: cst.BaseExpression) -> str:
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute:
        return _dotted(expr.value) + "." + expr.attr.value  # type: ignore[attr-defined]
    return ""


def _root_name(func: cst.BaseExpression) -> str | None:
    while type(func) is cst.Attribute:
        func = func.value  # type: ignore[attr-defined]
    return func.value if type(func) is cst.Name else None  # type: ignore[attr-defined]
