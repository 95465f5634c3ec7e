"""Models handed to a function frozen: the summaries' half of "this parameter only ever holds a
model without gradients" (CPython's AST, no libcst; the project pass joins the halves).

KAIR's `utils_model.test(model, L)` runs `model(L)`; every script calling it (through `test_mode`)
first freezes the model it hands over (`for k, v in model.named_parameters(): v.requires_grad =
False`) or calls under `torch.no_grad()`.  A frozen model's run builds no graph (memlint.analysis.
frozen), so the helper's run builds none either, whoever calls it.  Two facts per file:

- `held_parameters`: the parameters of a module-level function that it runs (`P(...)`) or hands to
  another call as they are, and that nothing in the function binds again (an assignment, a loop
  target, a nested function's own parameter or name: any of these and the parameter is left out);
- `handed`: at a call, the arguments that are a model the calling scope froze before the call
  (`True`) or a held parameter of the calling function passed on (its name), by position or
  keyword.  Frozen, as memlint.analysis.frozen reads it: a statement before the call, of the
  scope's own body or of a block nested in it that also holds the call, that sets `requires_grad =
  False` on every parameter (`for p in X.parameters(): p.requires_grad = False` as a statement of
  the loop's body, `X.requires_grad_(False)`, also in a chain of module methods, `X.freeze()`),
  no binding of `X` after it but `X = X.to(device)` and the like, and nothing in the file that
  thaws a model of that name (`X.requires_grad_()`, `X.unfreeze()`, `X.train()`, a loop setting
  `requires_grad` to anything but `False`).
"""

from __future__ import annotations

import ast
import itertools
from bisect import bisect_left
from typing import Iterator, Optional, Union

from memlint.analysis import tables

Scope = Union[ast.FunctionDef, ast.AsyncFunctionDef, ast.Module]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def positions(function: ast.AST) -> dict[str, int]:
    """A function's parameters by name: their position (-1: keyword-only); not `*args` / `**kw`."""
    args = function.args  # type: ignore[attr-defined]
    found = {arg.arg: index for index, arg in enumerate(args.posonlyargs + args.args)}
    found.update({arg.arg: -1 for arg in args.kwonlyargs})
    return found


def binding_lines(nodes) -> dict[str, list[tuple[int, int]]]:
    """Every name the nodes (a file's, from its index: `Name`, `arg`, `Global`, `Nonlocal`,
    `ExceptHandler`, `FunctionDef`, `AsyncFunctionDef`, `ClassDef`, `alias`) bind, with the line and
    the id of each binding node: `rebound` asks it once per file instead of walking each function."""
    found: dict[str, list[tuple[int, int]]] = {}
    for node in nodes:
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                continue
            names = (node.id,)
        elif kind is ast.arg:
            names = (node.arg,)
        elif kind in (ast.Global, ast.Nonlocal):
            names = tuple(node.names)
        elif kind is ast.alias:
            names = (node.asname or node.name.partition(".")[0],)
        else:
            name = getattr(node, "name", None)
            if name is None:
                continue
            names = (name,)
        for name in names:
            found.setdefault(name, []).append((getattr(node, "lineno", 0), id(node)))
    for lines in found.values():
        lines.sort()  # by line: `rebound` bisects to a function's lines (a file of many functions)
    return found


BINDING_NODES = (ast.Name, ast.arg, ast.Global, ast.Nonlocal, ast.ExceptHandler, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.alias)


def rebound(function: ast.AST, name: str, bindings: dict[str, list[tuple[int, int]]]) -> bool:
    """Is `name` bound anywhere in `function` other than as its own parameter (nested scopes too:
    the evidence must be plain)?  `bindings`: the file's `binding_lines`."""
    own = set(map(id, _own_arguments(function)))
    own.add(id(function))
    start, end = function.lineno, function.end_lineno or function.lineno  # type: ignore[attr-defined]
    lines = bindings.get(name, ())
    first = bisect_left(lines, (start, -1))
    return any(node not in own for line, node in itertools.takewhile(lambda b: b[0] <= end, itertools.islice(lines, first, None)))


def _own_arguments(function: ast.AST) -> list[ast.arg]:
    args = function.args  # type: ignore[attr-defined]
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a is not None)]


