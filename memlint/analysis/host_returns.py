"""Which functions return a tensor they have just made in host memory (the summaries' `fresh`), on
CPython's AST: the project pass's side of ML013's "created on the host, then moved" fact.

`causal_mask(n)` whose body is `mask = torch.triu(torch.ones(1, n, n), diagonal=1).type(torch.int)`,
`return mask == 0` returns such a tensor on every call: a caller's `causal_mask(n).to(device)` copies
to the device a tensor that could have been made there.  A function is counted only when every
`return` it has gives a fresh host tensor: a torch size factory (`tables.TORCH_FACTORIES`) called
without `device=` (nor `**kwargs`, which may hold one), looked at through what keeps it on the host
and fresh (a dtype cast, a reshape, a triangle of it, a comparison or arithmetic with a number) and
through a local name bound once, and through what computes a new host tensor from it: an index or
a slice of it (`torch.eye(n)[labels]`, a one-hot embedding), an elementwise torch function of it
(`-torch.log(eps - torch.log(torch.rand(shape) + eps))`, a Gumbel sample), arithmetic with a number
or with a parameter whose default is a number (`eps=1e-10`: a number at the calls that leave it, and
the calls in a project pass it on), arithmetic of two such tensors (`m.unsqueeze(1) - m.unsqueeze(2)`),
a `masked_fill` of one by a comparison of one with a number (a Swin window mask's `-100.0`), a helper
that returns a reshape of its argument (`window_partition(img_mask, ws)`: `passes`, `reshaped_parameter`).
A name bound more than once counts where every binding is a plain `name = ...` of the function's own
body (straight-line code): the binding before the read is the value read.  A tensor that data may be
written into in place (`m[labels] = 1`, `hot.scatter_(1, y, 1)`, `m.copy_(src)`: any in-place method
but a fill with a number literal) is not fresh, nor is a decorated function's result (a cache may
give back a kept tensor).  A function that may return a tensor on the device (`device=` given
to the factory, a `.to(...)` in one branch, a parameter returned in another) is not: the analysis
cannot tell where its result lives, so the rule stays silent.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from memlint.analysis.ast_nodes import own_nodes
from memlint.analysis.flag_arguments import parameter_defaults
from memlint.analysis.naming import dotted
from memlint.analysis.tables import ELEMENTWISE_FUNCTIONS, SHAPE_METHODS, TENSOR_CASTS, TORCH_FACTORIES

_TRIANGLES = frozenset({"triu", "tril"})
_TRIANGLE_FUNCTIONS = frozenset({"torch.triu", "torch.tril"})
_DEPTH = 16  # how many wrappers and local names are followed before giving up (stay silent): a Swin mask takes 10

Qualify = Callable[[Optional[str]], Optional[str]]
Bindings = dict[str, list[ast.Assign]]
# The argument a call returns a reshape of (a project helper's: `window_partition(x, ws)` -> `x`), or None.
Passes = Callable[[ast.Call], Optional[ast.AST]]
# `masked_fill(mask, value)`: a new tensor where the receiver is, `value` written where `mask` holds.
_MASKED_FILLS = frozenset({"masked_fill"})
_NUMBER_CASTS = frozenset({"float", "int"})
# A function with more subscript writes than this is not read for number fills (each reading walks
# the function: a Swin mask has one or two; a long hand-written table is data anyway).
_FILLS_READ = 4


def returns_fresh_host_tensor(
    returns: list[ast.Return], qualify: Qualify, bindings: Bindings, function: Optional[ast.AST] = None, passes: Optional[Passes] = None
) -> bool:
    """Does every one of a function's `return` statements (`returns`, at least one) give a tensor
    made on the host by a torch size factory in that call?  `qualify` resolves a dotted name through
    the file's imports ("torch.ones"); `bindings` maps each local name to its plain assignments (one
    assignment: the name holds that value; none: bound some other way, a parameter say); `function`,
    the function's node, gives the parameters that default to a number (`_NumberParameters`) and the
    straight-line rebindings (`_Rebindings`); `passes` the helpers that return a reshape of an argument."""
    if getattr(function, "decorator_list", None):
        return False  # `@functools.lru_cache`, a property: a call may give back a kept tensor, or not the body's
    numbers = _NumberParameters(function)
    numbers.passes = passes
    return bool(returns) and all(r.value is not None and _fresh(r.value, qualify, bindings, numbers, 0) for r in returns)


def reshaped_parameter(function: ast.AST) -> Optional[int]:
    """The position of the parameter every `return` of `function` gives a reshape of (`x.view(...)`,
    `.permute(...)`, `.contiguous()`: `tables.SHAPE_METHODS`), through names bound in straight-line
    code (`x = x.view(B, H // w, w, W // w, w, C)`, then `windows = x.permute(...).view(...)`):
    the result is where that argument is.  None for anything else."""
    arguments = getattr(function, "args", None)
    if arguments is None or arguments.vararg is not None:
        return None
    parameters = [a.arg for a in (*arguments.posonlyargs, *arguments.args)]
    rebindings = _Rebindings(function)
    found: set[int] = set()
    returns = [n for n in own_nodes(function) if type(n) is ast.Return]
    if not returns:
        return None
    for statement in returns:
        position = _reshaped(statement.value, parameters, rebindings, 0)
        if position is None:
            return None
        found.add(position)
    return found.pop() if len(found) == 1 else None


def _reshaped(expr: Optional[ast.AST], parameters: list[str], rebindings: "_Rebindings", depth: int) -> Optional[int]:
    if expr is None or depth > _DEPTH:
        return None
    kind = type(expr)
    if kind is ast.Name:
        value = rebindings.before(expr)  # type: ignore[arg-type]
        if value is not None:
            return _reshaped(value, parameters, rebindings, depth + 1)
        name = expr.id  # type: ignore[attr-defined]
        if name in parameters and rebindings.straight(name):
            return parameters.index(name)
        return None
    if kind is ast.Call and type(expr.func) is ast.Attribute and expr.func.attr in SHAPE_METHODS:  # type: ignore[attr-defined]
        return _reshaped(expr.func.value, parameters, rebindings, depth + 1)  # type: ignore[attr-defined]
    return None


def _written_name(target: ast.AST) -> Optional[str]:
    """`m` of the target `m[:, h, w, :]` (or `m[0][1]`): the name whose tensor an assignment writes into."""
    if type(target) is not ast.Subscript:
        return None
    while type(target) is ast.Subscript:
        target = target.value  # type: ignore[attr-defined]
    return target.id if type(target) is ast.Name else None  # type: ignore[attr-defined]


def _number_fill(assign: ast.Assign, function: ast.AST) -> bool:
    """`img_mask[:, h, w, :] = cnt`: a number (a literal, or a name bound only to literals and
    stepped by them: `cnt = 0`, `cnt += 1`) written into the region of fixed slices (literal bounds,
    `self` attributes, or a loop's name over a literal tuple of such `slice(...)`s): the values come
    from no data, as a factory's would.  A Swin layer's shifted-window mask."""
    if len(assign.targets) != 1 or type(assign.targets[0]) is not ast.Subscript:
        return False
    target = assign.targets[0]
    if type(target.value) is not ast.Name or not _counted_number(assign.value, function):
        return False
    index = target.slice
    parts = index.elts if type(index) is ast.Tuple else [index]  # type: ignore[attr-defined]
    return all(_fixed_region(part, function) for part in parts)


def _fixed_region(part: ast.AST, function: ast.AST) -> bool:
    kind = type(part)
    if kind is ast.Slice:
        return all(bound is None or _fixed_bound(bound) for bound in (part.lower, part.upper, part.step))  # type: ignore[attr-defined]
    if kind is ast.Constant:
        return part.value is Ellipsis or type(part.value) is int  # type: ignore[attr-defined]
    if kind is not ast.Name:
        return False
    name = part.id  # type: ignore[attr-defined]
    loops = [n for n in own_nodes(function) if type(n) is ast.For and type(n.target) is ast.Name and n.target.id == name]
    stores = [n for n in own_nodes(function) if type(n) is ast.Name and n.id == name and type(n.ctx) is not ast.Load]
    if not loops or len(stores) != len(loops):
        return False  # bound some other way too (or a parameter: never a loop's alone)
    return all(_slices(loop.iter, function) for loop in loops)  # type: ignore[attr-defined]


def _slices(expr: ast.AST, function: ast.AST) -> bool:
    """A literal tuple or list of `slice(...)` calls with fixed bounds, or a name bound once, in the
    function's own body, to one."""
    if type(expr) is ast.Name:
        bound = [n for n in getattr(function, "body", ()) if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name and n.targets[0].id == expr.id]  # type: ignore[attr-defined]
        stores = [n for n in own_nodes(function) if type(n) is ast.Name and n.id == expr.id and type(n.ctx) is not ast.Load]  # type: ignore[attr-defined]
        return len(bound) == 1 and len(stores) == 1 and _slices(bound[0].value, function) and type(bound[0].value) is not ast.Name
    if type(expr) not in (ast.Tuple, ast.List) or not expr.elts:  # type: ignore[attr-defined]
        return False
    return all(
        type(e) is ast.Call and type(e.func) is ast.Name and e.func.id == "slice" and not e.keywords
        and all(_fixed_bound(a) for a in e.args)
        for e in expr.elts  # type: ignore[attr-defined]
    )  # fmt: skip


def _fixed_bound(expr: ast.AST) -> bool:
    """`None`, `3`, `-1`, `self.window_size`, `-self.shift_size`: a bound no data gives."""
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:  # type: ignore[attr-defined]
        expr = expr.operand  # type: ignore[attr-defined]
    if type(expr) is ast.Constant:
        return expr.value is None or type(expr.value) is int  # type: ignore[attr-defined]
    return type(expr) is ast.Attribute and type(expr.value) is ast.Name and expr.value.id == "self"  # type: ignore[attr-defined]


def _counted_number(expr: ast.AST, function: ast.AST) -> bool:
    """A number literal, or a local name every binding of which is one (`cnt = 0`) or steps it by
    one (`cnt += 1`): a counter."""
    if _is_number(expr):
        return True
    if type(expr) is not ast.Name:
        return False
    name = expr.id  # type: ignore[attr-defined]
    arguments = getattr(function, "args", None)
    if arguments is not None and name in {a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)}:
        return False
    found = False
    for node in own_nodes(function):
        if type(node) is ast.Name and node.id == name and type(node.ctx) is not ast.Load:
            found = True
        elif type(node) in (ast.Global, ast.Nonlocal) and name in node.names:  # type: ignore[attr-defined]
            return False
    if not found:
        return False
    for node in own_nodes(function):
        if type(node) is ast.Assign and any(type(t) is ast.Name and t.id == name for t in node.targets):
            if len(node.targets) != 1 or not _is_number(node.value):
                return False
        elif type(node) is ast.AugAssign and type(node.target) is ast.Name and node.target.id == name:
            if not _is_number(node.value):
                return False
        elif type(node) in (ast.For, ast.With, ast.AnnAssign, ast.NamedExpr, ast.comprehension) and any(
            type(n) is ast.Name and n.id == name for n in ast.walk(getattr(node, "target", node))
        ):
            return False
    return True




