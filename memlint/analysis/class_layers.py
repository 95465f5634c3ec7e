"""The layers of one nn.Module class whose outputs nobody else sees, and the activation modules it
calls: what `self.<layer>(x)` returns inside the class's methods, where ML003 asks whether it is a
fresh value an activation may overwrite.

A layer counts when the constructor builds it (also in a branch: `if pos_enc: self.embed =
nn.Linear(...)` is that layer wherever `self.embed(...)` runs at all) and nothing in the file binds
the attribute again (`self.fc = nn.Identity()` in a branch, or `model.fc = ...` elsewhere, would make
`self.fc(x)` return the caller's `x`), with no hook that may keep or wrap its output.  A ModuleList
counts where every element is such a layer.  Everything is computed on the first ask: it needs a
walk of the whole file (module_changes)."""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.attribute_owners import attribute_uses, inherited_owner
from memlint.analysis.fresh_forwards import fresh_element_classes, fresh_output_classes
from memlint.analysis.helper_sequentials import helper_sequential_elements
from memlint.analysis.initialisers import resolve_global
from memlint.analysis.inplace_savings import inplace_saving
from memlint.analysis.inventory import Layer, inventory
from memlint.analysis.layer_dicts import dict_layer_classes
from memlint.analysis.module_changes import module_changes
from memlint.analysis.module_lists import ListElement, element_classes, nested_element_classes
from memlint.analysis.norm_layers import norm_attributes
from memlint.analysis.sequential_subclasses import last_added_layer
from memlint.analysis.tables import FRESH_OUTPUT_LAYERS, INPLACE_MODULES
from memlint.analysis.walk import code_descendants, self_attr
from memlint.analysis.wrapper_classes import owning_classes


def class_layers(ctx) -> "ClassLayers":
    """The ClassLayers of the class the traversal is in, built once per class and file (every method
    of a class asks the same questions of it; each answer needs walks of the class or the file).
    Keyed by what the constructor reads: the class's name, whether it is an nn.Module class of the
    file, and the module-level imports seen so far (the inventory is rebuilt when more are seen)."""
    key = ("class-layers.by-class", ctx.class_name, ctx.in_module_class, ctx.module_imports)
    return ctx.memo(key, lambda: ClassLayers(ctx))  # type: ignore[return-value]


