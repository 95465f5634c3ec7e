"""Do a method's model outputs stay inside it?

`outputs_stay_local(function, ctx)` answers "certainly" (True) for a method of an nn.Module when
whatever it computes that may carry autograd history (the result of any call but those known to
hand back none: `.cpu().numpy()`, `.item()`, `float(...)`, numpy's functions; and every name bound
from such a value, followed to a fixed point) flows only into

- plain names of the method (never a subscript or an attribute: `bank[key] = out`, `self.x = out`,
  whatever `bank` aliases);
- a run of self (`self(x)`, `self.forward(x)`, `self.<attr>(x)` of an attribute valued a module);
- calls known not to keep it: builtins (`print`, `len`, `float`, `next`, ...), torch / numpy / math
  functions without an `out=` target, and the tensor methods of `_TENSOR_METHODS` on such a value;

and the method calls no other method of self or of a submodule (`self.adapt(x)` may take a backward
and a step, `self.remember(key, z)` may store), declares no `global` / `nonlocal`, and nests no
function.  Anything else (an append, `setattr`, `buf.copy_(out)`, a call the analysis does not know)
is no certainty: the answer is False.

ML002 asks it, with returned.hands_back_no_history, of a predict-named method of an nn.Module: one
whose outputs stay inside and whose returns carry no history is evaluation, not a building block of
a forward (pytorch-semseg's `tile_predict`, whose `self.forward(tile)` becomes a numpy score map).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis import tables, values
from memlint.analysis.bindings import target_names
from memlint.analysis.values import Kind
from memlint.analysis.walk import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Builtins that keep nothing they are handed (their result, if any, is new).
_BUILTINS = frozenset(
    {"print", "len", "float", "int", "bool", "str", "round", "repr", "format", "range", "zip", "enumerate", "next",
     "iter", "list", "tuple", "min", "max", "sum", "abs", "sorted", "isinstance", "reversed"}
)  # fmt: skip
# Builtins whose result is a Python value: nothing derived from it carries history.
_PLAIN_BUILTINS = frozenset({"float", "int", "bool", "str", "len", "round", "repr", "format", "isinstance", "range"})
_PLAIN_MODULES = ("numpy.", "math.", "scipy.")
_KNOWN_MODULES = ("torch.", "numpy.", "math.", "scipy.")
# Methods of self that only read its structure (`next(self.parameters()).is_cuda`).
_SELF_READERS = frozenset({"parameters", "named_parameters", "modules", "children", "buffers", "named_buffers", "named_modules"})
# Out-of-place tensor methods: their result is a new tensor; the receiver keeps nothing.
_TENSOR_METHODS = frozenset(
    {"view", "reshape", "permute", "transpose", "contiguous", "squeeze", "unsqueeze", "flatten", "expand", "repeat",
     "to", "cuda", "cpu", "float", "double", "half", "long", "int", "type", "clone", "detach", "numpy", "item", "tolist",
     "max", "min", "sum", "mean", "argmax", "argmin", "softmax", "log_softmax", "sigmoid", "exp", "log", "abs", "pow",
     "clamp", "topk", "sort", "eq", "ne", "gt", "lt", "ge", "le", "mul", "add", "sub", "div", "matmul", "size", "dim",
     "index_select", "gather", "narrow", "split", "chunk", "masked_fill", "flip", "astype", "copy"}
)  # fmt: skip
_REFUSED = (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Global, cst.Nonlocal, cst.Yield, cst.Await)


def outputs_stay_local(function: cst.FunctionDef, ctx: "Context") -> bool:
    """Does nothing the method computes that may carry history leave it but through its returns?"""
    return ctx.memo(("local-outputs", id(function)), lambda: _check(function, ctx))  # type: ignore[return-value]


def _check(function: cst.FunctionDef, ctx: "Context") -> bool:
    if not isinstance(function.body, cst.IndentedBlock) or function.asynchronous is not None:
        return False  # (an `async def` hands back a coroutine: what runs it, and when, is elsewhere)
    nodes = list(code_descendants(function.body))
    if any(isinstance(node, _REFUSED) for node in nodes):
        return False
    tainted: set[str] = set()
    bindings = list(_bindings(nodes))
    changed = True
    while changed:
        changed = False
        for targets, value in bindings:
            if not targets <= tainted and _carries(value, tainted, ctx):
                tainted |= targets
                changed = True
    for node in nodes:
        kind = type(node)
        if kind in (cst.Assign, cst.AugAssign, cst.AnnAssign):
            targets = [t.target for t in node.targets] if kind is cst.Assign else [node.target]  # type: ignore[attr-defined]
            value = node.value  # type: ignore[attr-defined]
            if value is not None and _carries(value, tainted, ctx) and any(_stores(t) for t in targets):
                return False
        elif kind is cst.Call and not _call_keeps_nothing(node, tainted, ctx):  # type: ignore[arg-type]
            return False
    return True


def _bindings(nodes: list):
    """(names bound, the expression their value comes from), for the plain-name bindings."""
    for node in nodes:
        kind = type(node)
        if kind is cst.Assign:
            yield frozenset(n for t in node.targets for n in target_names(t.target)), node.value  # type: ignore[attr-defined]
        elif kind in (cst.AugAssign, cst.AnnAssign) and node.value is not None:  # type: ignore[attr-defined]
            yield frozenset(target_names(node.target)), node.value  # type: ignore[attr-defined]
        elif kind in (cst.For, cst.CompFor):
            yield frozenset(target_names(node.target)), node.iter  # type: ignore[attr-defined]
        elif kind is cst.NamedExpr:
            yield frozenset(target_names(node.target)), node.value  # type: ignore[attr-defined]
        elif kind is cst.WithItem and node.asname is not None:  # type: ignore[attr-defined]
            yield frozenset(target_names(node.asname.name)), node.item  # type: ignore[attr-defined]


def _stores(target: cst.BaseExpression) -> bool:
    """Is the target (or a part of it) an attribute or a subscript (a store into some object)?"""
    stack = [target]
    while stack:
        node = stack.pop()
        if type(node) in (cst.Attribute, cst.Subscript, cst.StarredElement):
            return True
        if type(node) in (cst.Tuple, cst.List):
            stack.extend(e.value for e in node.elements)  # type: ignore[attr-defined]
    return False


def _carries(expr: cst.CSTNode, tainted: set, ctx: "Context") -> bool:
    """May `expr` hold autograd history: does it read a tainted name, or a call's result other than
    one known to hand back a plain value?"""
    stack = [expr]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Name:
            if node.value in tainted:  # type: ignore[attr-defined]
                return True
            continue
        if kind is cst.Attribute:
            if node.attr.value not in tables.GRAPH_FREE_ATTRIBUTES:  # type: ignore[attr-defined]
                stack.append(node.value)  # type: ignore[attr-defined]
            continue
        if kind is cst.Comparison:
            continue  # (a comparison's result has no history)
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in ("item", "tolist", "numpy"):
                continue  # (a Python value or an array, whatever it was made from)
            qualified = ctx.resolve(func)
            if qualified is not None and qualified.startswith(_PLAIN_MODULES):
                continue
            if type(func) is cst.Name and qualified is None and func.value in _PLAIN_BUILTINS:
                continue
            return True
        stack.extend(code_children(node))
    return False


def _root(expr: cst.BaseExpression) -> cst.BaseExpression:
    while True:
        kind = type(expr)
        if kind in (cst.Attribute, cst.Subscript):
            expr = expr.value  # type: ignore[attr-defined]
        else:
            return expr  # (`self.forward(x).softmax(1)`: a method of a call's result, asked as such)


def _is_self(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "self"


def _call_keeps_nothing(call: cst.Call, tainted: set, ctx: "Context") -> bool:
    func = call.func
    if _is_self(_root(func)):
        if _is_self(func):
            return True  # `self(x)`: a run of the module
        if type(func) is not cst.Attribute or not _is_self(func.value):  # type: ignore[attr-defined]
            return False  # `self.encoder.sample(x)`, `self.feats.append(y)`: what it does is not known
        name = func.attr.value
        if name == "forward" or (name in _SELF_READERS and not call.args):
            return True
        value = values.evaluate(func, ctx)
        return value.kind is Kind.MODULE and not value.is_loss  # `self.encoder(x)`; not `self.adapt(x)`
    if not any(_carries(arg.value, tainted, ctx) for arg in call.args):
        # handed nothing that may carry history; a method of such a value keeps nothing new either
        return type(func) is not cst.Attribute or not _carries(func.value, tainted, ctx) or func.attr.value in _TENSOR_METHODS  # type: ignore[attr-defined]
    if any(arg.keyword is not None and arg.keyword.value == "out" for arg in call.args):
        return False  # `torch.add(a, b, out=buf)`
    qualified = ctx.resolve(func)
    if qualified is not None and qualified.startswith(_KNOWN_MODULES):
        return True  # (`F.softmax(out)`, `Variable(x)` imported from torch.autograd, `np.copy(a)`)
    if type(func) is cst.Name:
        return qualified is None and func.value in _BUILTINS
    return type(func) is cst.Attribute and func.attr.value in _TENSOR_METHODS and _carries(func.value, tainted, ctx)
