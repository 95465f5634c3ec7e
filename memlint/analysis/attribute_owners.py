"""Which class an attribute reference belongs to: `self.dropout` in a method of one class is not the
`self.dropout` of another.

Two classes of a file often give their modules one name (`self.dropout = nn.Dropout(p)` in an
encoder and in its positional encoding).  A question about every use of one class's attribute
("is `self.dropout` only ever called on fresh values?") must not count the other class's uses.
`self.<attribute>` inside the methods of a top-level class belongs to that class, and to the classes
of the file related to it by inheritance (a subclass's `self.dropout` may be the base's module);
every other `x.<attribute>` (another object, a nested class, module code) may be anyone's and is
counted for every class.  `used_other_than_called` asks, within one class, whether `self.<attribute>`
is used in a way that can expose what its layers output (iterated, a layer of it called or hooked,
passed on) or only called and read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst
from libcst.helpers import get_full_name_for_node

from memlint.analysis.bindings import NON_IMPORT_BINDERS, exact_names_bound_by
from memlint.analysis.calling_helpers import only_calls_argument
from memlint.analysis.initialisers import resolve_global
from memlint.analysis.inventory import torch_nn_name
from memlint.analysis.module_changes import literal_part, module_changes
from memlint.analysis.sequences import sequential_elements
from memlint.analysis.tables import INPLACE_MODULES
from memlint.analysis.walk import code_descendants, code_with_parents, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context


def attribute_uses(ctx: "Context", class_name: str, attribute: str) -> int:
    """How many `.attribute` references of the file may name the attribute of `class_name`'s
    instances: all of them except `self.attribute` in the methods of an unrelated class."""
    total, own = _counts(ctx)
    if attribute not in total:
        return 0
    subclasses = module_changes(ctx).subclasses
    related = {class_name, *subclasses.get(class_name, ())}
    related.update(base for base, derived in subclasses.items() if class_name in derived)
    others = sum(count for (owner, name), count in own.items() if name == attribute and owner not in related)
    return total[attribute] - others


def _counts(ctx: "Context") -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    return ctx.memo("attribute-owners", lambda: _collect(ctx))  # type: ignore[return-value]


def _collect(ctx: "Context") -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    module = ctx.module
    total: dict[str, int] = {}
    torch_functions: list[cst.Attribute] = []
    rebound: set[str] = set()  # names some binding of the file that is no import binds (a parameter `F`)
    imported: dict[str, int] = {}  # name -> how many import aliases of the file bind it
    aliases: list[cst.ImportAlias] = []
    namespace_changed = False  # a star import, `globals()`, `vars()`, `sys.modules`: any global may be rebound
    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.Attribute:
            if _on_imported_name(node):  # `F.relu`, `torch.nn.functional.relu`: maybe torch's own (below)
                torch_functions.append(node)  # type: ignore[arg-type]
            name = node.attr.value  # type: ignore[attr-defined]
            total[name] = total.get(name, 0) + 1
            if name == "modules" and type(node.value) is cst.Name and node.value.value == "sys":  # type: ignore[attr-defined]
                namespace_changed = True
        elif kind in NON_IMPORT_BINDERS:
            rebound.update(exact_names_bound_by(node, parameters=True, declarations=True))
        elif kind is cst.ImportAlias:
            for name in exact_names_bound_by(node):
                imported[name] = imported.get(name, 0) + 1
            aliases.append(node)  # type: ignore[arg-type]
        elif (kind is cst.ImportFrom and type(node.names) is cst.ImportStar) or (kind is cst.Name and node.value in ("globals", "vars")):  # type: ignore[attr-defined]
            namespace_changed = True
    # `F.relu(out)` calls torch's function, never an instance's `.relu` module: an object of torch's
    # namespace is no project class's instance.  Only where the root name is bound by one import at
    # the top of the module and nothing else anywhere in the file (a parameter or local named `F`, a
    # function's own `import blocks as F`, a star import or `globals()["F"] = ...` may hold anything).
    if namespace_changed:
        torch_functions = []
    top_imports = _top_level_imports(module)
    for node in torch_functions:
        root = _root_name(node)
        if root in rebound or root not in top_imports or imported.get(root or "", 0) != top_imports[root]:  # type: ignore[index]
            continue  # (also bound by an import in a function or a branch)
        if (resolve_global(ctx, node) or "").startswith("torch."):
            total[node.attr.value] -= 1
    own: dict[tuple[str, str], int] = {}
    for statement in module.body:
        if type(statement) is not cst.ClassDef:
            continue
        class_name = statement.name.value  # type: ignore[attr-defined]
        for method in statement.body.body:  # type: ignore[attr-defined]
            # `self` only: a static method's first parameter is any object
            if type(method) is not cst.FunctionDef or not _receives_self(method):
                continue
            # A nested class has a `self` of its own; a nested function's `self` is the method's.
            for node in code_descendants(method.body, skip=(cst.ClassDef,)):  # type: ignore[attr-defined]
                if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":  # type: ignore[attr-defined]
                    key = (class_name, node.attr.value)  # type: ignore[attr-defined]
                    own[key] = own.get(key, 0) + 1
    # A class defined twice under one name (a notebook cell run again) is one owner here: its uses
    # are never taken from the other definition's count.
    return total, own


def _top_level_imports(module: cst.Module) -> dict[str, int]:
    """Names bound by import statements standing directly in the module's body (not in a branch, a
    `try` or a function), each with how many aliases bind it, where all of them bind it to one
    module or object (`import torch` twice, `import torch` and `import torch.nn`; not `import
    torch.nn.functional as F` and `import blocks as F`)."""
    targets: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for statement in module.body:
        if type(statement) is not cst.SimpleStatementLine:
            continue
        for small in statement.body:
            if type(small) not in (cst.Import, cst.ImportFrom) or type(small.names) is cst.ImportStar:  # type: ignore[attr-defined]
                continue
            source = "." * len(small.relative) + (get_full_name_for_node(small.module) or "") if type(small) is cst.ImportFrom else None  # type: ignore[attr-defined]
            for alias in small.names:  # type: ignore[attr-defined]
                full = get_full_name_for_node(alias.name) or "?"
                for name in exact_names_bound_by(alias):
                    if source is not None:
                        target = f"{source}:{full}"
                    else:
                        target = full if alias.asname is not None else name  # `import torch.nn` binds `torch`
                    targets.setdefault(name, set()).add(target)
                    counts[name] = counts.get(name, 0) + 1
    return {name: counts[name] for name, found in targets.items() if len(found) == 1}


def _on_imported_name(node: cst.Attribute) -> bool:
    """Is `node` `<name>.<attr>` or `<name>.<a>....<attr>` (a dotted chain of names, no call or index)?"""
    return _root_name(node) is not None


def _root_name(node: cst.Attribute) -> Optional[str]:
    value = node.value
    while type(value) is cst.Attribute:
        value = value.value  # type: ignore[attr-defined]
    return value.value if type(value) is cst.Name else None  # type: ignore[attr-defined]


def _receives_self(method: cst.FunctionDef) -> bool:
    params = method.params.params
    static = any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in method.decorators)  # type: ignore[attr-defined]
    return bool(params) and params[0].name.value == "self" and not static


def class_nodes(module: cst.Module) -> dict[str, cst.ClassDef]:
    """Class name -> the first class of that name in the file (one walk for all of them)."""
    found: dict[str, cst.ClassDef] = {}
    for node in code_descendants(module):
        if isinstance(node, cst.ClassDef):
            found.setdefault(node.name.value, node)
    return found


def used_other_than_called(class_node: Optional[cst.ClassDef], attribute: str, ctx) -> bool:
    """Is `self.<attribute>` used in the class in a way that could expose its intermediate outputs?

    Harmless: calling it, or a part of it taken by literal positions (`self.classifier[:4](x)`, which
    the asker checks against `module_changes.parts_run`), assigning it, module methods that run no layer on their own
    (`self.D.parameters()`, `.cuda()`, `.zero_grad()`), reading an attribute (`self.net[0].weight.device`)
    and putting it into a parent `nn.Sequential` / `nn.ModuleList` (the parent calls it whole).
    Anything else (iterating it, calling or hooking one of its layers, passing it elsewhere) is not."""
    if class_node is None:
        return True
    return any(
        isinstance(node, cst.Attribute) and node.attr.value == attribute and self_attr(node) == attribute
        and _exposing(node, parents, class_node, attribute, ctx)
        for node, parents in code_with_parents(class_node)
    )  # fmt: skip


def path_used_other_than_called(attribute: str, ctx) -> bool:
    """`used_other_than_called` for a module stored on another module (`self.encoder_q.fc =
    nn.Sequential(...)`): whose it is, is not known by name, so every `<anything>.<attribute>` of the
    file counts, each harmless only as a use of `self.<attribute>` is (called, assigned, read, put
    into a parent container)."""
    return attribute in _exposed_names(ctx)


def _exposed_names(ctx) -> frozenset[str]:
    """The attribute names of the file with a mention that may expose a module's layers (see
    `path_used_other_than_called`), found in one walk of the file however many are asked."""
    return ctx.memo("exposed-attribute-names", lambda: frozenset(
        node.attr.value  # type: ignore[attr-defined]
        for node, parents in code_with_parents(ctx.module)
        if type(node) is cst.Attribute and _exposing(node, parents, None, node.attr.value, ctx)  # type: ignore[attr-defined]
    ))  # type: ignore[return-value]  # fmt: skip


def _exposing(node: cst.Attribute, parents: tuple, class_node: Optional[cst.ClassDef], attribute: str, ctx) -> bool:
    """Could this one mention of the module expose its intermediate outputs (see
    `used_other_than_called`)?  `class_node`: the class whose `self.<attribute>` it is (None: a
    mention on any object, where one of its layers handed on is not looked up)."""
    parent = parents[-1]
    if isinstance(parent, cst.Call) and parent.func is node:
        return False
    if isinstance(parent, cst.AssignTarget):
        return False
    if _compared_with_none(node, parents):
        return False  # `if self.up_conv != None:` reads whether it is set, runs none of its layers
    if isinstance(parent, cst.Arg) and parent.value is node and not parent.star and len(parents) > 1:
        if type(parents[-2]) is not cst.Call:
            return True  # (a class's base, `class Block(nn.Sequential)`: not a module handed to a call)
        if torch_nn_name(ctx, parents[-2].func) in ("Sequential", "ModuleList"):  # type: ignore[attr-defined]
            return False
        if only_calls_argument(parents[-2], parent, ctx):  # type: ignore[arg-type]
            return False  # `pack_wrapper(self.att_embed, x, masks)`: a helper of the file that only calls it
        return True
    if isinstance(parent, cst.Subscript) and parent.value is node and len(parents) > 1:
        if isinstance(parents[-2], cst.Call) and parents[-2].func is parent and literal_part(parent) is not None:
            return False  # `self.classifier[:4](x)`: a part run at once; where a part may start is the asker's (module_changes.parts_run)
    if isinstance(parent, cst.Subscript) and parent.value is node:  # `self.net[0]...`: only attribute reads
        if class_node is not None and len(parents) > 1 and _passes_one_layer(parent, parents[-2], class_node, attribute, ctx):
            return False  # `L.log_param("fc1", self.trunk[0], step)`: a Linear of it, never the activation
        if len(parents) < 2 or not isinstance(parents[-2], cst.Attribute) or parents[-2].value is not parent:
            return True
        rest = parents[:-1]
        return _exposes(rest[-1], rest[:-1], harmless=frozenset())
    if isinstance(parent, cst.Attribute) and parent.value is node and not _exposes(parent, parents[:-1], _MODULE_METHODS):
        return False
    return True


def _passes_one_layer(subscript: cst.Subscript, parent: cst.CSTNode, class_node: cst.ClassDef, attribute: str, ctx) -> bool:
    """`self.trunk[0]` handed to a call (`L.log_param("fc1", self.trunk[0], step)`, which reads its
    weights), where element 0 of the constructor's one `self.trunk = nn.Sequential(...)` is a
    `torch.nn` layer that is neither an activation nor a container: whoever receives it can run that
    layer alone (a new output, which no activation of the Sequential overwrites) or read its
    parameters, but not run the activation or see what the Sequential passes between its layers.
    (A hook it might register is as unseen as one registered on a model handed to a function of
    another file.)"""
    if not isinstance(parent, cst.Arg) or parent.value is not subscript or parent.star or parent.keyword is not None:
        return False
    index = _literal_index(subscript)
    elements = _sequential_elements(class_node, attribute, ctx)
    if index is None or elements is None or not -len(elements) <= index < len(elements):
        return False
    element = elements[index]
    if not isinstance(element, cst.Call):
        return False
    kind = torch_nn_name(ctx, element.func)
    return kind is not None and kind not in INPLACE_MODULES and kind not in _CONTAINERS


_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict"})


def _literal_index(subscript: cst.Subscript) -> Optional[int]:
    """`0` of `x[0]`, `-1` of `x[-1]`; None for anything else (a slice, a name)."""
    if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Index):
        return None
    value = subscript.slice[0].slice.value
    negative = isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus)
    if negative:
        value = value.expression  # type: ignore[attr-defined]
    if not isinstance(value, cst.Integer):
        return None
    return -int(value.value) if negative else int(value.value)


def _sequential_elements(class_node: cst.ClassDef, attribute: str, ctx) -> Optional[list[cst.BaseExpression]]:
    """The layers of the constructor's `self.<attribute> = nn.Sequential(...)` (`sequences.sequential_elements`:
    also an `OrderedDict` of named layers, or displays unpacked into it), where that is the class's one
    binding of the attribute and every layer is known (no unpacked part of unknown length)."""
    bindings = [
        node
        for node in code_descendants(class_node)
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.AugAssign))
        and any(self_attr(target) == attribute for target in _targets(node))
    ]
    if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign) or not isinstance(bindings[0].value, cst.Call):
        return None
    built = bindings[0].value
    if torch_nn_name(ctx, built.func) != "Sequential":
        return None
    layers = sequential_elements(built, ctx)
    if any(node is None for _, node in layers):
        return None  # an unpacked part of unknown length: an index names no known layer
    return [layer for layer, _ in layers]


def _targets(node) -> list[cst.BaseExpression]:
    if isinstance(node, cst.Assign):
        return [target.target for target in node.targets]
    return [node.target]


def _compared_with_none(node: cst.BaseExpression, parents: tuple) -> bool:
    """`self.x is None`, `self.x != None`, `None == self.x`: one identity or equality test with None
    (nn.Module defines no `__eq__`), which runs nothing of the module."""
    comparison = parents[-1] if isinstance(parents[-1], cst.Comparison) else parents[-2] if len(parents) > 1 else None
    if not isinstance(comparison, cst.Comparison) or len(comparison.comparisons) != 1:
        return False
    test = comparison.comparisons[0]
    if not isinstance(test.operator, _NONE_TESTS):
        return False
    left, right = comparison.left, test.comparator
    return (left is node and _is_none(right)) or (right is node and _is_none(left))


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


_NONE_TESTS = (cst.Is, cst.IsNot, cst.Equal, cst.NotEqual)


def _exposes(attribute: cst.Attribute, parents: tuple, harmless: frozenset[str]) -> bool:
    """`<module>.name`: a read (`.weight`, `.training`) exposes nothing; a call does unless the
    method is in `harmless`."""
    called = bool(parents) and isinstance(parents[-1], cst.Call) and parents[-1].func is attribute
    return called and attribute.attr.value not in harmless


# Methods of a module that run none of its layers and register nothing that sees their outputs.
_MODULE_METHODS = frozenset(
    {"parameters", "named_parameters", "buffers", "named_buffers", "cuda", "cpu", "to", "train", "eval",
     "zero_grad", "state_dict", "load_state_dict", "requires_grad_", "half", "float", "double", "bfloat16",
     "type", "share_memory", "apply", "forward"}
)  # fmt: skip


def inherited_owner(classes: dict, class_name: str, attribute: str) -> Optional[str]:
    """The base class of the file whose constructor builds `self.<attribute>` for `class_name`,
    which does not build it itself (pytorch-GAT's `GATLayer` builds `self.leakyReLU`, its three
    subclasses call it in their `forward`).  `classes`: the inventory's module classes by name.
    Bases are followed by plain name, depth first in the order written; None where no base of the
    file builds it (whether the attribute is bound once, in the owner, is module_changes' question)."""
    seen: set[str] = set()
    stack = [class_name]
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        described = classes.get(name)
        if described is None:
            continue
        if name != class_name and attribute in described.attributes:
            return name
        bases = [b.value.value for b in described.node.bases if type(b.value) is cst.Name]  # type: ignore[attr-defined]
        stack.extend(reversed(bases))
    return None
