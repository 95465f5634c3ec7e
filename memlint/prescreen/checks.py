"""One necessary condition per rule: when its check says no, the rule cannot report in the file.

Each check reads the rule's reporting conditions and keeps a cheap part of them, loosened until it
is certainly implied: the words a resolved name must contain (a qualified name such as
`torch.nn.ReLU` is built from names written in the file, so `ReLU` occurs in it), or the shape of
a statement in CPython's AST.  Loosening only makes a check say "maybe" more often.  A rule with no
check here (a third-party rule) always runs.  tests/test_prescreen.py runs every rule's INVALID
examples through its check, and bench/prescreen_check.py compares each rule's findings with and
without the prescreen on whole corpora.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Mapping

from memlint.analysis.naming import BATCH_SOURCE, is_evaluation_function_name, names_evaluation_data
from memlint.analysis.tables import (
    ADAM_CLASSES,
    BACKWARD_METHODS,
    INPLACE_FUNCTIONS,
    INPLACE_MODULES,
    TORCH_FACTORIES,
    VIEW_METHODS,
)
from memlint.prescreen.source import Source, final_name, statement_lists, words_in

Check = Callable[[Source, Mapping[str, Any]], bool]
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _calls_method(source: Source, *methods: str) -> list[ast.Call]:
    return [
        node for node in source.nodes(ast.Call)
        if isinstance(node.func, ast.Attribute) and node.func.attr in methods  # type: ignore[attr-defined]
    ]  # fmt: skip


def _argument_count(call: ast.Call) -> int:
    return len(call.args) + len(call.keywords)


# ---------------------------------------------------------------------------- ML001


def accumulated_graph(source: Source, options: Mapping[str, Any]) -> bool:
    """An accumulation (`+=`, `-=`, `x = x + ...`, `.append(v)`, `.extend(v)`) inside a loop, in
    a function not named like a forward pass (`*forward*`, `__call__`)."""
    if not source.mentions("for", "while"):
        return False
    return _accumulates_in_loop(source.tree, in_forward=False, in_loop=False)  # type: ignore[arg-type]


def _accumulates_in_loop(node: ast.AST, *, in_forward: bool, in_loop: bool) -> bool:
    for child in ast.iter_child_nodes(node):
        child_forward, child_loop = in_forward, in_loop
        if isinstance(child, _FUNCTIONS):
            child_forward = "forward" in child.name or child.name == "__call__"
        elif isinstance(child, ast.ClassDef):
            child_forward = False  # a class body is no function: the analysis sees no forward there
        elif isinstance(child, _LOOPS):
            child_loop = True
        elif in_loop and not in_forward and _is_accumulation(child):
            return True
        if _accumulates_in_loop(child, in_forward=child_forward, in_loop=child_loop):
            return True
    return False


def _is_accumulation(node: ast.AST) -> bool:
    if isinstance(node, ast.AugAssign):
        return isinstance(node.op, (ast.Add, ast.Sub))
    if isinstance(node, ast.Assign):
        target = node.targets[0] if len(node.targets) == 1 else None
        value = node.value
        return (
            isinstance(target, ast.Name)
            and isinstance(value, ast.BinOp)
            and isinstance(value.op, ast.Add)
            and any(isinstance(side, ast.Name) and side.id == target.id for side in (value.left, value.right))
        )
    if isinstance(node, ast.Call):
        func = node.func
        return isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and _argument_count(node) == 1
    return False


# ---------------------------------------------------------------------------- ML002


def eval_without_no_grad(source: Source, options: Mapping[str, Any]) -> bool:
    """An evaluation region: a function named as an evaluation, `.eval()` / `.train(False)`, or a
    loop over validation / test data."""
    for function in source.nodes(*_FUNCTIONS):
        if is_evaluation_function_name(function.name):  # type: ignore[attr-defined]
            return True
    for call in _calls_method(source, "eval", "train"):
        count = _argument_count(call)
        if (call.func.attr == "eval" and count == 0) or (call.func.attr == "train" and count == 1):  # type: ignore[attr-defined]
            return True
    for loop in source.nodes(ast.For, ast.AsyncFor):
        if any(names_evaluation_data(word) for word in words_in(loop.iter)):  # type: ignore[attr-defined]
            return True
    return False


# ---------------------------------------------------------------------------- ML003


def activation_not_inplace(source: Source, options: Mapping[str, Any]) -> bool:
    """`nn.Sequential` holding an in-place-capable module; or, in a `forward`, an in-place-capable
    `F.<activation>` applied to `self.<layer>(...)` directly or to the name the previous statement
    bound to it."""
    if source.mentions("Sequential") and source.mentions(*INPLACE_MODULES):
        return True
    if not source.mentions(*INPLACE_FUNCTIONS):
        return False
    functional = source.names_for(INPLACE_FUNCTIONS)
    for function in source.nodes(*_FUNCTIONS):
        if function.name != "forward":  # type: ignore[attr-defined]
            continue
        for statements in statement_lists(function):
            previous = None
            for statement in statements:
                if _applies_inplace_function(statement, previous, functional):
                    return True
                previous = statement
    return False


def _applies_inplace_function(statement: ast.stmt, previous, functional: set[str]) -> bool:
    if isinstance(statement, ast.Assign):
        single_name = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        direct = statement.value if single_name else None
    elif isinstance(statement, (ast.Return, ast.Expr)):
        direct = statement.value
    else:
        return False
    for call in ast.walk(statement):
        if not isinstance(call, ast.Call) or final_name(call.func) not in functional or not call.args:
            continue
        first = call.args[0]
        if isinstance(first, ast.Call) and _is_self_attribute(first.func):
            return True
        if call is direct and isinstance(first, ast.Name) and _binds_self_layer_output(previous, first.id):
            return True
    return False


def _is_self_attribute(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"


def _binds_self_layer_output(statement, name: str) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
        and isinstance(statement.value, ast.Call)
        and _is_self_attribute(statement.value.func)
    )


# ---------------------------------------------------------------------------- ML004

def retained_intermediates(source: Source, options: Mapping[str, Any]) -> bool:
    """A `forward` whose top-level statements assign calls to names in a chain at least
    `min-retained-chain` long, each call reading the name bound by an earlier one."""
    if not source.mentions("forward"):
        return False
    needed = options.get("min-retained-chain", 3)
    for function in source.nodes(*_FUNCTIONS):
        if function.name == "forward" and _longest_chain(function.body) >= needed:  # type: ignore[attr-defined]
            return True
    return False


def _longest_chain(statements: list[ast.stmt]) -> int:
    length: dict[str, int] = {}  # name -> the longest chain ending in it
    best = 0
    for statement in statements:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            continue
        value = statement.value
        if not isinstance(value, ast.Call) or (isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS):
            continue
        earlier = [length[word] for word in set(words_in(value)) if word in length]
        target = statement.targets[0].id
        length[target] = max(length.get(target, 0), 1 + max(earlier, default=0))
        best = max(best, length[target])
    return best


# ---------------------------------------------------------------------------- ML005

_FOLDABLE = (ast.Constant, ast.Name, ast.UnaryOp, ast.BinOp, ast.Call, ast.Starred, ast.unaryop, ast.operator, ast.Load)


def oversized_linear_after_flatten(source: Source, options: Mapping[str, Any]) -> bool:
    """A `Linear(...)` with two arguments that could fold to numbers (literals, names, arithmetic,
    `int()`): the rule needs both sizes as numbers."""
    if not source.mentions("Linear"):
        return False
    linear = source.names_for(["Linear"])
    for call in source.nodes(ast.Call):
        if final_name(call.func) in linear:  # type: ignore[attr-defined]
            values = [*call.args, *(k.value for k in call.keywords)]  # type: ignore[attr-defined]
            if sum(1 for value in values if _could_fold(value)) >= 2:
                return True
    return False


def _could_fold(expr: ast.AST) -> bool:
    for node in ast.walk(expr):
        if not isinstance(node, _FOLDABLE):
            return False
        if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id == "int"):
            return False
    return True


# ---------------------------------------------------------------------------- ML013


def host_then_device(source: Source, options: Mapping[str, Any]) -> bool:
    """`torch.<factory>(...).to(...)` / `.cuda(...)` with no `device=` given to the factory."""
    if not source.mentions(*TORCH_FACTORIES) or not source.mentions("to", "cuda"):
        return False
    factories = source.names_for(TORCH_FACTORIES)
    for call in _calls_method(source, "to", "cuda"):
        factory = call.func.value  # type: ignore[attr-defined]
        if (
            isinstance(factory, ast.Call)
            and final_name(factory.func) in factories
            and not any(k.arg in ("device", None) for k in factory.keywords)
            and not any(isinstance(a, ast.Starred) for a in factory.args)
        ):
            return True
    return False


# ---------------------------------------------------------------------------- ML014


def device_outputs_accumulated(source: Source, options: Mapping[str, Any]) -> bool:
    """`.append(v)` / `.extend(v)` inside a loop over batches, in a file that mentions a device."""
    if not source.mentions("append", "extend") or not source.mentions("cuda", "to", "device"):
        return False
    for loop in source.nodes(ast.For, ast.AsyncFor):
        if not any(BATCH_SOURCE.search(word) for word in words_in(loop.iter)):  # type: ignore[attr-defined]
            continue
        for node in ast.walk(loop):
            if isinstance(node, ast.Call) and _is_accumulation(node):
                return True
    return False


# ---------------------------------------------------------------------------- the table


def _words(*groups: tuple[str, ...]) -> Check:
    """A check that needs one word of every group."""

    def check(source: Source, options: Mapping[str, Any]) -> bool:
        return all(source.mentions(*group) for group in groups)

    return check


def _optimizer_over_budget(source: Source, options: Mapping[str, Any]) -> bool:
    return options.get("gpu-memory") is not None and source.mentions(*ADAM_CLASSES) and source.mentions("parameters")


_BACKWARD = tuple(BACKWARD_METHODS)

# Checks that need only the words of the text come first: they are the cheapest.
TEXT_CHECKS: dict[str, Check] = {
    "ML006": _optimizer_over_budget,
    "ML007": _words(("checkpoint", "checkpoint_sequential")),
    "ML008": _words(("DataLoader",), ("len", "__len__")),
    "ML009": _words(("empty_cache", "collect")),
    "ML010": _words((*_BACKWARD, "optim"), ("float64", "double")),
    "ML011": _words(("retain_graph",), ("True",)),
    "ML012": _words(("zero_grad",), ("False",)),
    "ML015": _words(ADAM_CLASSES, ("half", "float16")),
    "ML016": _words(("amp",)),
    "ML017": _words(_BACKWARD, ("step",)),
}
# Checks that look at CPython's AST.
TREE_CHECKS: dict[str, Check] = {
    "ML001": accumulated_graph,
    "ML002": eval_without_no_grad,
    "ML003": activation_not_inplace,
    "ML004": retained_intermediates,
    "ML005": oversized_linear_after_flatten,
    "ML013": host_then_device,
    "ML014": device_outputs_accumulated,
}