class ClassLayers:
    """Asked from a method of the class the traversal is in (`ctx.class_name`)."""

    def __init__(self, ctx) -> None:
        self.ctx = ctx
        # A function outside a module class has no layers of its own (the inventory is not asked:
        # it is built on the first ask, and a notebook may import `torch.nn` only after its first,
        # data, classes).
        self.classes = inventory(ctx) if ctx.in_module_class else {}
        self.described = self.classes.get(ctx.class_name or "")
        self._known: Optional[tuple[set[str], dict]] = None
        self._listed: Optional[set[ListElement]] = None
        self.plain_lists: set[str] = set()  # those of `layer_lists` that are plain lists, not ModuleLists
        self._dicts: Optional[set[str]] = None
        self._stages: Optional[set[str]] = None

    def fresh_output_layers(self) -> set[str]:
        """The attributes whose call returns a fresh output that nobody else sees."""
        return self._layers()[0]

    def _layers(self) -> tuple[set[str], dict]:
        """The layers whose output nobody else sees, and the activation modules of the class:
        attribute -> (the modules it may hold, how many `self.<attribute> = ...` its constructor writes)."""
        described, ctx = self.described, self.ctx
        if described is None:
            return set(), {}
        if self._known is not None:
            return self._known
        changes = module_changes(ctx)
        trusted = {
            a for a, layer in described.attributes.items()
            if changes.bound_once(a, ctx.class_name) and not changes.hooks_may_see([a])
        }  # fmt: skip
        conditional = {
            a for a, layer in described.conditional.items()
            if layer.kind in FRESH_OUTPUT_LAYERS and changes.bound_once(a, ctx.class_name) and not changes.hooks_may_see([a])
        }  # fmt: skip
        modules = {a: ((described.attributes[a],), 1) for a in trusted if described.attributes[a].kind in INPLACE_MODULES}
        # An activation module built in a branch of the constructor (`if add_relu: self.relu =
        # nn.ReLU()` / `else: self.relu = lambda x: x`): where the attribute holds it, every call of
        # `self.relu` runs it, so it counts as one built unconditionally, when the constructor's
        # branches are the only bindings of the attribute in the file.  Every such module its
        # branches build counts (`if leaky: self.act = nn.LeakyReLU(0.1)` / `else: self.act =
        # nn.ReLU()`): the calls are the same whichever it holds.  One chosen by a conditional
        # expression (YOLOP's `self.act = nn.Hardswish() if act else nn.Identity()`) counts only
        # where every layer it may hold is such a module of one saving, or an `nn.Identity`.
        init = _constructor(described.node)
        for a, built in described.branches.items():
            capable = tuple(layer for layer in built if layer.kind in INPLACE_MODULES)
            if not capable or a in modules or changes.hooks_may_see([a]):
                continue
            if a in described.chosen and not _one_saving(built):
                continue
            written = _self_bindings(init, a)
            if written and changes.class_bindings(a, ctx.class_name) == written:
                modules[a] = (capable, written)
        # One module bound to two attributes (`self.a = self.b = nn.ReLU()`, or `act = nn.ReLU()`,
        # then `self.a = act` and `self.b = act`): the calls of either run it, but each attribute's
        # calls are judged alone, so neither is known to be called only on fresh values.
        for a in _sharing_attributes(described):
            modules.pop(a, None)
        # `self.bn = BatchNorm(planes)` / `norm_layer(c)`: a norm the file names otherwise (analysis/norm_layers.py)
        normed = {
            a for a in norm_attributes(ctx, described.node)
            if a not in described.attributes and changes.bound_once(a, ctx.class_name) and not changes.hooks_may_see([a])
        }  # fmt: skip
        # `self.noise = NoiseInjection(c)`: a class of the file whose `forward` returns a fresh
        # tensor (analysis/fresh_forwards.py) or its own layer's output (`EqualConv2d`: wrapper_classes)
        local = {f"local:{c}" for c in (*fresh_output_classes(ctx), *owning_classes(ctx))}
        fresh = {
            a for a, layer in described.attributes.items()
            if (layer.kind in FRESH_OUTPUT_LAYERS or layer.kind in local)
            and (a in trusted or (changes.rebound_only_to_fresh_layers(a, ctx.class_name) and not changes.hooks_may_see([a])))
        }  # fmt: skip
        fresh |= self._inherited_fresh(local)
        # `self.increase = Block(c, relu=False)`, a class of the file that is an `nn.Sequential` and
        # nothing more, whose constructor adds a norm last for that call's arguments: its call returns
        # that norm's output (analysis/sequential_subclasses.py)
        fresh |= {
            a for a in trusted - fresh
            if (described.attributes[a].kind or "").startswith("local:")
            and last_added_layer(ctx, described.attributes[a].call) in FRESH_OUTPUT_LAYERS
        }  # fmt: skip
        # (rebound elsewhere only to new layers that keep nothing of their output, `model.conv1 =
        # fuse_conv_bn_eval(...)`: whichever holds it, its output is fresh: analysis/module_changes.py)
        # Bound in each branch of the constructor (`if self.maml: self.C1 = Conv2d_fw(...)` / `else:
        # self.C1 = nn.Conv2d(...)`), those the attribute's only bindings in the file: whichever it
        # holds, its output is fresh where every layer the branches may bind returns a fresh one.
        for a, built in described.branches.items():
            if a in fresh or a in conditional or a in described.attributes or changes.hooks_may_see([a]):
                continue
            if not built or not all(layer.kind in FRESH_OUTPUT_LAYERS or layer.kind in local for layer in built):
                continue
            written = _self_bindings(init, a)  # each binding one of those layers (not `lambda x: x`)
            # or `self.IN = None`, a placeholder the branch may replace (`if IN: self.IN =
            # nn.InstanceNorm2d(c)`): calling None raises, so wherever `self.IN(x)` runs it holds a layer
            # (unless the file may write the attribute where `class_bindings` does not look:
            # `self.__dict__["IN"] = ...`, `vars(self)[...]`, `setattr(self, name, ...)`)
            placeholders = 0 if _written_indirectly(ctx, a) else _none_bindings(init, a)
            if written - placeholders == len(built) and changes.class_bindings(a, ctx.class_name) == written:
                conditional.add(a)
        self._known = (fresh | conditional | normed, modules)
        return self._known

    def _inherited_fresh(self, local: set[str]) -> set[str]:
        """The layers a base class of the file builds for this one (nasnet's `BranchSeparablesReduction`
        runs `BranchSeparables.__init__(self, ...)`, then calls `self.bn_sep_1(x)` in its own
        `forward`): an attribute the class binds nowhere itself, whose nearest base that builds it
        builds a layer keeping nothing of its output, bound once in that base and all its
        subclasses and in none of its bases, no hook on it.  Only along a chain of single
        inheritance through module classes of the file up to a class of `torch.nn`
        (`_single_chain`): another base (a mixin, an imported class) may bind or shadow the name,
        and a class-level name anywhere on the chain shadows the submodule.  Not where the file
        names `_modules`, `__dict__` or `__setattr__` (a rebinding the counts do not see).  Where
        the base constructor did not run, the call fails; it never returns another value."""
        described, classes, ctx = self.described, self.classes, self.ctx
        if described is None:
            return set()
        changes = module_changes(ctx)
        if changes.relations_unknown or changes.rebinds_unseen:
            return set()
        chain = _single_chain(ctx, classes, described.name)
        if not chain:
            return set()
        own = {*described.attributes, *described.conditional, *described.branches}
        # a name at class level anywhere on the chain (`bn = None`, `def bn(self, x)`) is found
        # before the submodule the constructor registered
        levels: dict = ctx.memo("class-level-names", dict)  # type: ignore[assignment]
        for c in (described.name, *chain):
            if c not in levels:
                levels[c] = _class_level_names(classes[c].node)
            own |= levels[c]
        memo: dict = ctx.memo("inherited-layer-bindings", dict)  # type: ignore[assignment]
        found: set[str] = set()
        seen: set[str] = set()
        for position, base in enumerate(chain):
            for a, layer in classes[base].attributes.items():
                if a in seen:
                    continue
                seen.add(a)  # (the nearest base building it is its owner)
                if a in own or not (layer.kind in FRESH_OUTPUT_LAYERS or layer.kind in local) or changes.hooks_may_see([a]):
                    continue
                key = (a, base)
                if key not in memo:
                    # once in the owner and its subclasses, never in a base above it
                    memo[key] = changes.bound_once(a, base) and not any(changes.own.get(b, {}).get(a, 0) for b in chain[position + 1 :])
                if memo[key]:
                    found.add(a)
        return found

    def stage_layers(self) -> set[str]:
        """The attributes holding an `nn.Sequential` a method of the class fills with blocks and
        returns (analysis/helper_sequentials.py: fast-autoaugment's `self.layer3 =
        self._make_layer(...)`) whose every block returns a fresh output (a torch layer that keeps
        nothing of it, or a class of the file whose `forward` returns a fresh tensor: ShakeBlock's
        `h + h0`): `self.layer3(h)` returns its last block's fresh output, or `h` itself where the
        helper appended none (the asker checks that input).  Only where the file registers no hook
        at all, binds the attribute once, derives no class from this one (a subclass may override
        the helper), writes no attribute unseen, and names the attribute (on anything that may be
        this class's instance) only at that binding and in calls `self.<attribute>(...)` of this
        class's methods: nothing else reaches a block or the Sequential's elements."""
        described, ctx = self.described, self.ctx
        if described is None:
            return set()
        if self._stages is None:
            self._stages = set()
            changes = module_changes(ctx)
            name = described.name
            if changes.hooked or changes.rebinds_unseen or changes.subclasses.get(name):
                return self._stages
            stages = helper_sequential_elements(ctx, described.node)
            if not stages:
                return self._stages
            local = {f"local:{c}" for c in fresh_output_classes(ctx)}  # (not owning classes: a block returning `self.body(x)` may end in a sigmoid, whose output autograd keeps)
            called: dict[str, int] = {}
            for node in code_descendants(described.node):
                if type(node) is cst.Call:
                    attribute = self_attr(node.func)  # type: ignore[attr-defined]
                    if attribute in stages:
                        called[attribute] = called.get(attribute, 0) + 1  # type: ignore[index]
            for attribute, kinds in stages.items():
                if not all(kind in FRESH_OUTPUT_LAYERS or kind in local for kind in kinds):
                    continue
                if not changes.bound_once(attribute, name) or changes.elements_changed(attribute, name):
                    continue
                if attribute_uses(ctx, name, attribute) == 1 + called.get(attribute, 0):
                    self._stages.add(attribute)
        return self._stages

    def sequence_only_layer(self, attribute: str) -> Optional[Layer]:
        """The torch layer `self.<attribute>` holds where the class keeps it only to list it once in
        a container (DGCNN's `self.bn1 = nn.BatchNorm2d(64)`, then `nn.Sequential(conv, self.bn1,
        nn.LeakyReLU(0.2))` in the same constructor): the constructor binds it once to a layer that
        keeps nothing of its output, no hook may see it, and the file names `.<attribute>` (of this
        class, or of any object) at that binding and one other place only, the container's element.
        Its output there is the container's own, read by the next element alone."""
        described = self.described
        layer = described.attributes.get(attribute) if described is not None else None
        if layer is None or layer.kind not in FRESH_OUTPUT_LAYERS or attribute not in self.fresh_output_layers():
            return None
        return layer if attribute_uses(self.ctx, described.name, attribute) == 2 else None  # type: ignore[union-attr]

    def fresh_output_elements(self) -> dict[str, frozenset[int]]:
        """The attributes holding a class of the file whose `forward` returns a tuple with fresh
        elements (analysis/fresh_forwards.py: Glow's `Actnorm`, `return z, logdet`), bound once,
        with no hook that may see them: attribute -> the positions of those elements, so that
        `self.actnorm(x)[0]` is a fresh value."""
        described = self.described
        if described is None:
            return {}
        classes = fresh_element_classes(self.ctx)
        if not classes:
            return {}
        changes = module_changes(self.ctx)
        return {
            a: classes[layer.kind[len("local:"):]] for a, layer in described.attributes.items()
            if layer.kind and layer.kind.startswith("local:") and layer.kind[len("local:"):] in classes
            and changes.bound_once(a, self.ctx.class_name) and not changes.hooks_may_see([a])
        }  # fmt: skip

    def tensor_attributes(self) -> set[str]:
        """The attributes that hold a tensor: `self.weight = nn.Parameter(...)` built by the
        constructor and bound nowhere else in the file, so `self.weight.mm(x)` is torch's method
        (a new tensor: analysis/saved.py's FRESH_RESULT_METHODS), not another object's."""
        described = self.described
        if described is None:
            return set()
        changes = module_changes(self.ctx)
        return {a for a, layer in described.attributes.items() if layer.kind == "Parameter" and changes.bound_once(a, self.ctx.class_name)}

    def layer_lists(self) -> set[ListElement]:
        """`self.<attribute> = nn.ModuleList(...)` (or a plain list, `self.<attribute> = []`, filled by
        `.append`) whose every element is such a layer (depth 1), or a ModuleList of such lists
        (depth 2), bound once, no element replaced, no hook on it:
        `self.<attribute>[i](x)` (`[i][j]`) is one of those layers."""
        described, ctx = self.described, self.ctx
        if described is None:
            return set()
        if self._listed is None:
            changes = module_changes(ctx)
            init = _constructor(described.node)
            self._listed = set()
            module_lists = _module_list_attributes(init, plain=False)  # (one walk, not one per attribute)
            for a in _module_list_attributes(init):
                if changes.bound_once(a, ctx.class_name) and not changes.hooks_may_see([a]) and not changes.elements_changed(a, ctx.class_name):
                    classes = element_classes(ctx, init, a)  # type: ignore[arg-type]
                    # `fc = nn.Linear(...)`, `self.add_module("fc1", fc)`, `self.fcs.append(fc)`: the
                    # layer is reachable by its own name too, so only where no hook is registered
                    named = element_classes(ctx, init, a, named=True) if classes is None and not changes.hooked else None  # type: ignore[arg-type]
                    held = classes if classes is not None else named
                    if held is not None and held <= FRESH_OUTPUT_LAYERS:
                        self._listed.add(ListElement(a, 1))
                        if a not in module_lists:
                            self.plain_lists.add(a)
                    nested = nested_element_classes(ctx, init, a) if classes is None else None  # type: ignore[arg-type]
                    if nested and nested <= FRESH_OUTPUT_LAYERS:
                        self._listed.add(ListElement(a, 2))
        return self._listed

    def layer_dicts(self) -> set[str]:
        """`self.<attribute> = OrderedDict()` whose every entry the constructor sets to a layer that
        keeps nothing of its output, and that nothing else changes (analysis/layer_dicts.py):
        `self.<attribute>[key](x)` is one of those layers' fresh output."""
        described = self.described
        if described is None:
            return set()
        if self._dicts is None:
            node = described.node
            held = self.ctx.memo(("layer-dicts", id(node)), lambda: dict_layer_classes(self.ctx, node, _constructor(node)))
            self._dicts = {a for a, classes in held.items() if classes <= FRESH_OUTPUT_LAYERS}
        return self._dicts

    def activation(self, attribute: Optional[str]) -> Optional[tuple[str, tuple, int]]:
        """The activation module `self.<attribute>` holds: the class that builds it (this one, or a
        base class of the file: `inherited_owner`), the modules it may be, and how many bindings of
        the attribute the constructor writes; None where it holds none (the cheap tests first)."""
        described = self.described
        if attribute is None or described is None:
            return None
        layer = described.attributes.get(attribute)
        if layer is None and attribute in described.branches:
            module = self._layers()[1].get(attribute)
            return (described.name, *module) if module is not None else None
        if layer is None:
            owner = inherited_owner(self.classes, described.name, attribute)
            if owner is None:
                return None
            layer = self.classes[owner].attributes[attribute]
            changes = module_changes(self.ctx)
            trusted = changes.bound_once(attribute, owner) and not changes.hooks_may_see([attribute])
            return (owner, (layer,), 1) if trusted and layer.kind in INPLACE_MODULES else None
        if layer.kind not in INPLACE_MODULES:
            return None
        module = self._layers()[1].get(attribute)
        return (described.name, *module) if module is not None else None


