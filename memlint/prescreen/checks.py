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
from collections import Counter
from typing import Any, Callable, Mapping, Optional

from memlint.analysis.naming import BATCH_SOURCE, is_evaluation_function_name, names_evaluation_data
from memlint.analysis.tables import (
    ADAM_CLASSES,
    BACKWARD_METHODS,
    INPLACE_FUNCTIONS,
    INPLACE_MODULES,
    OUTPUT_NOT_SAVED,
    TORCH_FACTORIES,
    VIEW_METHODS,
)
from memlint.prescreen.graph import History
from memlint.prescreen.source import Source, final_name, root_name, words_in

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
    """An accumulation (`+=`, `-=`, `x = x + v`, `.append(v)`, `.extend(v)`) inside a loop of the
    same function, that loop not running layers, the function not named like a forward pass
    (`*forward*`, `__call__`), into a name or `self.<attr>` that some assignment could have started
    as a number or a container, of a value that could carry autograd history."""
    if not source.mentions("for", "while"):
        return False
    started = _possible_statistics(source)
    if not started:
        return False
    history = source.memo("history", lambda: History(source))
    for node in source.nodes(ast.AugAssign, ast.Assign, ast.Call):
        if _accumulates(node, started, history) and _in_a_loop_that_steps(source, node):
            return True
    return False


# Expressions it never values as a number or a container: what an accumulator cannot start as.
_NOT_A_STATISTIC = (ast.Tuple, ast.Compare, ast.BoolOp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp,
                    ast.GeneratorExp, ast.Subscript, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr, ast.Starred)  # fmt: skip


def _could_start_statistic(value) -> bool:
    if value is None or isinstance(value, _NOT_A_STATISTIC):
        return False
    if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, bool)):
        return False
    return not (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not))


def _possible_statistics(source: Source) -> set[str]:
    """Names, and `self.<attr>` as ".attr", that some binding could start as a number or container."""
    found: set[str] = set()
    for node in source.nodes(ast.Assign, ast.AnnAssign):
        if not _could_start_statistic(node.value):  # type: ignore[attr-defined]
            continue
        for target in node.targets if isinstance(node, ast.Assign) else [node.target]:  # type: ignore[attr-defined]
            if isinstance(target, ast.Name):
                found.add(target.id)
            elif _is_self_attribute(target):
                found.add("." + target.attr)  # type: ignore[attr-defined]
    for item in source.nodes(ast.withitem):
        if isinstance(item.optional_vars, ast.Name):  # type: ignore[attr-defined]
            found.add(item.optional_vars.id)  # type: ignore[attr-defined]
    return found


def _in_a_loop_that_steps(source: Source, node: ast.AST) -> bool:
    """Is the innermost loop around `node` in its own function (the analysis keeps one loop stack
    per function and class) not a loop over layers, in a function not named like a forward?"""
    loop = None
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, _FUNCTIONS):
            return loop is not None and not _forward_like(ancestor.name) and not _runs_layers(loop)
        if isinstance(ancestor, ast.ClassDef):
            break
        if loop is None and isinstance(ancestor, _LOOPS):
            loop = ancestor
    return loop is not None and not _runs_layers(loop)  # at module or class level


def _forward_like(function) -> bool:
    return function is not None and ("forward" in function or function == "__call__")


def _accumulates(node: ast.AST, started: set[str], history: History) -> bool:
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        accumulator, value = node.target, node.value
    elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        value = node.value
        if not (isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add)):
            return False
        name = node.targets[0].id
        sides = [(l, r) for l, r in ((value.left, value.right), (value.right, value.left)) if isinstance(l, ast.Name) and l.id == name]
        if not sides:
            return False
        accumulator, value = sides[0]
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend"):
        if _argument_count(node) != 1:
            return False
        accumulator = node.func.value
        value = node.args[0] if node.args else node.keywords[0].value
        if isinstance(value, ast.Starred):
            value = value.value
    else:
        return False
    return _statistic_key(accumulator) in started and history.possible(value)


def _statistic_key(accumulator: ast.AST):
    if isinstance(accumulator, ast.Subscript):
        accumulator = accumulator.value
    if isinstance(accumulator, ast.Name):
        return accumulator.id
    if _is_self_attribute(accumulator):
        return "." + accumulator.attr  # type: ignore[attr-defined]
    return None


def _runs_layers(loop: ast.AST) -> bool:
    """The analysis's test for a loop over layers: its body calls the loop variable (`block(x)`,
    `self.blocks[i](x)`)."""
    if not isinstance(loop, (ast.For, ast.AsyncFor)):
        return False
    targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)}
    for statement in loop.body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Subscript):
                index = func.slice
                func = index.elts[0] if isinstance(index, ast.Tuple) and index.elts else index
            if isinstance(func, ast.Name) and func.id in targets:
                return True
    return False