class _Rebindings:
    """A function's names bound only by plain `name = value` statements of its own body (straight-line
    code: none in a branch, a loop or a `with`), and no other way but as a parameter: the value a
    read sees is the one bound last before it.  Found on the first question."""

    def __init__(self, function: Optional[ast.AST]) -> None:
        self._function = function
        self._found: Optional[dict[str, list[ast.Assign]]] = None
        self._written: set[str] = set()

    def _index(self) -> dict[str, list[ast.Assign]]:
        if self._found is None:
            found: dict[str, list[ast.Assign]] = {}
            function = self._function
            if function is not None:
                plain: set[int] = set()
                for statement in getattr(function, "body", ()):
                    if type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name:
                        found.setdefault(statement.targets[0].id, []).append(statement)
                        plain.add(id(statement.targets[0]))
                other: set[str] = set()
                fills: list[tuple[str, ast.Assign]] = []
                for node in own_nodes(function):
                    if type(node) is ast.Name and type(node.ctx) is not ast.Load and id(node) not in plain:
                        other.add(node.id)
                    elif type(node) in (ast.Assign, ast.AugAssign, ast.Delete):
                        for target in getattr(node, "targets", None) or [getattr(node, "target")]:
                            written = _written_name(target)
                            if written is not None and type(node) is ast.Assign:
                                fills.append((written, node))  # a number fill, or data: read below
                            elif written is not None:
                                self._written.add(written)
                    elif type(node) is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name:  # type: ignore[attr-defined]
                        if _data_method(node):
                            self._written.add(node.func.value.id)  # type: ignore[attr-defined]  # `hot.scatter_(1, y, 1)`
                    elif type(node) in (ast.Global, ast.Nonlocal):
                        other.update(node.names)  # type: ignore[attr-defined]
                    elif type(node) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
                        other.add(node.name)  # type: ignore[attr-defined]
                read = len(fills) <= _FILLS_READ
                for written, assign in fills:
                    if not (read and _number_fill(assign, function)):
                        self._written.add(written)  # data, or a value of unknown kind, written into it
                other |= self._written
                for name in other:
                    found.pop(name, None)
                    found[name] = []  # bound some other way too: no straight-line value
            self._found = found
        return self._found

    def written(self, name: str) -> bool:
        """Is data (or a value of unknown kind) written into the tensor `name` holds, in place:
        `m[labels] = 1`, `m[:, 0:2] = v`, `hot.scatter_(1, y, 1)`, `m.copy_(src)`?"""
        self._index()
        return name in self._written

    def straight(self, name: str) -> bool:
        """Is `name` bound only by plain top-level assignments (or not at all) in the function?"""
        assigned = self._index().get(name)
        return assigned is None or bool(assigned)

    def before(self, use: ast.Name) -> Optional[ast.AST]:
        """The value of the last plain top-level `name = value` that ends before `use`, where every
        binding of the name is one; None otherwise."""
        assigned = self._index().get(use.id)
        if not assigned:
            return None
        at = (use.lineno, use.col_offset)
        earlier = [a for a in assigned if (a.end_lineno, a.end_col_offset) <= at]  # type: ignore[operator]
        return earlier[-1].value if earlier else None