def freezes(scope: Scope) -> list[tuple[int, str, int]]:
    """The models `scope` freezes by a statement of its own body, or of a block nested in it (an
    `if`, a loop, a `with`, a `try`; not a nested function or class), and does not bind again after
    it (see the module's docstring), each with the last line of that statement and the last line
    the freeze holds to (the caller leaves out the names the file thaws: `thawed_names`).  A call
    after the first line and up to the second (the freeze ran before it: `if __name__ ==
    "__main__":` then `model.requires_grad_(False)` ... `evaluate(model)`) hands the model over
    frozen.  The freeze holds to the end of its block, or up to the first later statement of the
    block that does anything else with the name (`_ends_freeze`: `model.fc = nn.Linear(...)`,
    `thaw(model)`): such a simple statement still sees it frozen, a compound one (a loop) not.  One
    pass per block."""
    found: list[tuple[int, str, int]] = []
    blocks = [scope.body]
    while blocks:
        block = blocks.pop()
        if not block:
            continue
        held: dict[str, tuple[int, int]] = {}  # name -> (its freeze's last line, the last line it holds to)
        for statement in block:
            compound = hasattr(statement, "body")
            name = _freezes(statement)
            for other in list(held):
                if other != name and _ends_freeze(statement, other):
                    start, last = held.pop(other)
                    # a compound statement that only hands it to one call (`for img in paths: out =
                    # test_mode(model, img)`) still hands it over frozen on the first turn as on the others
                    sees = not compound or _ends_freeze(statement, other, handing=False) is False
                    found.append((start, other, (statement.end_lineno or last) if sees else last))
            for other, (start, last) in held.items():
                held[other] = (start, statement.end_lineno or last)
            if name is not None and name not in held and statement.end_lineno is not None and not _bound_after(scope, name, statement.end_lineno):
                held[name] = (statement.end_lineno, statement.end_lineno)
            if type(statement) in _COMPOUND:
                blocks.extend(_inner_blocks(statement))
        found.extend((start, name, last) for name, (start, last) in held.items())
    found.sort()
    return found


# What may follow a freeze and leave the module frozen: runs of it and these methods on it.
_KEEPS_FREEZE = frozenset({"eval", "to", "cuda", "half", "requires_grad_"})


def _ends_freeze(statement: ast.stmt, name: str, handing: bool = True) -> bool:
    """Does `statement` mention `name` other than by running it (`name(x)`), by `name.eval()`,
    `.to(...)`, `.cuda()`, `.half()`, `.requires_grad_(False)` (also chained) or by `name =
    name.cuda()`?  Anything else (an assignment into it, handing it to a call, `.apply`,
    `.parameters()`) may add or thaw parameters.  With `handing` False, one mention as an argument of
    a call is also left out (the call it is handed to is the one asked about)."""
    mentions, kept = 0, 0
    handed = 0
    links: set[int] = set()  # the inner calls of a chain seen from its outermost (ast.walk visits parents first)
    for node in ast.walk(statement):
        kind = type(node)
        if kind is ast.Name and node.id == name:  # type: ignore[attr-defined]
            mentions += 1
        elif kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name and node.targets[0].id == name:  # type: ignore[attr-defined]
            if _same_module(node.value, name):  # type: ignore[attr-defined]
                kept += 1  # the target (the value's chain counts below)
        elif kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            arguments = [*node.args, *(keyword.value for keyword in node.keywords)]  # type: ignore[attr-defined]
            handed += sum(1 for argument in arguments if type(argument) is ast.Name and argument.id == name)
            if type(func) is ast.Name and func.id == name:
                kept += 1  # a run
                continue
            if type(func) is ast.Name and func.id == "sum" and not any(type(n) is ast.Attribute and n.attr in ("requires_grad", "requires_grad_") for n in ast.walk(node)):
                # `sum(p.numel() for p in X.parameters())`: counting them changes nothing
                links.update(id(n) for n in ast.walk(node) if _parameters_of(n) == name)
                kept += len([n for n in ast.walk(node) if _parameters_of(n) == name])
            if id(node) in links:
                continue
            value: ast.AST = node
            ok = True
            while type(value) is ast.Call and type(value.func) is ast.Attribute:  # type: ignore[attr-defined]
                method = value.func.attr  # type: ignore[attr-defined]
                ok = ok and method in _KEEPS_FREEZE and (method != "requires_grad_" or _change(value) == "freeze")  # type: ignore[arg-type]
                links.add(id(value))
                value = value.func.value  # type: ignore[attr-defined]
            if ok and type(value) is ast.Name and value.id == name:  # type: ignore[attr-defined]
                kept += 1
    if not handing and handed == 1:
        kept += 1
    return mentions > kept


_COMPOUND = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)


def _inner_blocks(statement: ast.stmt) -> Iterator[list]:
    """The statement lists directly inside a compound statement (its body, `else`, `finally` and
    handlers' bodies)."""
    for attr in ("body", "orelse", "finalbody"):
        block = getattr(statement, attr, None)
        if block:
            yield block
    for handler in getattr(statement, "handlers", ()):
        yield handler.body


