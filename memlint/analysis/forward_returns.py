"""What each position of a module class's `forward` returns, and which instances a call runs.

A policy network's `forward` often returns a sampled action beside the distribution it came from
(`return action, dist` with `action = dist.sample()`): calling the module gives a tuple whose first
element carries no autograd history (sampling runs without it) and whose second does (its
`log_prob` backpropagates).  Unpacking the call's result (`action, dist = self.actor(state)`) must
not give every element the history of the model's output: `graph_free_positions` finds, for each
nn.Module class of the file whose every `return` in `forward` is a tuple of the same length, the
positions that certainly carry none; `constructed_classes` finds which class of the file a name or
`self.<attr>` is built from, so that the `Context` can ask it of `self.actor(state)`.
"""

from __future__ import annotations

from typing import Iterator, Mapping, Optional

import libcst as cst

from memlint.analysis.bindings import SCOPES, bound_names, exact_names_bound_by, target_names
from memlint.analysis.walk import code_descendants, dotted_name

# Calls whose result carries no autograd history, whatever their receiver holds.
_GRAPH_FREE_METHODS = frozenset({"detach", "item", "tolist", "numpy"})
# Methods of a torch.distributions object that sample under no_grad (`rsample` keeps history).
_SAMPLING = frozenset({"sample", "sample_n"})
# Methods that return the module they are called on: `Actor(...).to(device)`.
_SAME_MODULE = frozenset({"to", "cuda", "cpu", "train", "eval", "float", "double", "half"})


def graph_free_positions(module: cst.Module, classes: frozenset[str], imports: Mapping[str, str]) -> dict[str, tuple[bool, ...]]:
    """For each class of `classes` (the file's nn.Module classes) defined at module level whose
    `forward` returns tuples of one length only: per position, does it certainly carry no history?
    `imports`: local name -> qualified name (to know a `torch.distributions` class)."""
    found: dict[str, tuple[bool, ...]] = {}
    for statement in module.body:
        if not isinstance(statement, cst.ClassDef) or statement.name.value not in classes:
            continue
        forward = next(
            (s for s in statement.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "forward"), None
        )
        if forward is None:
            continue
        positions = _positions(forward, imports)
        if positions is not None and not all(free is False for free in positions):
            found[statement.name.value] = positions
    return found


def _positions(forward: cst.FunctionDef, imports: Mapping[str, str]) -> Optional[tuple[bool, ...]]:
    returns = list(_own(forward, cst.Return))
    if not returns or any(not isinstance(r.value, cst.Tuple) for r in returns):
        return None
    widths = {len(r.value.elements) for r in returns}  # type: ignore[union-attr]
    if len(widths) != 1 or any(isinstance(e, cst.StarredElement) for r in returns for e in r.value.elements):  # type: ignore[union-attr]
        return None
    bindings: dict[str, list[Optional[cst.BaseExpression]]] = {}
    for node in _own(forward, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem)):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            bindings.setdefault(node.targets[0].target.value, []).append(node.value)
        else:  # any other binding of a name: its value is not known here
            for name in exact_names_bound_by(node):
                bindings.setdefault(name, []).append(None)
    for parameter in forward.params.params:
        bindings.setdefault(parameter.name.value, []).append(None)
    return tuple(
        all(_graph_free(r.value.elements[i].value, bindings, imports, 0) for r in returns)  # type: ignore[union-attr]
        for i in range(widths.pop())
    )


def _graph_free(expr: cst.BaseExpression, bindings, imports: Mapping[str, str], depth: int) -> bool:
    if depth > 4:
        return False
    if isinstance(expr, cst.Name):
        values = bindings.get(expr.value)
        return bool(values) and all(v is not None and _graph_free(v, bindings, imports, depth + 1) for v in values)
    if not isinstance(expr, cst.Call) or not isinstance(expr.func, cst.Attribute):
        return False
    method = expr.func.attr.value
    if method in _GRAPH_FREE_METHODS:
        return True
    return method in _SAMPLING and _is_distribution(expr.func.value, bindings, imports, depth + 1)


def _is_distribution(expr: cst.BaseExpression, bindings, imports: Mapping[str, str], depth: int) -> bool:
    """Is `expr` a torch.distributions object (`Normal(mu, std)`, a name bound only to one)?"""
    if depth > 4:
        return False
    if isinstance(expr, cst.Name):
        values = bindings.get(expr.value)
        return bool(values) and all(v is not None and _is_distribution(v, bindings, imports, depth + 1) for v in values)
    if not isinstance(expr, cst.Call):
        return False
    written = dotted_name(expr.func)
    if written is None:
        return False
    root, _, rest = written.partition(".")
    qualified = imports.get(root)
    if qualified is None:
        return False
    full = f"{qualified}.{rest}" if rest else qualified
    return full.startswith("torch.distributions.")


