"""Frozen models: which models a file freezes (every parameter without `requires_grad`) and never
thaws.  A fact of the semantic model, with its evidence in the code; rules ask `is_frozen_model`.

Evidence that `X` is frozen:

- `X.freeze()` with no argument (Lightning's `LightningModule.freeze`: eval mode, and
  `requires_grad = False` on every parameter);
- `X.requires_grad_(False)`, also within a chain of methods that hand the module back
  (`X.eval().requires_grad_(False).to(device)`), and chained onto what builds `X` (`X =
  Net().cuda().eval().requires_grad_(False)`: the built model has no other name);
- a loop over `X.parameters()` whose own body sets `p.requires_grad = False` (or `p.requires_grad_(False)`)
  on its parameter, not behind an `if` (which may leave some parameters, a classifier head, trainable).

Evidence that it is thawed again, which cancels the fact for `X` everywhere in the file: `X.unfreeze()`,
`X.requires_grad_()` / `X.requires_grad_(True)`, a loop over `X.parameters()` setting `True`, or
`X.train()` after a `freeze()` (Lightning's `unfreeze` is `train()` plus thawing, and code that trains
a frozen-looking model is not one to second-guess).

Where it holds: a local name only in the function that froze it; a parameter of a module-level
function that every call of it in the project hands a model its caller froze (or makes without
gradients: the project pass's `frozen_parameters`, memlint.analysis.frozen_arguments); `self.X` in every method of the class
that froze it (a predictor freezing its model in `__init__`); a module-level name frozen by the module's
own statements in every function that does not bind a local of that name; in module-level code, a name a
statement before the run freezes in a block that holds the run, not bound again in between but to the same
parameters (`X = X.cuda()`, `X = torch.jit.trace(X, ...)`), nor used in between but by runs and `.eval()`,
`.to()`, `.cuda()`, `.half()`, `.requires_grad_(False)` (`frozen_before`).  A call of a frozen model
builds no graph when its inputs carry none, so an evaluation with it wastes no memory on autograd (ML002
asks).  It is
not a fact about the call's result in general: a frozen discriminator or perceptual network fed a
generator's output still passes history through (GAN and style-transfer training)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.bindings import target_names
from memlint.analysis.constants import literal_bool
from memlint.analysis.roles import enclosing_class
from memlint.analysis.walk import code_descendants, dotted_name, nested_blocks
from memlint.pipeline.tree import indexed_subtree

if TYPE_CHECKING:
    from memlint.analysis.context import Context

_FREEZE, _THAW = "freeze", "thaw"


def is_frozen_model(func: cst.BaseExpression, ctx: "Context", at: Optional[cst.CSTNode] = None) -> bool:
    """Is the callee `func` (`self.model`, `net`) a model this file freezes and never thaws, in the
    scope the traversal is in?  In module-level code, where `at` (the run) is given: frozen by a
    statement before it in a block around it (`frozen_before`)."""
    name = dotted_name(func)
    if name is None:
        return False
    if name.startswith("self."):
        scope: Optional[cst.CSTNode] = enclosing_class(ctx)
    else:
        scope = ctx.function_node
    if scope is None:
        return at is not None and not ctx.frames[-1].kind == "class" and frozen_before(name, at, ctx)
    frozen, thawed = ctx.memo(("frozen models", id(scope)), lambda: _changes(scope))  # type: ignore[misc]
    if name not in frozen and "." not in name and ctx.binds_at_module_level(name):
        # `feature_net = Net().eval().requires_grad_(False)` at module level, run by a function
        frozen, thawed = ctx.memo("frozen module models", lambda: _changes(ctx.module, module_only=True))  # type: ignore[misc]
    if name not in frozen and "." not in name and _frozen_parameter(name, ctx):
        return name not in _thawed_anywhere(ctx)
    return name in frozen and name not in _thawed_anywhere(ctx) and name not in thawed


def frozen_before(name: str, at: cst.CSTNode, ctx: "Context") -> bool:
    """Is `name` frozen when the module-level code `at` runs: a statement of the module's code (in
    its body or a block nested in it, not in a function or class) before `at`, in a block that holds
    `at`, freezes it (`model.requires_grad_(False)`, also chained: `X.eval().requires_grad_(False)`,
    or a loop setting `requires_grad = False` over its parameters), nothing between them ends the
    freeze (`_ends_freeze`: anything done with the name but running it, `.eval()`, `.to(...)`,
    `.cuda()`, `.half()`, `.requires_grad_(False)` or `X = X.cuda()`, `X = torch.jit.trace(X, ...)`;
    nor does the statement holding `at` where it is compound), and nothing in the file thaws it?  A
    freeze behind an `if` the run is not behind is no evidence."""
    if name in _thawed_anywhere(ctx):
        return False
    stretches = ctx.memo(("frozen stretches", name), lambda: _frozen_stretches(name, ctx))
    if not stretches:
        return False
    own = indexed_subtree(at)
    for statement, below in stretches:  # type: ignore[union-attr]
        if own is not None and below is not None:
            if below[2] < own[2] < below[1][below[2]]:
                return True
        elif _inside(at, statement):
            return True
    return False


def _frozen_stretches(name: str, ctx: "Context") -> list:
    """The module-level statements a run in which sees `name` frozen (see `frozen_before`), each with
    its pre-order index: one pass over each block that freezes the name."""
    freezes = ctx.memo("module-level freezes", lambda: _module_freezes(ctx.module))
    candidates = freezes.get(name)  # type: ignore[union-attr]
    if not candidates:
        return []
    by_block: dict[int, tuple] = {}
    starts: set[tuple[int, int]] = set()
    for block, index in candidates:
        by_block[id(block)] = block
        starts.add((id(block), index))
    found = []
    for key, block in by_block.items():
        frozen = False
        for index, statement in enumerate(block):
            freezes_here = (key, index) in starts
            if frozen:
                ends = not freezes_here and _ends_freeze(statement, name, ctx)
                simple = type(statement) is cst.SimpleStatementLine and len(statement.body) == 1  # type: ignore[attr-defined]
                if simple or not ends:
                    found.append((statement, indexed_subtree(statement)))
                if ends:
                    frozen = False
            if freezes_here:
                frozen = True
    return found


# What may follow a freeze and leave the module frozen: runs of it and these methods on it.
_KEEPS_FREEZE = frozenset({"eval", "to", "cuda", "half", "requires_grad_"})


def _ends_freeze(statement: cst.CSTNode, name: str, ctx: "Context") -> bool:
    """Does `statement` mention `name` (its first part, anywhere) other than by running it, by
    `X.eval()`, `.to(...)`, `.cuda()`, `.half()`, `.requires_grad_(False)` (also chained) or by `X =
    X.cuda()`, `X = torch.jit.trace(X, ...)`?  Anything else (an assignment into it, handing it to a
    call, `.apply`, `.parameters()`, a thaw of a submodule) may add or thaw parameters."""
    first = name.partition(".")[0]
    mentions, kept = 0, 0
    links: set[int] = set()  # the inner calls of a chain seen from its outermost (parents come first)
    for node in code_descendants(statement):
        kind = type(node)
        if kind is cst.Name and node.value == first:  # type: ignore[attr-defined]
            mentions += 1
        elif kind is cst.Assign and len(node.targets) == 1 and dotted_name(node.targets[0].target) == name:  # type: ignore[attr-defined]
            if _same_module(node.value, name, ctx):  # type: ignore[attr-defined]
                kept += 1  # the target
                value = node.value  # type: ignore[attr-defined]
                if type(value) is cst.Call and ctx.resolve(value.func) in _TRACERS:  # type: ignore[attr-defined]
                    kept += 1  # the traced module (`X = X.cuda()`'s receiver counts as a chain below)
        elif kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if dotted_name(func) == name:
                kept += 1  # a run
                continue
            if type(func) is cst.Name and func.value == "sum" and not any(type(n) is cst.Attribute and n.attr.value in ("requires_grad", "requires_grad_") for n in code_descendants(node)):  # type: ignore[attr-defined]
                # `sum(p.numel() for p in X.parameters())`: counting them changes nothing
                counted = [n for n in code_descendants(node) if type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value in ("parameters", "named_parameters") and dotted_name(n.func.value) == name]  # type: ignore[attr-defined]
                links.update(id(n) for n in counted)
                kept += len(counted)
            if id(node) in links:
                continue
            value: cst.BaseExpression = node  # type: ignore[assignment]
            ok = True
            while type(value) is cst.Call and type(value.func) is cst.Attribute:  # type: ignore[attr-defined]
                method = value.func.attr.value  # type: ignore[attr-defined]
                ok = ok and method in _KEEPS_FREEZE and (method != "requires_grad_" or _call_change(value) == _FREEZE)  # type: ignore[arg-type]
                links.add(id(value))
                value = value.func.value  # type: ignore[attr-defined]
            if ok and value is not node and dotted_name(value) == name:
                kept += 1
    return mentions > kept


def _module_freezes(module: cst.Module) -> dict[str, list[tuple[tuple, int]]]:
    """The module-level code's freezing statements, by the name frozen: (their block, their index)."""
    found: dict[str, list[tuple[tuple, int]]] = {}
    blocks = [tuple(module.body)]
    while blocks:
        block = blocks.pop()
        for index, statement in enumerate(block):
            kind = type(statement)
            if kind is cst.SimpleStatementLine:
                for small in statement.body:  # type: ignore[attr-defined]
                    name = _statement_freezes(small)
                    if name is not None:
                        found.setdefault(name, []).append((block, index))
            elif kind is cst.For:
                owner, change = _parameter_loop(statement)  # type: ignore[arg-type]
                if owner is not None and change == _FREEZE:
                    found.setdefault(owner, []).append((block, index))
            if kind not in (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine):
                blocks.extend(tuple(b) for b in nested_blocks(statement))
    return found