def final_name(func: cst.BaseExpression) -> Optional[str]:
    """`F.relu` -> "relu", `relu` -> "relu" (the cheap test before resolving)."""
    if type(func) is cst.Attribute:
        return func.attr.value  # type: ignore[union-attr]
    return func.value if type(func) is cst.Name else None  # type: ignore[union-attr]


def _single_chain(ctx, classes: dict, name: str) -> list[str]:
    """The module classes of the file `name` derives from, nearest first, where `name` and each
    of them has one base and no compound statement at class level (whose names are not read), and
    the last derives from a class of `torch.nn` itself; [] otherwise (a mixin, an imported base, a
    cycle)."""
    memo: dict = ctx.memo("single-inheritance-chains", dict)
    if name in memo:
        return memo[name]
    memo[name] = []  # (a cycle of bases ends here)
    described = classes.get(name)
    chain: list[str] = []
    if described is not None and len(described.node.bases) == 1 and not described.node.keywords and "*" not in _class_level_names(described.node):
        base = described.node.bases[0].value
        if type(base) is cst.Name and base.value in classes and base.value != name:
            above = _single_chain(ctx, classes, base.value)
            chain = [base.value, *above] if above or _torch_based(ctx, classes[base.value]) else []
    memo[name] = chain
    return chain