# ---------------------------------------------------------------------------- ML002


def eval_without_no_grad(source: Source, options: Mapping[str, Any]) -> bool:
    """A call that could run a model inside an evaluation region: in a function named as an
    evaluation, in a function (or the module) that calls `.eval()` / `.train(False)`, or in a loop
    over validation / test data."""
    eval_scopes = {id(_scope_of(source, call)) for call in source.nodes(ast.Call) if _sets_eval_mode(call)}  # type: ignore[arg-type]
    named = any(is_evaluation_function_name(f.name) for f in source.nodes(*_FUNCTIONS))  # type: ignore[attr-defined]
    loops = any(names_evaluation_data(w) for loop in source.nodes(ast.For, ast.AsyncFor) for w in words_in(loop.iter))  # type: ignore[attr-defined]
    if not (eval_scopes or named or loops):
        return False  # no evaluation region at all
    history = source.memo("history", lambda: History(source))
    model_calls = [call for call in source.nodes(ast.Call) if history.may_run_model(call)]  # type: ignore[arg-type]
    if model_calls and id(source.tree) in eval_scopes:
        return True  # `.eval()` at module level: the region may reach any call
    for call in model_calls:
        for ancestor in source.ancestors(call):
            if isinstance(ancestor, _FUNCTIONS) and (id(ancestor) in eval_scopes or is_evaluation_function_name(ancestor.name)):
                return True
            if isinstance(ancestor, (ast.For, ast.AsyncFor)) and any(names_evaluation_data(w) for w in words_in(ancestor.iter)):
                return True
    return False


def _sets_eval_mode(call: ast.Call) -> bool:
    if not isinstance(call.func, ast.Attribute):
        return False
    count = _argument_count(call)
    return (call.func.attr == "eval" and count == 0) or (call.func.attr == "train" and count == 1)


def _scope_of(source: Source, node: ast.AST) -> ast.AST:
    """The innermost function around `node`, or the module."""
    return next((a for a in source.ancestors(node) if isinstance(a, _FUNCTIONS)), source.tree)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- ML003


def activation_not_inplace(source: Source, options: Mapping[str, Any]) -> bool:
    """`nn.Sequential` holding an in-place-capable module; or, in a `forward`, an in-place-capable
    `F.<activation>` applied to `self.<layer>(...)` directly or to the name the previous statement
    bound to it."""
    if source.mentions("Sequential") and source.mentions(*INPLACE_MODULES) and _layer_pair_in_a_sequence(source):
        return True
    if not source.mentions(*INPLACE_FUNCTIONS):
        return False
    functional = source.names_for(INPLACE_FUNCTIONS)
    layers = _attributes_holding_layers(source)
    self_rebound = any(isinstance(t, ast.Name) and t.id == "self" for n in source.nodes(ast.Assign) for t in n.targets) or any(  # type: ignore[attr-defined]
        (alias.asname or alias.name) == "self" for n in source.nodes(ast.Import, ast.ImportFrom) for alias in n.names  # type: ignore[attr-defined]
    )
    for call in source.nodes(ast.Call):
        if final_name(call.func) not in functional or not call.args:  # type: ignore[attr-defined]
            continue
        if root_name(call.func) == "self" and not self_rebound:  # type: ignore[attr-defined]
            continue  # `self.dropout(x)` is a module of this class, never torch.nn.functional's
        statement, previous, function = _statement_around(source, call)
        if function is not None and function.name == "forward" and _applies_inplace_function(statement, previous, call, layers):  # type: ignore[attr-defined]
            return True
    return False


def _statement_around(source: Source, node: ast.AST):
    """The innermost statement holding `node`, the statement before it in its block (or None),
    and the innermost function around them (or None)."""
    statement = previous = function = None
    child = node
    for ancestor in source.ancestors(node):
        if statement is None and isinstance(child, ast.stmt):
            statement = child
            for field in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, field, None)
                if isinstance(block, list):
                    index = next((i for i, s in enumerate(block) if s is child), None)
                    if index is not None:
                        previous = block[index - 1] if index > 0 else None
                        break
        if isinstance(ancestor, _FUNCTIONS):
            function = ancestor
            break
        child = ancestor
    return statement, previous, function