class _NumberParameters:
    """The parameters of a function whose default is a number literal (`eps=1e-10`) and that its
    body never stores to (`eps = eps.cuda()`: then it may hold anything).  Found on the first
    question: most functions never ask (a name in arithmetic with a fresh tensor is rare)."""

    def __init__(self, function: Optional[ast.AST]) -> None:
        self._function = function
        self._found: Optional[frozenset[str]] = None
        self.rebindings = _Rebindings(function)  # carried with the numbers: both are the function's
        self.passes: Optional[Passes] = None

    def parameters(self) -> frozenset[str]:
        """The names of the function's parameters."""
        arguments = getattr(self._function, "args", None)
        if arguments is None:
            return frozenset()
        found = [a.arg for a in (*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs)]
        found += [a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None]
        return frozenset(found)

    def __contains__(self, name: str) -> bool:
        if self._found is None:
            self._found = self._parameters()
        return name in self._found

    def _parameters(self) -> frozenset[str]:
        function = self._function
        found = {name for name, default, _ in parameter_defaults(function) if _is_number(default)}  # type: ignore[arg-type]
        if found:
            found -= {n.id for n in ast.walk(function) if type(n) is ast.Name and type(n.ctx) is not ast.Load}  # type: ignore[arg-type, attr-defined]
        return frozenset(found)


