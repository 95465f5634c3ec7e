"""Calls that reach a function picked out of a literal of functions: a fact of the semantic model.

airbench's `infer()` chooses its test-time-augmentation helper by index, then calls it under no_grad:

    infer_fn = [infer_basic, infer_mirror, infer_mirror_translate][tta_level]
    with torch.no_grad():
        return torch.cat([infer_fn(inputs, model) for inputs in batches])

The call `infer_fn(...)` runs one of the three, whichever the index picks: it is a call that may
reach each of them, made with the grad mode around it.  Recognised shapes, the literal a list, a
tuple or a dict (its values) of plain names:

- `[f, g][i](x)`: the subscripted literal called at once;
- `fn = [f, g][i]`, then `fn(x)`;
- `fns = {"a": f, "b": g}`, then `fns[k](x)`.

Evidence, so that the calls found are all the calls through the name: the name is bound once in
its scope (the function, or the module), by that plain assignment, and every other mention of it
there (nested functions included) is the callee of a call (`fn(x)`), or for a bound literal the
subscripted callee (`fns[k](x)`): a name also handed on, stored, iterated or rebound may be
called anywhere, and is no evidence.  The elements are plain names; which function each one
means is the caller's question (Context: a name no import binds, as for a direct call).

A name bound to such a pick or literal that lacks this evidence, or is bound at module level (another
file may import it and call it with gradients on: a registry `EVALUATORS[task](model, loader)` in
train.py) or in a class body, is a use of each function that is no recognised call: it blocks
"every call runs without gradients" for them (Context.picks_blocked), as a call with gradients on
would.

Such a call is one the pick may not choose: like the project pass's calls on a receiver of unknown
class, it counts only for "every call runs without gradients" (Context.picked_sites,
FileFacts.no_grad_functions), not for the facts that need a call to happen (called on every
iteration, training work of a loop).
"""

from __future__ import annotations

from typing import Optional

import libcst as cst

from memlint.analysis.walk import code_with_parents

_LITERALS = (cst.List, cst.Tuple, cst.Dict)


def literal_names(expr: cst.BaseExpression) -> Optional[tuple[cst.Name, ...]]:
    """The elements of a list / tuple literal, or the values of a dict literal, where every one is a
    plain name (`[f, g]`, `{"a": f}`); None otherwise (a starred element, `**other`, a call)."""
    if type(expr) not in _LITERALS or not expr.elements:  # type: ignore[attr-defined]
        return None
    found = []
    for element in expr.elements:  # type: ignore[attr-defined]
        if type(element) not in (cst.Element, cst.DictElement) or type(element.value) is not cst.Name:
            return None
        found.append(element.value)
    return tuple(found)


def pick_binding(node: cst.Assign) -> Optional[tuple[str, tuple[cst.Name, ...], bool]]:
    """(name, the literal's names, whether the name holds the literal itself) for `fn = [f, g][i]`
    (False) and `fns = [f, g]` (True); None for any other assignment."""
    if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:
        return None
    value = node.value
    if type(value) is cst.Subscript:
        names = literal_names(value.value)
        return (node.targets[0].target.value, names, False) if names is not None else None  # type: ignore[attr-defined]
    names = literal_names(value)
    return (node.targets[0].target.value, names, True) if names is not None else None  # type: ignore[attr-defined]


def direct_pick(call: cst.Call) -> Optional[tuple[cst.Name, ...]]:
    """The names of `[f, g][i](x)`: a literal subscripted and called at once."""
    func = call.func
    return literal_names(func.value) if type(func) is cst.Subscript else None  # type: ignore[attr-defined]


def only_called(scope: cst.CSTNode, picks: dict[str, bool]) -> frozenset[str]:
    """The names of `picks` (each: does it hold the literal itself?) that `scope` binds once by a
    plain assignment and mentions otherwise only as the callee of a call (`fn(x)`), or, where it
    holds the literal, subscripted as one (`fns[k](x)`).  One walk of the scope for all its picks."""
    bindings: dict[str, int] = {}
    calls: dict[str, int] = {}
    failed: set[str] = set()
    for node, parents in code_with_parents(scope, nearest=3):
        if type(node) is not cst.Name or node.value not in picks:  # type: ignore[attr-defined]
            continue
        name = node.value  # type: ignore[attr-defined]
        holds_literal = picks[name]
        parent = parents[-1]
        if type(parent) is cst.AssignTarget and len(parents) > 1 and type(parents[-2]) is cst.Assign and len(parents[-2].targets) == 1:  # type: ignore[attr-defined]
            bindings[name] = bindings.get(name, 0) + 1
        elif not holds_literal and type(parent) is cst.Call and parent.func is node:  # type: ignore[attr-defined]
            calls[name] = calls.get(name, 0) + 1
        elif (
            holds_literal and type(parent) is cst.Subscript and parent.value is node  # type: ignore[attr-defined]
            and len(parents) > 1 and type(parents[-2]) is cst.Call and parents[-2].func is parent  # type: ignore[attr-defined]
        ):
            calls[name] = calls.get(name, 0) + 1
        else:
            failed.add(name)  # (handed on, stored, iterated, a parameter, `global`, `del`, an attribute's name ...)
    return frozenset(n for n in picks if n not in failed and bindings.get(n) == 1 and calls.get(n, 0) > 0)