def _torch_based(ctx, described) -> bool:
    """Does the class derive from one class of `torch.nn` (`nn.Module`) alone?"""
    node = described.node
    if len(node.bases) != 1 or node.keywords or "*" in _class_level_names(node):
        return False
    qualified = resolve_global(ctx, node.bases[0].value)
    return bool(qualified) and qualified.startswith("torch.nn.")


def _class_level_names(class_node: cst.ClassDef) -> set[str]:
    """Names the class body binds itself (`bn = None`, a method, a property): an instance's
    attribute lookup finds them before a submodule the base constructor registered."""
    found: set[str] = set()
    for statement in class_node.body.body:  # type: ignore[attr-defined]
        if type(statement) in (cst.FunctionDef, cst.ClassDef):
            found.add(statement.name.value)  # type: ignore[attr-defined]
        elif type(statement) is cst.SimpleStatementLine:
            for small in statement.body:  # type: ignore[attr-defined]
                targets = [t.target for t in small.targets] if type(small) is cst.Assign else [small.target] if type(small) in (cst.AnnAssign, cst.AugAssign) else []
                found.update(t.value for t in targets if type(t) is cst.Name)
        else:
            found.add("*")  # (a compound statement at class level: its bindings are not read here)
    return found


def _one_saving(layers: list) -> bool:
    """Is every layer an in-place-capable module, all of them with what in place saves the same
    (analysis/inplace_savings.py, as for a module: gradients may be on, its reader not known), or
    an `nn.Identity`?"""
    if any(layer.kind != "Identity" and layer.kind not in INPLACE_MODULES for layer in layers):
        return False
    savings = {inplace_saving(layer.kind, forward_only=False, next_keeps_input=False) for layer in layers if layer.kind != "Identity"}
    return len(savings) == 1