def _statement_freezes(small: cst.BaseSmallStatement) -> Optional[str]:
    """The name a small statement freezes: `X.requires_grad_(False)` (also in a chain of module
    methods), or `X = Net().requires_grad_(False)`."""
    if type(small) is cst.Assign:
        return _frozen_when_built(small)  # type: ignore[arg-type]
    if type(small) is not cst.Expr:
        return None
    value = small.value  # type: ignore[attr-defined]
    change = None
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in _CHAIN_METHODS:  # type: ignore[attr-defined]
        change = change or _call_change(value)  # type: ignore[arg-type]  # (the outermost change decides)
        value = value.func.value  # type: ignore[attr-defined]
    return dotted_name(value) if change == _FREEZE else None


def _inside(node: cst.CSTNode, statement: cst.CSTNode) -> bool:
    """Is `node` in `statement` (by the file's pre-order index where there is one)?"""
    own, below = indexed_subtree(node), indexed_subtree(statement)
    if own is not None and below is not None:
        return below[2] < own[2] < below[1][below[2]]
    return any(n is node for n in code_descendants(statement))


_TRACERS = frozenset({"torch.jit.trace", "torch.jit.script"})


def _same_module(value: cst.BaseExpression, name: str, ctx: "Context") -> bool:
    """`X.to(device)`, `X.cuda().eval()`, `torch.jit.trace(X, ...)`: X's parameters, as they were."""
    while type(value) is cst.Call and type(value.func) is cst.Attribute and value.func.attr.value in tables.MODULE_RETURNING:  # type: ignore[attr-defined]
        if _call_change(value) is not None:  # type: ignore[arg-type]
            return False
        value = value.func.value  # type: ignore[attr-defined]
    if type(value) is cst.Call and value.args and ctx.resolve(value.func) in _TRACERS:  # type: ignore[attr-defined]
        value = value.args[0].value  # type: ignore[attr-defined]
    return dotted_name(value) == name


