"""ML013's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

`torch.<factory>(...).to(...)` / `.cuda(...)` (a size factory or a legacy typed constructor, or a project
helper that returns a tensor it made on the host: `FileView.host_calls`; the move may be a project helper that
moves its argument: `FileView.mover_calls`) with no `device=` given to the factory, looking
through casts (`.long()`, `.type(torch.int)`, `.type_as(x)` or `.type(type(x))`, itself a move to `x`'s device), reshapes (`.view(-1, 1)`), fills (`.zero_()`), in-place arithmetic (`.mul_(sigma)`) and a `Variable(...)` wrapper between the factory and the move,
or a name such a call was bound to, or a value computed from one (the function's value flow).
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.naming import dotted
from memlint.analysis.tables import ELEMENTWISE_FUNCTIONS, IN_PLACE_ARITHMETIC, IN_PLACE_FILLS, LEGACY_SIZED_CONSTRUCTORS, SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES
from memlint.prescreen.source import Source, final_name, subtree

_FACTORY_WORDS = tuple(sorted(TORCH_FACTORIES | LEGACY_SIZED_CONSTRUCTORS.keys()))


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    helpers = source.project.host_calls if source.project is not None else frozenset()
    # the trigger words (meta.py has none: a host tensor may come from another file's helper)
    if not helpers and not source.mentions(*_FACTORY_WORDS):
        return False
    factories = source.names_for(TORCH_FACTORIES | LEGACY_SIZED_CONSTRUCTORS.keys())
    bound = None  # names some `name = <factory ...>` binds (moved by a later statement: moves.py)
    movers = _movers(source)
    for call in source.nodes(ast.Call):
        if isinstance(call.func, ast.Attribute) and call.func.attr in ("to", "cuda", "type_as", "type"):  # type: ignore[attr-defined]
            receiver = call.func.value  # type: ignore[attr-defined]
        elif movers and dotted(call.func) in movers:  # type: ignore[attr-defined]
            position = movers[dotted(call.func)]  # type: ignore[attr-defined]
            if len(call.args) <= position:  # type: ignore[attr-defined]
                continue
            receiver = call.args[position]  # type: ignore[attr-defined]
        else:
            continue
        if _holds_factory(receiver, factories, helpers):
            return True
        names = [n.id for n in subtree(receiver) if isinstance(n, ast.Name)]
        if names:
            if bound is None:
                bound = _bound_names(source, factories, helpers)
            if any(name in bound for name in names):
                return True
    return False


def _bound_names(source: Source, factories, helpers) -> set[str]:
    """Names some `name = <value>` binds to a factory's tensor, or to a value computed from such a
    name (`n = torch.linspace(...)` then `window = 0.54 - 0.46 * torch.cos(n)`: the function's value
    flow, host_flow.py), moved by a later statement (moves.py) or read by a move."""
    assigns = [(name, value) for node in source.nodes(ast.Assign) for name, value in _named_values(node)]  # type: ignore[arg-type]
    bound = {name for name, value in assigns if _holds_factory(value, factories, helpers)}
    if not bound:
        return bound
    reads = [(name, {n.id for n in subtree(value) if isinstance(n, ast.Name)}) for name, value in assigns if name not in bound]
    grown = True
    while grown:  # names computed from bound names, to a fixed point
        grown = False
        for name, read in reads:
            if name not in bound and read & bound:
                bound.add(name)
                grown = True
    return bound


def _named_values(node: ast.Assign) -> list[tuple[str, ast.AST]]:
    """`name = value`, or each name of an unpacking with the element it takes or the whole value
    (`yy, xx = torch.meshgrid(...)`: the rule's `moves.unpacked_bindings`, looser)."""
    if len(node.targets) != 1:
        return []
    target = node.targets[0]
    if isinstance(target, ast.Name):
        return [(target.id, node.value)]
    if not isinstance(target, (ast.Tuple, ast.List)):
        return []
    names = [e.id for e in target.elts if isinstance(e, ast.Name)]
    value = node.value
    if isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts):
        return [(e.id, v) for e, v in zip(target.elts, value.elts) if isinstance(e, ast.Name)]
    return [(name, value) for name in names]


