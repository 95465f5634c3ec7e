"""Context managers a function is handed: a fact of the semantic model.

`with amp_autocast():` / `with precision_ctx:` where the name is a parameter of the function
around it: the caller picks the context manager, and a common choice is autocast or a no-op by a
flag (`amp_autocast = torch.cuda.amp.autocast if args.amp else suppress`, passed to
`train_one_epoch(..., amp_autocast)`). What runs in the with-body runs at a precision this
function does not show (`handed_context`).

Evidence, and its limits:
- the name is a parameter of the innermost function scope that binds it, and that function does
  not bind it again to something else (`ctx = open(...)`); a fallback that keeps the caller's
  choice (`ctx = ctx or nullcontext()`, `if ctx is None: ctx = ...`) keeps it handed in;
- the fact is about the with-body only: a rule asks it where the code it cares about runs;
- the region shows what it enters is no autocast: the body reads an attribute of it
  (`prof.step()`, `pbar.update(1)`, `log.write(...)`: autocast has no method code calls inside),
  or it is called with a string that names no device (`timer("forward")`; autocast's first
  argument is the device type) (`handed_region`);
- the callers: where this file calls the function and every call hands a context manager known to
  set no precision (`contextlib.nullcontext`, `model.no_sync`, `tqdm(...)`, `open(...)`,
  `torch.no_grad`, a profiler, a lock; a name the caller binds only to such things, or a choice
  between them), the region is plain (`callers_hand_plain`). A call the file does not show (no
  call here: the callers are in other files), an argument not found, or anything else: unknown.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Optional

import libcst as cst

from memlint.analysis.iteration import names_in
from memlint.analysis.walk import code_with_parents, dotted_name

if TYPE_CHECKING:
    from memlint.analysis.context import CallSite, Context

# Context managers (or factories of them) that set no precision, by their last name: the caller's
# choice is one of them when every call hands one.
PLAIN_CONTEXTS = frozenset(
    {
        "nullcontext", "suppress", "no_sync", "tqdm", "trange", "open", "no_grad", "enable_grad",
        "inference_mode", "profile", "record_function", "Lock", "RLock", "Semaphore", "ExitStack",
    }
)  # fmt: skip


class Handed:
    """A with-region's context manager handed in: the function that binds the parameter, its key and the name."""

    __slots__ = ("function", "key", "name")

    def __init__(self, function: cst.FunctionDef, key: Optional[tuple], name: str) -> None:
        self.function = function
        self.key = key
        self.name = name


# Device types autocast's first argument may name (`amp_autocast("cuda")`).
_DEVICE_TYPES = frozenset({"cuda", "cpu", "xpu", "mps", "hpu", "npu", "xla", "ipu", "mtia", "meta", "privateuseone"})


def handed_region(node: cst.With, ctx: "Context") -> Optional[Handed]:
    """The handed-in context manager a `with` enters (`handed_context`), unless the region shows
    it is no autocast (an attribute of it read in the body, a call of it with a non-device string)."""
    for item in node.items:
        handed = handed_context(item, ctx)
        if handed is None:
            continue
        expr = item.item
        if type(expr) is cst.Call and any(
            arg.keyword is None and type(arg.value) is cst.SimpleString and arg.value.evaluated_value not in _DEVICE_TYPES  # type: ignore[attr-defined]
            for arg in expr.args
        ):
            continue  # `with timer("forward"):`
        if _attribute_read(node.body, handed.name):
            continue  # `with prof: ... prof.step()`
        return handed
    return None


def _attribute_read(body: cst.CSTNode, name: str) -> bool:
    for node, _ in code_with_parents(body):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == name:  # type: ignore[attr-defined]
            return True
    return False


def handed_context(item: cst.WithItem, ctx: "Context") -> Optional[Handed]:
    """The parameter a `with` item enters (`with amp_autocast():`, `with region:`), where the
    function around it (the innermost scope that binds the name) is handed it and keeps it."""
    expr = item.item
    if type(expr) is cst.Call:
        expr = expr.func
    if type(expr) is not cst.Name:
        return None
    name = expr.value
    for frame in reversed(ctx.frames):
        if frame.kind == "class":
            continue
        if name in frame.params:
            if frame.kind != "function" or type(frame.node) is not cst.FunctionDef:
                return None
            function = frame.node
            if ctx.memo(("rebinds handed", id(function), name), lambda: (function, _rebound(function, name)))[1]:  # type: ignore[arg-type,index]
                return None
            return Handed(frame.node, frame.key, name)  # type: ignore[arg-type]
        if name in frame.names:
            return None
    return None


