"""Optimizers by construction: the names a file binds to what `torch.optim` (or a known optimizer
factory) builds, whatever they are called.

A receiver's name is weak evidence that `x.step()` updates weights: SEGAN calls its optimizers
`Gopt` and `Dopt`, and `env.step(action)` or `scheduler.step()` are no optimizer's.  What built the
object is direct evidence.  A name (or a chain: `self.optimizer_S`, `state["optim"]`, as
`walk.held_name` spells it) is an optimizer when the file binds it

- to a call of an optimizer class of `torch.optim` (`optim.RMSprop(G.parameters())`, `Adam(...)`
  from `from torch.optim import Adam`), of the optimizer table (`transformers.Adafactor`, bitsandbytes),
  or of a known factory (`timm.optim.create_optimizer_v2`), the callee resolved through the
  module's imports (`torch.optim.lr_scheduler.StepLR` is no optimizer): `optimizers.builds_optimizer`,
  the one test ML010 and the project pass's summaries ask too;
- or to what one of the file's functions returns at a position where every `return` holds an
  optimizer (built there, or a local name every binding of which builds one): `Gopt, Dopt =
  self.build_optimizers(opts)` with `return Gopt, Dopt`.

Any binding counts: the fact says "this name holds an optimizer somewhere in the file", which is
what a `name.step()` test needs.  Where no construction is visible (an optimizer handed in as a
parameter) the askers keep the name as their evidence (`naming.OPTIMIZER_ONLY_NAME`):
`SemanticModel.steps_optimizer(call)` is that one answer (ML017, closures.py); the project pass's
summaries ask the same of their tree (`_steps_an_optimizer`, direct bindings only).

Loop roles stay name-based (iteration's `branch_trains` / `runs_model` / `steps_itself`,
`roles.steps_an_optimizer`): they are asked of every loop and function before any model exists
(the screens' CPython-AST twins among them), a name test costs nothing there, and a construction
under another name (`Gopt`) that such a loop misses only leaves it unclassified, where the rules
stay silent.
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst

from memlint.analysis.optimizers import builds_optimizer
from memlint.analysis.walk import code_descendants, dotted_name, held_name, own_nodes


def constructed_optimizers(module: cst.Module, qualify: Callable[[str], str]) -> frozenset[str]:
    """The held names (`Dopt`, `self.optimizer_S`) the file binds to an optimizer; `qualify` turns a
    callee as written into what it imports ("" where it is no import)."""

    def builds(value: cst.BaseExpression) -> bool:
        if type(value) is not cst.Call:
            return False
        written = dotted_name(value.func)
        return written is not None and builds_optimizer(qualify(written))

    functions: dict[str, list[cst.FunctionDef]] = {}
    assignments: list[tuple[list[cst.BaseExpression], cst.BaseExpression]] = []  # (targets, value)
    for node in code_descendants(module):  # (one walk: the functions and the bindings)
        kind = type(node)
        if kind is cst.FunctionDef:
            functions.setdefault(node.name.value, []).append(node)
        elif kind is cst.Assign:
            assignments.append(([t.target for t in node.targets], node.value))
        elif kind is cst.AnnAssign and node.value is not None:
            assignments.append(([node.target], node.value))
    returning: dict[str, frozenset] = {}  # helper name -> positions (None: the whole value) at which it returns optimizers
    for _, value in assignments:
        helper = _helper_name(value) if type(value) is cst.Call else None
        if helper is not None and helper in functions and helper not in returning:
            # (only a function whose result the file binds: `Gopt, Dopt = self.build_optimizers(opts)`)
            returning[helper] = frozenset().union(*(_returned_optimizers(f, builds) for f in functions[helper]))
    found: set[str] = set()
    for targets, value in assignments:
        if builds(value):
            found.update(name for name in map(held_name, targets) if name is not None)
            continue
        positions = returning.get(_helper_name(value)) if type(value) is cst.Call else None  # type: ignore[arg-type]
        if not positions:
            continue
        for target in targets:
            if None in positions:
                name = held_name(target)
                if name is not None:
                    found.add(name)
            elif type(target) in (cst.Tuple, cst.List):
                for position, element in enumerate(target.elements):  # type: ignore[attr-defined]
                    name = held_name(element.value) if position in positions else None
                    if name is not None:
                        found.add(name)
    return frozenset(found)


def _helper_name(call: cst.Call) -> Optional[str]:
    """`build(...)` -> "build", `self.build(...)` -> "build": a call of the file's own function."""
    func = call.func
    if type(func) is cst.Name:
        return func.value
    if type(func) is cst.Attribute and type(func.value) is cst.Name and func.value.value == "self":
        return func.attr.value
    return None


def _returned_optimizers(function: cst.FunctionDef, builds: Callable[[cst.BaseExpression], bool]) -> frozenset:
    """The positions at which every `return` of `function` holds an optimizer (None for a single
    value), or nothing."""
    returns = [node for node in own_nodes(function) if type(node) is cst.Return]
    if not returns or any(r.value is None for r in returns):
        return frozenset()
    bindings: dict[str, list[cst.BaseExpression]] = {}
    for node in own_nodes(function):
        if type(node) is cst.Assign:
            for target in node.targets:
                for name, value in _bound(target.target, node.value):
                    bindings.setdefault(name, []).append(value)
        elif type(node) is cst.AnnAssign and node.value is not None:  # `opt: Optimizer = Adam(...)`, as an Assign
            for name, value in _bound(node.target, node.value):
                bindings.setdefault(name, []).append(value)
        elif type(node) in (cst.AugAssign, cst.For):
            target = node.target
            if type(target) is cst.Name:
                bindings.setdefault(target.value, []).append(cst.Name("None"))  # bound otherwise

    def optimizer(value: cst.BaseExpression) -> bool:
        if type(value) is cst.Name:
            values = bindings.get(value.value)
            return bool(values) and all(builds(v) for v in values)
        return builds(value)

    common: Optional[set] = None
    for statement in returns:
        value = statement.value
        if type(value) is cst.Tuple:
            here = {i for i, element in enumerate(value.elements) if optimizer(element.value)}
        else:
            here = {None} if optimizer(value) else set()
        common = here if common is None else common & here
    return frozenset(common or ())


def _bound(target: cst.BaseExpression, value: cst.BaseExpression) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) pairs an assignment binds; a tuple target unpacked from a tuple value pairs
    element by element, from anything else binds an unknown value."""
    if type(target) is cst.Name:
        yield target.value, value
    elif type(target) in (cst.Tuple, cst.List):
        paired = type(value) in (cst.Tuple, cst.List) and len(value.elements) == len(target.elements)
        for position, element in enumerate(target.elements):
            inner = value.elements[position].value if paired else cst.Name("None")
            yield from _bound(element.value, inner)