def _movers(source: Source) -> dict[str, int]:
    """The project's helpers this file calls that return a parameter moved to a device
    (`FileView.mover_calls`), each with the position of that parameter."""
    project = source.project
    if project is None or not project.mover_calls:
        return {}
    return {written: parameter for written, (parameter, _, _) in project.movers().items()}


def _holds_factory(node: ast.AST, factories, helpers) -> bool:
    for factory in _candidates(node):
        written = dotted(factory.func) if helpers else None
        if written is not None and (written in helpers or written.startswith("self.") and any(h.endswith(written[4:]) for h in helpers)):
            return True  # `causal_mask(n)`, `self.create_mask(H, W)`: a project helper's fresh host tensor
        if (
            final_name(factory.func) in factories
            and not any(k.arg in ("device", None) for k in factory.keywords)
            # sizes spread from a sequence (`torch.randn(n, *size)`) are still sizes; for a legacy
            # constructor the spread may be data (`torch.FloatTensor(*rows)`), as the rule reads it,
            # unless it spreads a tensor's sizes (`torch.FloatTensor(*x.shape)`)
            and not (final_name(factory.func) in LEGACY_SIZED_CONSTRUCTORS and any(isinstance(a, ast.Starred) for a in factory.args) and not _spreads_shape(factory.args))
        ):
            return True
    return False


def _spreads_shape(args: list) -> bool:
    """`(*x.shape)`, `(*x.size())`: one spread of a tensor's sizes (the rule's `_spreads_shape`)."""
    if len(args) != 1 or not isinstance(args[0], ast.Starred):
        return False
    value = args[0].value
    if isinstance(value, ast.Attribute):
        return value.attr == "shape"
    return isinstance(value, ast.Call) and not value.args and isinstance(value.func, ast.Attribute) and value.func.attr == "size"


def _candidates(node: ast.AST) -> list[ast.Call]:
    """The calls the move may apply to: the receiver, and through casts (`torch.full(...).long()`), elementwise methods (`.cos()`), signs (`-torch.arange(k)`),
    wrappers (`Variable(torch.ones(n))`: any call's positional first argument, looser than the
    rule's resolved `Variable`), arithmetic and the parts of a literal sequence a call joins
    (`torch.cat((zeros, x))`, looser than the rule's resolved `torch.cat`)."""
    found = []
    while isinstance(node, (ast.Call, ast.BinOp, ast.Subscript, ast.UnaryOp, ast.Compare, ast.Attribute)):
        if isinstance(node, (ast.Subscript, ast.Attribute)):  # `torch.eye(d)[None, :, :]`, `t.sort().values`: a part of what the factory made
            node = node.value
            continue
        if isinstance(node, ast.Compare):  # `torch.eye(n) > .5`: either side (looser than the rule's number)
            for side in (node.left, *node.comparators):
                found += _candidates(side)
            break
        if isinstance(node, ast.UnaryOp):  # `(-torch.arange(k)).cuda()`: a new tensor where the operand is
            node = node.operand
            continue
        if isinstance(node, ast.BinOp):  # `(torch.rand(n) * 2 - 1)`: either operand (looser than the rule's number)
            found += [*_candidates(node.left), *_candidates(node.right)]
            break
        found.append(node)
        func = node.func
        if isinstance(func, ast.Attribute) and (
            func.attr in TENSOR_CASTS and not node.args
            or func.attr in SHAPE_METHODS
            or func.attr in IN_PLACE_FILLS
            or func.attr in IN_PLACE_ARITHMETIC  # `torch.ones(n).mul_(sigma)`: the receiver, not the number
            # `torch.arange(k).float().cos()`: elementwise math of a computed receiver (not `torch.exp(x)`, whose tensor is its argument)
            or func.attr in ELEMENTWISE_FUNCTIONS and isinstance(func.value, (ast.Call, ast.BinOp, ast.Subscript, ast.UnaryOp))
            or func.attr in ("type_as", "type")
            or func.attr in ("sort", "argsort", "msort")  # `torch.randint(...).sort()[0]`: sorted where it was drawn
        ):
            node = func.value
        elif node.args and isinstance(node.args[0], (ast.Tuple, ast.List)):  # `torch.cat((torch.zeros(b, 1), x))`: any part
            for part in node.args[0].elts:
                found += _candidates(part)
            break
        elif node.args and not isinstance(node.args[0], ast.Starred):
            node = node.args[0]
        else:
            break
    return found