def _chain_receiver(expr: cst.BaseExpression) -> Optional[str]:
    """The dotted name a chain of module methods starts from (`sampler.eval()` -> "sampler"): each
    hands back the module it was called on."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in _CHAIN_METHODS:  # type: ignore[attr-defined]
        expr = expr.func.value  # type: ignore[attr-defined]
    return dotted_name(expr)


_CHAIN_METHODS = tables.MODULE_RETURNING | {"freeze"}


def _frozen_parameter(name: str, ctx: "Context") -> bool:
    """Is `name` a parameter of the module-level function the traversal is in that every call of it
    in the project hands a frozen model, or makes without gradients (the project pass's
    `frozen_parameters`: KAIR's `test(model, L)`)?"""
    key = ctx.function_key
    if key is None or key[0] != "func" or len(ctx.function_chain) != 1:
        return False
    return f"{key[1]}:{name}" in ctx.project.frozen_parameters


def _thawed_anywhere(ctx: "Context") -> frozenset:
    return ctx.memo("thawed models", lambda: frozenset(_changes(ctx.module)[1]))  # type: ignore[return-value]


def _changes(scope: cst.CSTNode, module_only: bool = False) -> tuple[set, set]:
    """The dotted names `scope` freezes and thaws (see the module's docstring); with `module_only`,
    by the module's own statements (`scope` a module), not those of its functions and classes."""
    frozen: set = set()
    thawed: set = set()
    nodes = (
        (n for s in scope.body if type(s) is cst.SimpleStatementLine for n in code_descendants(s))  # type: ignore[attr-defined]
        if module_only
        else code_descendants(scope)
    )
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            built = _frozen_when_built(node)  # type: ignore[arg-type]
            if built is not None:
                frozen.add(built)
            continue
        if kind is cst.Call and type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
            change = _call_change(node)  # type: ignore[arg-type]
            target = _chain_receiver(node.func.value) if change is not None else None  # type: ignore[attr-defined]
            if change is not None and target is not None:
                (frozen if change == _FREEZE else thawed).add(target)
        elif kind is cst.For:
            owner, change = _parameter_loop(node)  # type: ignore[arg-type]
            if owner is not None:
                (frozen if change == _FREEZE else thawed).add(owner)
    return frozen, thawed


def _frozen_when_built(assign: cst.Assign) -> Optional[str]:
    """`X = Net().cuda().eval().requires_grad_(False)` -> "X": a chain of method calls on a call (a
    model built or loaded there) with `requires_grad_(False)` on it and no thaw after it."""
    if len(assign.targets) != 1:
        return None
    target = dotted_name(assign.targets[0].target)
    value = assign.value
    change = None
    while type(value) is cst.Call and type(value.func) is cst.Attribute:  # type: ignore[attr-defined]
        change = change or _call_change(value)  # type: ignore[arg-type]  # (the outermost change decides)
        value = value.func.value  # type: ignore[attr-defined]
    return target if change == _FREEZE and type(value) is cst.Call and target is not None else None


def _call_change(call: cst.Call) -> Optional[str]:
    method = call.func.attr.value  # type: ignore[attr-defined]
    if method == "freeze" and not call.args:
        return _FREEZE
    if method in ("unfreeze", "train"):
        return _THAW if method == "unfreeze" or _argument_is(call, True, default=True) else None
    if method == "requires_grad_":
        return _THAW if _argument_is(call, True, default=True) else _FREEZE
    return None


def _argument_is(call: cst.Call, value: bool, *, default: bool) -> bool:
    """Is the call's first argument the literal `value` (its absence meaning `default`)?  Anything
    that is not a literal counts as possibly `value`."""
    if not call.args:
        return default is value
    literal = literal_bool(call.args[0].value)
    return True if literal is None else literal is value


def _parameter_loop(loop: cst.For) -> tuple[Optional[str], Optional[str]]:
    """`for p in X.parameters(): p.requires_grad = False` -> ("X", freeze): a freeze only where a
    statement of the loop's own body (not behind an `if`: `if name not in ["fc.weight"]:` leaves the
    head trainable) sets it on the loop's parameter (such a setting elsewhere in the body is neither
    a freeze nor a thaw); a setting to anything but `False` thaws (it may)."""
    it = loop.iter
    if type(it) is not cst.Call or type(it.func) is not cst.Attribute or it.func.attr.value not in ("parameters", "named_parameters"):  # type: ignore[attr-defined]
        return None, None
    owner = dotted_name(it.func.value)  # type: ignore[attr-defined]
    if owner is None:
        return None, None
    own = {id(small) for small in _small_statements(loop)}
    targets = set(target_names(loop.target))
    if any(type(node) is cst.Break for node in code_descendants(loop.body)):
        return None, None  # it may stop before the last parameter: neither a freeze nor a thaw we can read
    thaws = any(
        type(node) is cst.Assign
        and any(type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad" for t in node.targets)  # type: ignore[attr-defined]
        and not (type(node.value) is cst.Name and node.value.value == "False")  # type: ignore[attr-defined]
        for node in code_descendants(loop.body)
    )
    if thaws:
        return owner, _THAW  # `p.requires_grad = True` for some parameters (a head), wherever in the body
    for node in code_descendants(loop.body):
        if type(node) is cst.Assign and any(
            type(t.target) is cst.Attribute and t.target.attr.value == "requires_grad" for t in node.targets  # type: ignore[attr-defined]
        ):
            value = node.value  # type: ignore[attr-defined]
            if not (type(value) is cst.Name and value.value == "False"):
                return owner, _THAW
            on_parameter = all(dotted_name(t.target.value) in targets for t in node.targets)  # type: ignore[attr-defined]
            return (owner, _FREEZE) if id(node) in own and on_parameter else (None, None)
        if type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "requires_grad_":  # type: ignore[attr-defined]
            if _argument_is(node, True, default=True):  # type: ignore[arg-type]
                return owner, _THAW
            on_parameter = dotted_name(node.func.value) in targets  # type: ignore[attr-defined]
            unconditional = any(type(small) is cst.Expr and small.value is node for small in _small_statements(loop))  # type: ignore[attr-defined]
            return (owner, _FREEZE) if on_parameter and unconditional else (None, None)
    return None, None


def _small_statements(loop: cst.For) -> list:
    """The small statements of the loop's own body (`a; b` lines and a one-line body too)."""
    body = loop.body
    if type(body) is cst.SimpleStatementSuite:
        return list(body.body)  # type: ignore[attr-defined]
    lines = body.body if type(body) is cst.IndentedBlock else ()  # type: ignore[attr-defined]
    return [small for line in lines if type(line) is cst.SimpleStatementLine for small in line.body]  # type: ignore[attr-defined]