def _sharing_attributes(described) -> set[str]:
    """The attributes of the class that may hold a module another attribute holds too: the same
    layer call bound to both (directly, through a local name, or as a branch of a choice)."""
    holders: dict[int, set[str]] = {}
    for attribute, layer in described.attributes.items():
        holders.setdefault(id(layer.call), set()).add(attribute)
    for attribute, built in described.branches.items():
        for layer in built:
            holders.setdefault(id(layer.call), set()).add(attribute)
    return {a for names in holders.values() if len(names) > 1 for a in names}


def _constructor(class_node: cst.ClassDef) -> Optional[cst.FunctionDef]:
    for statement in class_node.body.body:  # type: ignore[attr-defined]
        if type(statement) is cst.FunctionDef and statement.name.value == "__init__":
            return statement
    return None


def _self_bindings(init: Optional[cst.FunctionDef], attribute: str) -> int:
    """How many `self.<attribute> = ...` assignments the constructor writes."""
    if init is None:
        return 0
    return sum(
        1 for n in code_descendants(init)
        if type(n) is cst.AssignTarget and self_attr(n.target) == attribute  # type: ignore[attr-defined]
    )  # fmt: skip


def _none_bindings(init: Optional[cst.FunctionDef], attribute: str) -> int:
    """How many of the constructor's `self.<attribute> = ...` assignments bind it to `None` alone."""
    if init is None:
        return 0
    return sum(
        1 for n in code_descendants(init)
        if type(n) is cst.Assign and len(n.targets) == 1 and self_attr(n.targets[0].target) == attribute  # type: ignore[attr-defined]
        and type(n.value) is cst.Name and n.value.value == "None"  # type: ignore[attr-defined]
    )  # fmt: skip


