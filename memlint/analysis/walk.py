"""Small, targeted walks over a subtree, for the rare questions a single forward pass cannot answer
(what happens to a name after a loop).  Only run on nodes a rule already suspects."""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst

from memlint.analysis.evidence import entries_key

# `children(node)` equals `node.children` without libcst rebuilding the node to list them; the
# `code_` forms leave out whitespace, comments, operators and brackets (memlint.pipeline.tree.LAYOUT).
from memlint.pipeline.tree import children, code_children, code_descendants, descendants  # noqa: F401  (re-exported)


# Scopes of their own: what their bodies bind is not bound where they stand (their own name aside),
# and their code is not the code of the function around them.  Not comprehensions: their loop
# targets are theirs (`CompFor`), but a walrus in one binds the name around it.
SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def own_nodes(function: cst.FunctionDef) -> Iterator[cst.CSTNode]:
    """The code nodes of `function`'s body, not those inside the functions, classes and lambdas it
    defines (the nested definitions themselves are listed)."""
    return code_descendants(function.body, skip=SCOPES)


def with_parents(node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """Every node under `node` in source order, with its ancestors (nearest last)."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(child, (node,)) for child in reversed(children(node))]
    while stack:
        current, parents = stack.pop()
        yield current, parents
        inner = parents + (current,)
        stack.extend((child, inner) for child in reversed(children(current)))


def code_with_parents(
    node: cst.CSTNode, nearest: Optional[int] = None
) -> Iterator[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]]:
    """`with_parents(node)` without the LAYOUT nodes (which are nobody's parents but each other's);
    with `nearest`, only that many of the closest ancestors (cheaper deep down a function)."""
    stack: list[tuple[cst.CSTNode, tuple[cst.CSTNode, ...]]] = [(child, (node,)) for child in reversed(code_children(node))]
    pop, append = stack.pop, stack.append
    keep = -nearest if nearest else None
    while stack:
        current, parents = pop()
        yield current, parents
        below = code_children(current)
        if below:
            inner = parents + (current,)
            if keep is not None:
                inner = inner[keep:]
            for child in reversed(below):
                append((child, inner))


def calls_method(node: cst.CSTNode, names: frozenset[str]) -> bool:
    """Does the subtree call a method with one of these names (`x.backward()`)?"""
    return any(
        type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in names
        for n in code_descendants(node)
    )


def nested_blocks(statement: cst.CSTNode) -> Iterator[Sequence[cst.BaseStatement]]:
    """The statement lists directly inside a compound statement: its body, its handlers' bodies,
    `else` / `elif` / `finally` blocks (not blocks nested deeper)."""
    body = getattr(statement, "body", None)
    if isinstance(body, cst.IndentedBlock):
        yield body.body
    for handler in getattr(statement, "handlers", ()):
        yield handler.body.body
    for attr in ("orelse", "finalbody"):
        extra = getattr(statement, attr, None)
        while extra is not None:
            block = getattr(extra, "body", None)
            if isinstance(block, cst.IndentedBlock):
                yield block.body
            extra = getattr(extra, "orelse", None) if isinstance(extra, cst.If) else None


def dotted_name(expr: cst.BaseExpression) -> Optional[str]:
    """`policy` -> "policy", `self.actor` -> "self.actor"; None for anything that is not a chain of names."""
    parts = []
    while type(expr) is cst.Attribute:
        parts.append(expr.attr.value)  # type: ignore[union-attr]
        expr = expr.value  # type: ignore[union-attr]
    if type(expr) is not cst.Name:
        return None
    parts.append(expr.value)  # type: ignore[union-attr]
    return ".".join(reversed(parts))


def self_attr(expr: cst.BaseExpression) -> Optional[str]:
    """`self.NAME` -> "NAME": an attribute of the object a method runs on; None for anything else
    (`self.a.b`, `other.NAME`, `self[0]`)."""
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":  # type: ignore[attr-defined]
        return expr.attr.value  # type: ignore[attr-defined]
    return None


def string_key(expr: cst.BaseExpression) -> Optional[str]:
    """`state["optimizer"]` -> "optimizer": the key of a subscript by one string literal, else None."""
    if type(expr) is not cst.Subscript or len(expr.slice) != 1:  # type: ignore[attr-defined]
        return None
    index = expr.slice[0].slice  # type: ignore[attr-defined]
    key = index.value if type(index) is cst.Index else None
    if type(key) is not cst.SimpleString:
        return None
    value = key.evaluated_value
    return value if type(value) is str else None


def held_name(expr: cst.BaseExpression) -> Optional[str]:
    """A chain of names, attributes and string keys as one name: `state["model"]` -> 'state["model"]',
    `self.nets["G"]` -> 'self.nets["G"]' (a model or optimizer kept in a dict, protonets' `Engine`:
    the same slot read twice is the same object); `dotted_name` where there are no keys."""
    parts = []
    while True:
        kind = type(expr)
        if kind is cst.Attribute:
            parts.append("." + expr.attr.value)  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        elif kind is cst.Subscript and (key := string_key(expr)) is not None:
            parts.append(f'["{key}"]')
            expr = expr.value  # type: ignore[attr-defined]
        else:
            break
    if type(expr) is not cst.Name:
        return None
    return expr.value + "".join(reversed(parts))  # type: ignore[attr-defined]


def held_as(expr: cst.BaseExpression) -> Optional[str]:
    """The name an object is held under: `optimizer` -> "optimizer", `self.opt_G` -> "opt_G",
    `state["optimizer"]` -> "optimizer" (what naming's tests read), else None."""
    kind = type(expr)
    if kind is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if kind is cst.Attribute:
        return expr.attr.value  # type: ignore[attr-defined]
    return string_key(expr)


def module_entries_key(expr: cst.BaseExpression) -> Optional[str]:
    """`nets[k]`, `self.networks["feat_model"]` -> the key `module_evidence` knows the container's
    entries by ("nets[]", "self.networks[]": entries_key); None for anything else."""
    if type(expr) is not cst.Subscript:
        return None
    held = expr.value  # type: ignore[attr-defined]
    if type(held) is cst.Name:
        return entries_key(held.value)
    if type(held) is cst.Attribute and type(held.value) is cst.Name and held.value.value == "self":
        return entries_key("self." + held.attr.value)
    return None