def _fresh(expr: ast.AST, qualify: Qualify, bindings: Bindings, numbers: "_NumberParameters", depth: int) -> bool:
    if depth > _DEPTH:
        return False
    kind = type(expr)
    if kind is ast.Subscript:  # `torch.eye(n)[labels]`, `t[:, 1:]`: a part of a host tensor stays on the host
        return _fresh(expr.value, qualify, bindings, numbers, depth + 1)  # type: ignore[attr-defined]
    if kind is ast.Name:
        assigned = bindings.get(expr.id)  # type: ignore[attr-defined]
        if assigned is None:
            return False  # not bound here (no walk of the function for it)
        # Data written into it in place (`m[labels] = 1`) makes its values the data's, not the
        # factory's alone: asked last, since the question walks the whole function and most names
        # never hold a fresh host tensor in the first place.
        if assigned and len(assigned) == 1 and type(assigned[0].targets[0]) is ast.Name:
            return _fresh(assigned[0].value, qualify, bindings, numbers, depth + 1) and not numbers.rebindings.written(expr.id)  # type: ignore[attr-defined]
        if expr.id in numbers.parameters():  # type: ignore[attr-defined]
            return False  # a parameter: whatever the caller gives
        value = numbers.rebindings.before(expr)  # type: ignore[arg-type]  # `m = m.view(-1, n)`: straight-line code, maybe number fills
        if value is None or numbers.rebindings.written(expr.id):  # type: ignore[attr-defined]
            return False  # a parameter, a loop variable, a name bound in branches: it may hold anything
        return _fresh(value, qualify, bindings, numbers, depth + 1)
    if kind is ast.Compare:  # `mask == 0`: a new bool tensor on the same device
        compared = [expr.left, *expr.comparators]  # type: ignore[attr-defined]
        tensors = [e for e in compared if not _number(e, numbers)]
        return len(compared) == 2 and len(tensors) == 1 and _fresh(tensors[0], qualify, bindings, numbers, depth + 1)
    if kind is ast.BinOp:  # `torch.ones(n, n) / n`: arithmetic with a number stays on the host
        left, right = expr.left, expr.right  # type: ignore[attr-defined]
        if _number(right, numbers):
            return _fresh(left, qualify, bindings, numbers, depth + 1)
        if _number(left, numbers):
            return _fresh(right, qualify, bindings, numbers, depth + 1)
        # `m.unsqueeze(1) - m.unsqueeze(2)`: two host tensors make a third there
        return _fresh(left, qualify, bindings, numbers, depth + 1) and _fresh(right, qualify, bindings, numbers, depth + 1)
    if kind is ast.UnaryOp and type(expr.op) in (ast.Invert, ast.USub):  # type: ignore[attr-defined]  # `~mask`
        return _fresh(expr.operand, qualify, bindings, numbers, depth + 1)  # type: ignore[attr-defined]
    if kind is not ast.Call:
        return False
    func = expr.func  # type: ignore[attr-defined]
    arguments = expr.args  # type: ignore[attr-defined]
    keywords = expr.keywords  # type: ignore[attr-defined]
    qualified = qualify(dotted(func))
    if qualified is not None and qualified.startswith("torch.") and qualified[6:] in TORCH_FACTORIES:
        return not any(k.arg in ("device", "out", None) for k in keywords)
    if qualified is not None and qualified.startswith("torch.") and qualified[6:] in ELEMENTWISE_FUNCTIONS:  # `torch.log(u + eps)`
        return len(arguments) == 1 and not keywords and type(arguments[0]) is not ast.Starred and _fresh(arguments[0], qualify, bindings, numbers, depth + 1)
    if qualified in _TRIANGLE_FUNCTIONS:  # `torch.triu(torch.ones(n, n), diagonal=1)`
        return bool(arguments) and type(arguments[0]) is not ast.Starred and _fresh(arguments[0], qualify, bindings, numbers, depth + 1)
    passed = numbers.passes(expr) if numbers.passes is not None else None  # type: ignore[arg-type]
    if passed is not None:  # `window_partition(img_mask, ws)`: a helper's reshape of its argument
        return _fresh(passed, qualify, bindings, numbers, depth + 1)
    if type(func) is not ast.Attribute:
        return False
    method = func.attr
    if (method in TENSOR_CASTS and not arguments and not keywords) or method in SHAPE_METHODS or method in _TRIANGLES or _dtype_cast(expr, qualify):  # type: ignore[arg-type]
        return _fresh(func.value, qualify, bindings, numbers, depth + 1)
    if method in _MASKED_FILLS and len(arguments) == 2 and not keywords and _number(arguments[1], numbers):
        # `m.masked_fill(m != 0, -100.0)`: the mask a host tensor too (a comparison of one with a number)
        return _fresh(arguments[0], qualify, bindings, numbers, depth + 1) and _fresh(func.value, qualify, bindings, numbers, depth + 1)
    return False