def _freezes(statement: ast.stmt) -> Optional[str]:
    """The name a statement freezes every parameter of, or None."""
    if type(statement) is ast.For:
        # `p.requires_grad = False` on the loop's parameter, as a statement of the loop's own body (not
        # behind an `if`: `if name not in ["fc.weight"]:` leaves the head trainable)
        owner = _parameters_of(statement.iter)
        targets = {node.id for node in ast.walk(statement.target) if type(node) is ast.Name}
        if any(type(node) is ast.Break for node in _walk_body(statement)):
            return None  # it may stop before the last parameter
        if any(type(node) is ast.Assign and _sets_requires_grad(node) and not _is_false(node.value) for node in _walk_body(statement)):  # type: ignore[attr-defined]
            return None  # some parameters (a head) set trainable again
        if owner is not None and not any(type(node) is ast.Break for node in _walk_body(statement)) and not any(
            type(node) is ast.Assign and _sets_requires_grad(node) and not _is_false(node.value) for node in _walk_body(statement)
        ) and any(
            type(node) is ast.Assign and _sets_requires_grad(node) and _is_false(node.value)
            and all(type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id in targets for t in node.targets)
            for node in statement.body
        ):
            return owner
        return None
    if type(statement) is ast.Expr and type(statement.value) is ast.Call:
        # `X.requires_grad_(False)`, also within a chain of methods that hand the module back
        # (`X.eval().requires_grad_(False).to(device)`: the outermost change decides)
        value: ast.AST = statement.value
        change = None
        while type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in _CHAIN_METHODS:
            change = change or _change(value)
            value = value.func.value
        return value.id if change == "freeze" and type(value) is ast.Name else None
    if type(statement) is ast.Assign and len(statement.targets) == 1 and type(statement.targets[0]) is ast.Name:
        value = statement.value
        change = None
        while type(value) is ast.Call and type(value.func) is ast.Attribute:
            change = change or _change(value)  # (the outermost change decides)
            value = value.func.value
        if change == "freeze" and type(value) is ast.Call:
            return statement.targets[0].id
    return None


# The methods of a chain that freezes its receiver: those that hand the module back, and `freeze`.
_CHAIN_METHODS = tables.MODULE_RETURNING | {"freeze"}


def _walk_body(loop: ast.For) -> Iterator[ast.AST]:
    for statement in loop.body:
        yield from ast.walk(statement)


def _parameters_of(iterator: ast.AST) -> Optional[str]:
    if type(iterator) is ast.Call and type(iterator.func) is ast.Attribute and iterator.func.attr in ("parameters", "named_parameters"):
        owner = iterator.func.value
        return owner.id if type(owner) is ast.Name else None
    return None


def _sets_requires_grad(assign: ast.Assign) -> bool:
    return any(type(target) is ast.Attribute and target.attr == "requires_grad" for target in assign.targets)


def _is_false(value: ast.AST) -> bool:
    return type(value) is ast.Constant and value.value is False


def _change(call: ast.Call) -> Optional[str]:
    """"freeze", "thaw" or None for a method call, as memlint.analysis.frozen reads it."""
    method = call.func.attr  # type: ignore[attr-defined]
    first = call.args[0] if call.args else None
    if method == "freeze" and not call.args and not call.keywords:
        return "freeze"
    if method == "unfreeze":
        return "thaw"
    if method == "train":
        return None if first is not None and _is_false(first) else "thaw"
    if method == "requires_grad_":
        return "freeze" if first is not None and _is_false(first) else "thaw"
    return None


def _bound_after(scope: Scope, name: str, line: int) -> bool:
    """Is `name` bound in `scope` after `line`, other than by `name = name.to(...)` and the like
    (methods that hand the module back)?"""
    for node in ast.walk(scope):
        if getattr(node, "lineno", 0) <= line:
            continue
        kind = type(node)
        if kind is ast.Assign and len(node.targets) == 1 and type(node.targets[0]) is ast.Name and node.targets[0].id == name:  # type: ignore[attr-defined]
            if _same_module(node.value, name):  # type: ignore[attr-defined]
                continue
            return True
        if kind is ast.Name and node.id == name and type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
            if _assigned_itself(scope, node, name):
                continue
            return True
        if kind in (ast.Global, ast.Nonlocal) and name in node.names:  # type: ignore[attr-defined]
            return True
        if kind is ast.arg and node.arg == name:  # type: ignore[attr-defined]
            return True
    return False


def _same_module(value: ast.AST, name: str) -> bool:
    """`X.to(device)`, `X.cuda().eval()`: X itself, through methods that hand the module back."""
    while type(value) is ast.Call and type(value.func) is ast.Attribute and value.func.attr in tables.MODULE_RETURNING:
        if value.func.attr in ("requires_grad_", "train"):
            return False
        value = value.func.value
    return type(value) is ast.Name and value.id == name


def _assigned_itself(scope: Scope, target: ast.Name, name: str) -> bool:
    """Is the Store `target` the one target of `name = name.to(...)` (checked by its Assign)?"""
    for node in ast.walk(scope):
        if type(node) is ast.Assign and len(node.targets) == 1 and node.targets[0] is target:
            return _same_module(node.value, name)
    return False


def thawed_names(tree: ast.Module) -> frozenset[str]:
    """The names the file thaws anywhere (`X.requires_grad_()`, `X.unfreeze()`, `X.train()`, a loop
    over `X.parameters()` setting `requires_grad` to anything but `False`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Call and type(node.func) is ast.Attribute and type(node.func.value) is ast.Name:  # type: ignore[attr-defined]
            if _change(node) == "thaw":  # type: ignore[arg-type]
                found.add(node.func.value.id)  # type: ignore[attr-defined]
        elif kind is ast.For:
            owner = _parameters_of(node.iter)  # type: ignore[attr-defined]
            if owner is not None and any(
                type(inner) is ast.Assign and _sets_requires_grad(inner) and not _is_false(inner.value)  # type: ignore[attr-defined]
                for inner in _walk_body(node)  # type: ignore[arg-type]
            ):
                found.add(owner)
    return frozenset(found)