def _attributes_holding_layers(source: Source) -> set[str]:
    """`self.<attr>` assigned a layer that does not save its output (`self.fc = nn.Linear(...)`), or
    assigned a name (which may hold one)."""
    layer_names = source.names_for(OUTPUT_NOT_SAVED)
    found: set[str] = set()
    for node in source.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        if not (isinstance(value, ast.Name) or (isinstance(value, ast.Call) and final_name(value.func) in layer_names)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        found.update(t.attr for t in targets if _is_self_attribute(t))
    return found


def _layer_pair_in_a_sequence(source: Source) -> bool:
    """An in-place-capable module right after a layer that does not save its output, in the
    arguments of `Sequential(...)` or in a list / tuple display (`OrderedDict` pairs included)."""
    inplace, before = source.names_for(INPLACE_MODULES), source.names_for(OUTPUT_NOT_SAVED)
    sequential = source.names_for(["Sequential"])
    sequences = [node.elts for node in source.nodes(ast.List, ast.Tuple)]  # type: ignore[attr-defined]
    sequences += [node.args for node in source.nodes(ast.Call) if final_name(node.func) in sequential]  # type: ignore[attr-defined]
    for elements in sequences:
        layers = [_layer_of(element) for element in elements]
        for previous, layer in zip(layers, layers[1:]):
            if previous in before and layer in inplace:
                return True
    return False


def _layer_of(element: ast.AST):
    """The constructor name of a sequence element: `nn.ReLU()` or `("relu", nn.ReLU())` -> "ReLU"."""
    if isinstance(element, ast.Tuple) and len(element.elts) == 2:
        element = element.elts[1]
    return final_name(element.func) if isinstance(element, ast.Call) else None


def _applies_inplace_function(statement, previous, call: ast.Call, layers: set[str]) -> bool:
    """The analysis's test, loosened: `F.relu(self.bn(x))` anywhere in a simple statement, or
    `x = F.relu(h)` / `return F.relu(h)` right after `h = self.bn(x)`."""
    if isinstance(statement, ast.Assign):
        single_name = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        direct = statement.value if single_name else None
    elif isinstance(statement, (ast.Return, ast.Expr)):
        direct = statement.value
    else:
        return False
    first = call.args[0]
    if isinstance(first, ast.Call) and _self_attribute(first.func) in layers:
        return True
    return call is direct and isinstance(first, ast.Name) and _binds_layer_output(previous, first.id, layers)


def _is_self_attribute(expr: ast.AST) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self"


def _self_attribute(expr: ast.AST):
    return expr.attr if _is_self_attribute(expr) else None  # type: ignore[attr-defined]


def _binds_layer_output(statement, name: str, layers: set[str]) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
        and isinstance(statement.value, ast.Call)
        and _self_attribute(statement.value.func) in layers
    )


# ---------------------------------------------------------------------------- ML004

def retained_intermediates(source: Source, options: Mapping[str, Any]) -> bool:
    """A `forward` whose top-level statements assign calls to names in a chain at least
    `min-retained-chain` long, each call reading the name bound by an earlier one, leaving out
    names the rule certainly rejects: those bound or read more than once."""
    if not source.mentions("forward"):
        return False
    needed = options.get("min-retained-chain", 3)
    for function in source.nodes(*_FUNCTIONS):
        if function.name != "forward" or _longest_chain(function.body) < needed:  # type: ignore[attr-defined]
            continue
        if _longest_chain(function.body, _used_or_bound_twice(function)) >= needed:  # type: ignore[arg-type]
            return True
    return False


def _longest_chain(statements: list[ast.stmt], excluded: frozenset[str] = frozenset()) -> int:
    length: dict[str, int] = {}  # name -> the longest chain ending in it
    best = 0
    for statement in statements:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)):
            continue
        value, target = statement.value, statement.targets[0].id
        if target in excluded or not isinstance(value, ast.Call):
            continue
        if isinstance(value.func, ast.Attribute) and value.func.attr in VIEW_METHODS:
            continue
        earlier = [length[word] for word in set(words_in(value)) if word in length]
        length[target] = max(length.get(target, 0), 1 + max(earlier, default=0))
        best = max(best, length[target])
    return best


# Where a name is only ever read, for libcst as well: not an element of a display (which the rule
# may count as an unpacking target) and not a parameter default (which it counts as a binding).
_NOT_SURELY_READ_IN = (ast.Tuple, ast.List, ast.Set, ast.Starred, ast.arguments)


def _used_or_bound_twice(function: ast.FunctionDef) -> frozenset[str]:
    """Names the rule counts at least twice as bound, or at least twice as read, in `function`:
    a lower bound of its counts, from the bindings and reads both parsers agree on."""
    bound: Counter[str] = Counter(a.arg for a in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs])
    used: Counter[str] = Counter()
    stack: list[tuple[ast.AST, ast.AST]] = [(child, function) for child in function.body]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load) and not isinstance(parent, _NOT_SURELY_READ_IN):
                used[node.id] += 1
            elif isinstance(node.ctx, ast.Store) and _is_direct_target(node, parent):
                bound[node.id] += 1
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return frozenset(name for counts in (bound, used) for name, count in counts.items() if count >= 2)


