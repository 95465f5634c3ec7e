"""Which class an attribute reference belongs to: `self.dropout` in a method of one class is not the
`self.dropout` of another.

Two classes of a file often give their modules one name (`self.dropout = nn.Dropout(p)` in an
encoder and in its positional encoding).  A question about every use of one class's attribute
("is `self.dropout` only ever called on fresh values?") must not count the other class's uses.
`self.<attribute>` inside the methods of a top-level class belongs to that class, and to the classes
of the file related to it by inheritance (a subclass's `self.dropout` may be the base's module);
every other `x.<attribute>` (another object, a nested class, module code) may be anyone's and is
counted for every class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.module_changes import module_changes
from memlint.analysis.walk import code_descendants

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
    return ctx.memo("attribute-owners", lambda: _collect(ctx.module))  # type: ignore[return-value]


def _collect(module: cst.Module) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    total: dict[str, int] = {}
    for node in code_descendants(module):
        if type(node) is cst.Attribute:
            name = node.attr.value  # type: ignore[attr-defined]
            total[name] = total.get(name, 0) + 1
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


def _receives_self(method: cst.FunctionDef) -> bool:
    params = method.params.params
    static = any(type(d.decorator) is cst.Name and d.decorator.value == "staticmethod" for d in method.decorators)  # type: ignore[attr-defined]
    return bool(params) and params[0].name.value == "self" and not static