def _data_method(call: ast.Call) -> bool:
    """An in-place tensor method (`scatter_`, `copy_`, `add_`: a name ending in `_`, not a dunder)
    other than a fill with a number literal (`fill_(0)`, `zero_()`): it may write data."""
    method = call.func.attr  # type: ignore[attr-defined]
    if not method.endswith("_") or method.startswith("__"):
        return False
    if method == "zero_":
        return bool(call.args or call.keywords)
    if method == "fill_":
        return not (len(call.args) == 1 and not call.keywords and _is_number(call.args[0]))
    return True


def _dtype_cast(call: ast.Call, qualify: Qualify) -> bool:
    """`t.type(torch.int)`: a cast to a dtype (a lowercase name of torch), which keeps `t` where it
    is, unlike `t.type(torch.cuda.FloatTensor)` (as ML013's `_dtype_cast` on libcst's tree)."""
    if call.func.attr != "type" or len(call.args) != 1 or call.keywords:  # type: ignore[attr-defined]
        return False
    module, _, name = (qualify(dotted(call.args[0])) or "").rpartition(".")
    return module == "torch" and name.islower() and not name.startswith("_")


def _number(expr: ast.AST, numbers: "_NumberParameters") -> bool:
    """A number literal, or a parameter that defaults to one (`_number_parameters`), or `float(...)`
    / `int(...)` of a number literal (`float(-100.0)`)."""
    if type(expr) is ast.Call and type(expr.func) is ast.Name and expr.func.id in _NUMBER_CASTS:  # type: ignore[attr-defined]
        return len(expr.args) == 1 and not expr.keywords and _is_number(expr.args[0])  # type: ignore[attr-defined]
    return _is_number(expr) or (type(expr) is ast.Name and expr.id in numbers)  # type: ignore[attr-defined]


def _is_number(expr: ast.AST) -> bool:
    if type(expr) is ast.UnaryOp and type(expr.op) is ast.USub:  # type: ignore[attr-defined]
        expr = expr.operand  # type: ignore[attr-defined]
    return type(expr) is ast.Constant and type(expr.value) in (int, float)  # type: ignore[attr-defined]