def _is_direct_target(name: ast.Name, parent: ast.AST) -> bool:
    if isinstance(parent, ast.Assign):
        return name in parent.targets
    return isinstance(parent, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.comprehension)) and parent.target is name


# ---------------------------------------------------------------------------- ML005

_ARITHMETIC = (ast.Constant, ast.UnaryOp, ast.BinOp, ast.Starred, ast.unaryop, ast.operator, ast.Load)


def oversized_linear_after_flatten(source: Source, options: Mapping[str, Any]) -> bool:
    """A `Linear(...)` with two arguments that could fold to numbers: the rule needs both sizes."""
    if not source.mentions("Linear"):
        return False
    linear = source.names_for(["Linear"])
    calls = [call for call in source.nodes(ast.Call) if final_name(call.func) in linear]  # type: ignore[attr-defined]
    sizes = [[*call.args, *(k.value for k in call.keywords)] for call in calls]  # type: ignore[attr-defined]
    # Cheap shapes first: most layers take `config.hidden_size`, which never folds.
    sizes = [values for values in sizes if sum(1 for v in values if _could_fold(v, None)) >= 2]
    if not sizes:
        return False
    folding = _Folding(source)
    return any(sum(1 for value in values if folding.could_fold(value)) >= 2 for values in sizes)


class _Folding:
    """Could an expression fold to a number the way `analysis/constants.py` folds it: int and
    float literals, arithmetic, `int(...)`, and names whose value, given by some `name = ...`,
    `name: T = ...` or parameter default in the file, could fold itself?  (The analysis uses one
    such binding; any of them is a loosening.)"""

    def __init__(self, source: Source) -> None:
        self.bindings: dict[str, list[ast.AST]] = {}
        for node in source.nodes(ast.Assign, ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
            if len(targets) == 1 and isinstance(targets[0], ast.Name) and node.value is not None:  # type: ignore[attr-defined]
                self.bindings.setdefault(targets[0].id, []).append(node.value)  # type: ignore[attr-defined]
        for arguments in source.nodes(ast.arguments):
            positional = [*arguments.posonlyargs, *arguments.args]  # type: ignore[attr-defined]
            defaults = arguments.defaults  # type: ignore[attr-defined]
            pairs = [*zip(positional[len(positional) - len(defaults):], defaults), *zip(arguments.kwonlyargs, arguments.kw_defaults)]  # type: ignore[attr-defined]
            for argument, default in pairs:
                if default is not None:
                    self.bindings.setdefault(argument.arg, []).append(default)
        # The least set of names that fold, grown until it settles: a name defined only through
        # itself (`n = n // 2`) never folds.
        self.foldable: set[str] = set()
        for _ in range(12):
            grown = {n for n, values in self.bindings.items() if n not in self.foldable and any(map(self.could_fold, values))}
            if not grown:
                break
            self.foldable |= grown
        else:
            self.foldable = set(self.bindings)  # not settled: every bound name may fold (a loosening)

    def could_fold(self, expr: ast.AST) -> bool:
        return _could_fold(expr, self.foldable)


def _could_fold(expr: ast.AST, foldable: Optional[set[str]]) -> bool:
    """`foldable`: the names that fold; None: suppose every name does."""
    for node in ast.walk(expr):
        if isinstance(node, ast.Name):
            if foldable is not None and node.id != "int" and node.id not in foldable:
                return False
        elif isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id == "int"):
                return False
        elif isinstance(node, ast.Constant):
            if type(node.value) not in (int, float):
                return False
        elif not isinstance(node, _ARITHMETIC):
            return False
    return True


# ---------------------------------------------------------------------------- ML007


def checkpoint_misuse(source: Source, options: Mapping[str, Any]) -> bool:
    """A call of `torch.utils.checkpoint`, its `checkpoint` or its `checkpoint_sequential`."""
    if not source.mentions("utils") or not source.mentions("checkpoint", "checkpoint_sequential"):
        return False
    names = source.names_for(["checkpoint", "checkpoint_sequential"])
    return any(final_name(call.func) in names for call in source.nodes(ast.Call))  # type: ignore[attr-defined]


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
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("append", "extend") and _argument_count(node) == 1:
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
    "ML007": checkpoint_misuse,
    "ML013": host_then_device,
    "ML014": device_outputs_accumulated,
}