def _written_indirectly(ctx, attribute: str) -> bool:
    """May the file bind `attribute` on an object without naming it as an attribute: through an
    object's `__dict__`, `vars(...)`, or `setattr` with a name that is not a literal or is this one?"""
    return _indirect_writes(ctx) is None or attribute in _indirect_writes(ctx)  # type: ignore[operator]


def _indirect_writes(ctx) -> Optional[frozenset[str]]:
    """The attribute names the file's `setattr` calls give as literals; None where the file writes
    attributes some way no name can be read off (`__dict__`, `vars`, `setattr(o, name, v)`).  Once
    per file."""
    return ctx.memo("indirect-attribute-writes", lambda: _collect_indirect_writes(ctx.module))  # type: ignore[no-any-return]


def _collect_indirect_writes(module: cst.Module) -> Optional[frozenset[str]]:
    named: set[str] = set()
    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.Attribute and node.attr.value == "__dict__":  # type: ignore[attr-defined]
            return None
        if kind is cst.Call and type(node.func) is cst.Name:  # type: ignore[attr-defined]
            callee = node.func.value  # type: ignore[attr-defined]
            if callee == "vars":
                return None
            if callee == "setattr":
                args = node.args  # type: ignore[attr-defined]
                if len(args) < 2 or type(args[1].value) is not cst.SimpleString or args[1].star:
                    return None
                named.add(args[1].value.evaluated_value)  # type: ignore[attr-defined]
    return frozenset(named)


def _module_list_attributes(init: Optional[cst.FunctionDef], plain: bool = True) -> set[str]:
    """The attributes `init` assigns a call named `ModuleList`, or (with `plain`) an empty list display
    it also appends to (a plain list of layers: PointRend's `self.fcs = []`), the cheap test before
    the walk of the file."""
    if init is None:
        return set()
    found: set[str] = set()
    lists: set[str] = set()
    appended: set[str] = set()
    for node in code_descendants(init.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if type(node) is cst.Assign and len(node.targets) == 1 and self_attr(node.targets[0].target) is not None:  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            if type(value) is cst.Call and final_name(value.func) == "ModuleList":  # type: ignore[attr-defined]
                found.add(node.targets[0].target.attr.value)  # type: ignore[attr-defined]
            elif plain and type(value) is cst.List and not value.elements:  # type: ignore[attr-defined]
                lists.add(node.targets[0].target.attr.value)  # type: ignore[attr-defined]
        elif plain and type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "append":  # type: ignore[attr-defined]
            attribute = self_attr(node.func.value)  # type: ignore[attr-defined]
            if attribute is not None:
                appended.add(attribute)
    # (a plain list the constructor never appends a layer to is a list of something else: not read further)
    return found | (lists & appended)