def _rebound(function: cst.FunctionDef, name: str) -> bool:
    """Whether the function's own code binds `name` again to something that is not a fallback
    keeping the caller's value (`x = x or ...`, `x = x if x else ...`, `if x is None: x = ...`)."""
    for node, parents in code_with_parents(function.body):
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue  # (their bindings are their own; the walk goes below, harmlessly checked by parent)
        if any(type(p) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) for p in parents[1:]):
            continue
        if kind is cst.Assign:
            targets = [t.target for t in node.targets]  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
        elif kind is cst.AnnAssign or kind is cst.AugAssign:
            targets, value = [node.target], node.value  # type: ignore[attr-defined]
        elif kind is cst.AsName:
            targets, value = [node.name], None  # type: ignore[attr-defined]
        elif kind is cst.For:
            targets, value = [node.target], None  # type: ignore[attr-defined]
        else:
            continue
        if not any(name in _target_names(t) for t in targets):
            continue
        if value is not None and name in names_in(value):
            continue  # `ctx = ctx or nullcontext()`: the caller's choice, when made
        if any(type(p) is cst.If and name in names_in(p.test) for p in parents):  # type: ignore[attr-defined]
            continue  # `if ctx is None: ctx = nullcontext()`
        return True
    return False


def _target_names(target: cst.BaseExpression) -> Iterable[str]:
    if type(target) is cst.Name:
        return (target.value,)
    if type(target) in (cst.Tuple, cst.List):
        return [n for e in target.elements for n in _target_names(e.value)]  # type: ignore[attr-defined]
    return ()


def callers_hand_plain(handed: Handed, sites: list["CallSite"], scopes: dict[int, cst.CSTNode]) -> bool:
    """Whether the file's calls of the function (`sites`, none means the callers are elsewhere)
    all hand, for the parameter, a context manager known to set no precision. `scopes` maps a
    call's id to the function it is made in (to read a name the caller binds)."""
    if not sites or handed.key is None:
        return False
    position = _position(handed)
    for site in sites:
        call = site.node
        if call is None:
            return False
        argument = _argument(call, handed.name, position)
        if argument is None or not _plain(argument, scopes.get(id(call)), 0):
            return False
    return True


def _position(handed: Handed) -> Optional[int]:
    params = handed.function.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    if handed.name not in positional:
        return None
    index = positional.index(handed.name)
    if handed.key[0] == "method" and not any(  # type: ignore[index]
        dotted_name(d.decorator) == "staticmethod" for d in handed.function.decorators
    ):
        index -= 1  # `self.step(batch, ctx)`: the receiver is the first parameter
    return index if index >= 0 else None


def _argument(call: cst.Call, name: str, position: Optional[int]) -> Optional[cst.BaseExpression]:
    if any(arg.star for arg in call.args):
        return None
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg.value
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if position is not None and position < len(positional):
        return positional[position]
    return None


def _plain(expr: cst.BaseExpression, scope: Optional[cst.CSTNode], depth: int) -> bool:
    kind = type(expr)
    if kind is cst.IfExp:
        return _plain(expr.body, scope, depth) and _plain(expr.orelse, scope, depth)  # type: ignore[attr-defined]
    if kind is cst.Call:
        expr = expr.func  # type: ignore[attr-defined]
        kind = type(expr)
    if kind is cst.Attribute:
        return expr.attr.value in PLAIN_CONTEXTS  # type: ignore[attr-defined]
    if kind is not cst.Name:
        return False
    if expr.value in PLAIN_CONTEXTS:  # type: ignore[attr-defined]
        return True
    if depth or type(scope) is not cst.FunctionDef:
        return False
    # a name the calling function binds: every binding a plain one (`ctx = model.no_sync if ... else nullcontext`)
    values = _assigned_values(scope, expr.value)  # type: ignore[attr-defined]
    return values is not None and all(_plain(v, None, depth + 1) for v in values)


def _assigned_values(function: cst.FunctionDef, name: str) -> Optional[list[cst.BaseExpression]]:
    """The values the function's own `name = value` statements bind, or None where it binds the
    name otherwise (a parameter, a loop target, a `with ... as`) or not at all."""
    params = function.params
    if any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params)):
        return None
    found: list[cst.BaseExpression] = []
    for node, parents in code_with_parents(function.body):
        if any(type(p) in (cst.FunctionDef, cst.ClassDef, cst.Lambda) for p in parents[1:]):
            continue
        kind = type(node)
        if kind is cst.Assign:
            if any(name in _target_names(t.target) for t in node.targets):  # type: ignore[attr-defined]
                if len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:  # type: ignore[attr-defined]
                    return None
                found.append(node.value)  # type: ignore[attr-defined]
        elif kind in (cst.AnnAssign, cst.AugAssign, cst.For, cst.AsName, cst.NamedExpr):
            target = node.name if kind is cst.AsName else node.target  # type: ignore[attr-defined]
            if name in _target_names(target):
                return None
    return found or None