def constructed_classes(module: cst.Module) -> dict[str, Optional[str]]:
    """`self.actor` / `actor` -> the callee (a plain name: a class, or anything else) every assignment
    of it in the file builds (`self.actor = Actor(obs_dim, n).to(device)`); left out where one assigns
    something else, or where a function of the file takes a parameter of that name.  One walk of the
    file, whatever classes are asked about (`of_classes`)."""
    found: dict[str, Optional[str]] = {}
    parameters: set[str] = set()  # a parameter of that name may hold anything its caller gives
    for node in code_descendants(module):
        if isinstance(node, cst.Param):
            parameters.add(node.name.value)
        elif isinstance(node, cst.Assign):
            built = _built_class(node.value)
            for target in node.targets:
                written = dotted_name(target.target) if isinstance(target.target, (cst.Name, cst.Attribute)) else None
                if written is None or _moved_self(node.value, written):
                    continue  # (`self.model = self.model.cuda()` keeps the instance it had)
                if written in found and found[written] != built:
                    found[written] = None
                else:
                    found.setdefault(written, built)
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign)):
            written = dotted_name(node.target) if isinstance(node.target, (cst.Name, cst.Attribute)) else None
            if written is not None:
                found[written] = None
    return {written: built for written, built in found.items() if built is not None and written not in parameters}


def first_items(module: cst.Module) -> tuple[dict[str, str], frozenset[str]]:
    """Names every module-level binding of which is the first item unpacked from a call of one plain
    name (`model, _ = make_and_restore_model(arch=..., dataset=ds)`) -> that callee (moves of the
    name, `model = model.cuda()`, keep it; any other binding drops it), and the names some function
    of the file binds itself (a parameter, an assignment): there the name is another value."""
    found: dict[str, str] = {}
    dropped: set[str] = set()
    for node in code_descendants(module, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        if isinstance(node, cst.Assign):
            value = node.value
            callee = value.func.value if type(value) is cst.Call and type(value.func) is cst.Name else None  # type: ignore[attr-defined]
            for target in node.targets:
                bound = target.target
                if type(bound) in (cst.Tuple, cst.List) and bound.elements and type(bound.elements[0].value) is cst.Name and callee:  # type: ignore[attr-defined]
                    first = bound.elements[0].value.value  # type: ignore[attr-defined]
                    if found.setdefault(first, callee) != callee:
                        dropped.add(first)
                    dropped.update(n for e in bound.elements[1:] for n in target_names(e.value))  # type: ignore[attr-defined]
                elif not (type(bound) is cst.Name and _moved_self(value, bound.value)):
                    dropped.update(target_names(bound))
        elif isinstance(node, (cst.AugAssign, cst.AnnAssign, cst.For, cst.AsName)):
            bound = node.name if isinstance(node, cst.AsName) else node.target  # type: ignore[union-attr]
            dropped.update(target_names(bound))  # type: ignore[arg-type]
    kept = {name: callee for name, callee in found.items() if name not in dropped}
    local: set[str] = set()
    if kept:
        for node in code_descendants(module):
            if isinstance(node, (cst.FunctionDef, cst.Lambda)):
                local.update(bound_names(node, nested=True) & kept.keys())
    return kept, frozenset(local)


def turns_on(call: cst.Call, flag: str, position: int) -> bool:
    """May `call` turn the flag parameter on: by keyword or at `position`, with anything but a
    literal False / None / 0, or through `*args` / `**kwargs` whose content is not known here?"""
    positional = 0
    for argument in call.args:
        if argument.star:
            return True  # (`**kwargs`, `*args`: may hold it)
        if argument.keyword is not None:
            if argument.keyword.value == flag:
                return not _off(argument.value)
            continue
        if positional == position:
            return not _off(argument.value)
        positional += 1
    return False


def _off(value: cst.BaseExpression) -> bool:
    if type(value) is cst.Name:
        return value.value in ("False", "None")  # type: ignore[attr-defined]
    return type(value) is cst.Integer and value.value == "0"  # type: ignore[attr-defined]


def _moved_self(value: cst.BaseExpression, written: str) -> bool:
    """`x.cuda()` / `x.to(device)` assigned back to `x`: the same instance, moved."""
    moved = False
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _SAME_MODULE:
        value, moved = value.func.value, True
    return moved and isinstance(value, (cst.Name, cst.Attribute)) and dotted_name(value) == written


def _built_class(value: cst.BaseExpression) -> Optional[str]:
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _SAME_MODULE:
        value = value.func.value
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
        return value.func.value
    return None


def of_classes(constructed: dict[str, Optional[str]], classes: frozenset[str]) -> dict[str, Optional[str]]:
    """`constructed_classes(module)` narrowed to `classes`: the names every assignment of which builds
    one class of `classes` (a name built as two callees, or as a callee and something else, is not
    in `constructed` at all)."""
    return {written: built for written, built in constructed.items() if built in classes}


def _own(function: cst.FunctionDef, kinds) -> Iterator[cst.CSTNode]:
    """Nodes of `kinds` in the function's own code (not in nested functions, classes or lambdas)."""
    return (node for node in code_descendants(function.body, skip=SCOPES) if isinstance(node, kinds))
