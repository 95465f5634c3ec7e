"""ML003's screen: a necessary condition of the rule reporting, on CPython's AST (see rule.py).

`nn.Sequential` holding an in-place-capable module right after a layer that does not save its
output; or, in a method of a class, an in-place-capable `F.<activation>` applied to `self.<layer>(...)`
(or a loop variable's call, `l(x)`) or to a sum, difference or product directly, or to a name the
statement before binds or adds to in place, or that any statement of the function binds so when
the activation's statement returns or rebinds it; or an in-place-capable module held by
`self.<attr>`, called in a method on such a value.
"""

from __future__ import annotations

import ast
from typing import Any, Mapping

from memlint.analysis.tables import FRESH_OUTPUT_LAYERS, FRESH_RESULT_FUNCTIONS, FRESH_RESULT_METHODS
from memlint.analysis.tables import INPLACE_FUNCTIONS, INPLACE_MODULES, INPLACE_TWINS, OUTPUT_NOT_SAVED
from memlint.analysis.tables import NO_GRAD_FRAMEWORK_METHODS, NO_GRAD_HOOK_PREFIXES, NO_GRAD_HOOKS
from memlint.analysis.tables import LIBRARY_SUBCLASS_NAMES, NORM_CLASS_NAME, NORM_PARAMETER_NAME, RESHAPE_METHODS
from memlint.analysis.naming import dotted
from memlint.prescreen.source import FUNCTIONS, Source, final_name, is_self_attribute, root_name, self_attribute
from memlint.rule import SELECTED_BY_CODE


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    exact = "ML003" in options.get(SELECTED_BY_CODE, ())
    if source.mentions("Sequential", *LIBRARY_SUBCLASS_NAMES["Sequential"]) and source.mentions(*INPLACE_MODULES) and _layer_pair_in_a_sequence(source, exact):
        return True
    # The kinds below the Sequential's report only where in-place saves what a training step sees,
    # or under exact selection (`--select ML003`): a module activation never saves that; a
    # functional one only in a forward-only pass (`_may_run_without_grad`: a Lightning
    # `validation_step` or a Pipeline's `_forward` as well as a `no_grad` block), on a layer's
    # output, a sum or any other fresh value alike.
    held = _activation_attributes(source) if exact and source.mentions(*INPLACE_MODULES) else set()
    if not held and not source.mentions(*INPLACE_FUNCTIONS, *INPLACE_MODULES):
        return False
    functional = source.names_for(INPLACE_FUNCTIONS)
    switching: dict = {}  # id(function) -> does it call `set_grad_enabled` (one walk per function)
    layers = _attributes_holding_layers(source) | _loop_variables(source)
    # the project's helpers whose every return is a new tensor nothing keeps (`utils.batch_norm`)
    unsaved = source.project.unsaved_calls if source.project is not None else frozenset()
    if held:
        built = _attributes_built_as_layers(source)
        for call in source.nodes(ast.Call):
            if self_attribute(call.func) in held and call.args:  # type: ignore[attr-defined]
                statement, previous, function = _statement_around(source, call)
                if function is not None and _applies_inplace_function(statement, previous, call, built, function, unsaved):  # type: ignore[attr-defined]
                    return True
    self_rebound = any(isinstance(t, ast.Name) and t.id == "self" for n in source.nodes(ast.Assign) for t in n.targets) or any(  # type: ignore[attr-defined]
        (alias.asname or alias.name) == "self" for n in source.nodes(ast.Import, ast.ImportFrom) for alias in n.names  # type: ignore[attr-defined]
    )
    for call in source.nodes(ast.Call):
        func = call.func  # type: ignore[attr-defined]
        if isinstance(func, ast.Call) and final_name(func.func) in INPLACE_MODULES and call.args:  # `nn.ReLU()(1.0 - d)`
            statement, previous, function = _statement_around(source, call)
            if function is not None and (exact or _may_run_without_grad(source, call, function, switching)) \
                    and _applies_inplace_function(statement, previous, call, layers, function, unsaved):  # type: ignore[arg-type]
                return True  # (as for a function: the default set reports it only where gradients may be off)
        if isinstance(func, ast.Attribute) and func.attr in INPLACE_TWINS and not call.args:  # type: ignore[attr-defined]
            first = func.value  # `self.w_1(x).relu()`: the Tensor method runs on its receiver
        elif final_name(func) not in functional or not call.args:
            continue
        elif root_name(call.func) == "self" and not self_rebound:  # type: ignore[attr-defined]
            continue  # `self.dropout(x)` is a module of this class, never torch.nn.functional's
        else:
            first = call.args[0]  # type: ignore[attr-defined]
        statement, previous, function = _statement_around(source, call)
        if function is None or (not exact and not _may_run_without_grad(source, call, function, switching)):
            continue
        if _applies_inplace_function(statement, previous, call, layers, function, unsaved, first):  # type: ignore[arg-type]
            return True
    return False


def _may_run_without_grad(source: Source, call: ast.AST, function, switching: dict) -> bool:
    """Could `call` run with gradients off by its own function's doing (the grad modes the
    analysis gives a statement: a `with` block, a decorator, a framework's no-grad method or hook,
    `torch.set_grad_enabled(...)` as a statement)?  Outside exact selection a functional activation
    is reported only there (in a training step in place saves nothing a peak sees)."""
    for ancestor in source.ancestors(call):
        if ancestor is function:
            break
        if isinstance(ancestor, (ast.With, ast.AsyncWith)):
            return True
    name = getattr(function, "name", "")  # (the module's own code has no name nor decorators)
    if getattr(function, "decorator_list", None) or name in NO_GRAD_HOOKS or name.startswith(NO_GRAD_HOOK_PREFIXES):
        return True
    if any(name in methods for methods in NO_GRAD_FRAMEWORK_METHODS.values()):
        return True
    if id(function) not in switching:
        switching[id(function)] = any(isinstance(n, ast.Call) and final_name(n.func) == "set_grad_enabled" for n in ast.walk(function))
    return switching[id(function)]


def _activation_attributes(source: Source) -> set[str]:
    """`self.relu = nn.ReLU()`: the attributes holding an in-place-capable module that are called
    (the analysis asks more: every use of it in the class is a call in `forward` on a fresh value)."""
    inplace = source.names_for(INPLACE_MODULES)
    held = {
        t.attr  # type: ignore[attr-defined]
        for node in source.nodes(ast.Assign)
        if any(isinstance(v, ast.Call) and final_name(v.func) in inplace for v in _choices(node.value))  # type: ignore[attr-defined]
        for t in node.targets  # type: ignore[attr-defined]
        if is_self_attribute(t)
    }
    if not held:
        return held
    # The analysis counts the uses of one class's attribute (another class's `self.<attribute>` is
    # its own: analysis/attribute_owners.py); the screen asks only that it be called somewhere.
    called = {self_attribute(node.func) for node in source.nodes(ast.Call)}  # type: ignore[attr-defined]
    return held & called


def _choices(value: ast.AST) -> list:
    """`a if c else b` -> [a, b] (nested ones too: `self.act = nn.SiLU() if act else nn.Identity()`),
    else [value]."""
    if isinstance(value, ast.IfExp):
        return [*_choices(value.body), *_choices(value.orelse)]
    return [value]


def _attributes_built_as_layers(source: Source) -> set[str]:
    """`self.fc = nn.Linear(...)`: attributes assigned a call of a layer that does not save its output,
    also through a wrapper (`layer_init(nn.Linear(...))`) (the module-activation path asks for no
    more: a name may hold anything)."""
    # a module class of the file may return a fresh tensor (analysis/fresh_forwards.py)
    layer_names = source.names_for(FRESH_OUTPUT_LAYERS) | _norm_names(source) | _module_classes(source)
    return {
        t.attr  # type: ignore[attr-defined]
        for node in source.nodes(ast.Assign)
        if isinstance(node.value, ast.Call) and _layer_of(node.value) & layer_names  # type: ignore[attr-defined]
        for t in node.targets  # type: ignore[attr-defined]
        if is_self_attribute(t)
    }


def _statement_around(source: Source, node: ast.AST):
    """The innermost statement holding `node`, the statement before it in its block (or None),
    and the innermost function around them, or the module for its own code (a script's training
    loop, which the analysis reads as a function of its own)."""
    statement = previous = function = None
    child = node
    for ancestor in source.ancestors(node):
        if isinstance(ancestor, ast.Module) and function is None:
            function = ancestor
        if statement is None and isinstance(child, ast.stmt):
            statement = child
            for field in ("body", "orelse", "finalbody"):
                block = getattr(ancestor, field, None)
                if isinstance(block, list):
                    index = next((i for i, s in enumerate(block) if s is child), None)
                    if index is not None:
                        previous = block[index - 1] if index > 0 else None
                        break
        if isinstance(ancestor, FUNCTIONS):
            function = ancestor
            break
        child = ancestor
    return statement, previous, function


def _called_attribute(func: ast.AST):
    """`self.fc` -> "fc", `self.layers[i]` (`[i][j]`) -> "layers" (an element of a ModuleList), and a plain
    name `l` -> "l" (a loop variable over a ModuleList: `_loop_variables`)."""
    if isinstance(func, ast.Name):
        return func.id
    return self_attribute(_outer_list(func)) if isinstance(func, ast.Subscript) else self_attribute(func)


def _outer_list(expr: ast.AST) -> ast.AST:
    """`self.blocks[i][j]` -> `self.blocks` (an element of an element of a ModuleList)."""
    while isinstance(expr, ast.Subscript):
        expr = expr.value
    return expr


def _loop_variables(source: Source) -> set[str]:
    """Names a `for` binds to the elements of `self.<attr>` or of `zip(self.<a>, ...)`, or an
    assignment to one element, `bn = self.mlp_bns[i]` (the analysis asks more: the one binding of
    the name in the function, a ModuleList of known layers: module_lists.element_list)."""
    found: set[str] = set()
    for node in source.nodes(ast.Assign):
        value = node.value  # type: ignore[attr-defined]
        if isinstance(value, ast.Subscript) and is_self_attribute(_outer_list(value)):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))  # type: ignore[attr-defined]
    for node in source.nodes(ast.For):
        target, iterable = node.target, node.iter  # type: ignore[attr-defined]
        if isinstance(target, ast.Name) and is_self_attribute(iterable):
            found.add(target.id)
        elif isinstance(target, ast.Tuple) and isinstance(iterable, ast.Call) and final_name(iterable.func) == "zip":
            found.update(e.id for e in target.elts if isinstance(e, ast.Name))
    return found


def _attributes_holding_layers(source: Source) -> set[str]:
    """`self.<attr>` assigned a layer that does not save its output (`self.fc = nn.Linear(...)`, also
    through a wrapper: `layer_init(nn.Linear(...))`), a `ModuleList(...)` or an empty list (which may
    hold them), a name (which may hold one), or what a method of the class builds (`self.layer3 =
    self._make_layer(...)`: a stage of blocks, analysis/helper_sequentials.py); or holding one under a
    key (`self.convs["a"] = nn.Conv2d(...)`: analysis/layer_dicts.py)."""
    layer_names = source.names_for(FRESH_OUTPUT_LAYERS) | source.names_for(["ModuleList"]) | _norm_names(source) | _module_classes(source)
    found: set[str] = set()
    for node in source.nodes(ast.Assign, ast.AnnAssign):
        value = node.value  # type: ignore[attr-defined]
        built_by_method = isinstance(value, ast.Call) and is_self_attribute(value.func)
        empty_list = isinstance(value, ast.List) and not value.elts  # `self.fcs = []`, filled with layers by `.append`
        if not (isinstance(value, ast.Name) or built_by_method or empty_list or (isinstance(value, ast.Call) and _layer_of(value) & layer_names)):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]  # type: ignore[attr-defined]
        found.update(t.attr for t in targets if is_self_attribute(t))
        found.update(t.value.attr for t in targets if isinstance(t, ast.Subscript) and is_self_attribute(t.value))  # type: ignore[attr-defined]
    return found


def _super_init(call: ast.Call) -> bool:
    """`super().__init__(...)` / `super(Block, self).__init__(...)`."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and final_name(func.value.func) == "super"


def _layer_pair_in_a_sequence(source: Source, exact: bool) -> bool:
    """An in-place-capable module right after a layer that does not save its output (or a call
    wrapping one: `layer_init(nn.Conv2d(...))`), in the arguments of `Sequential(...)`, in a list /
    tuple display (`OrderedDict` pairs included), or added by consecutive `.append(...)` /
    `.add_module(name, ...)` statements."""
    # After `nn.GELU` / `nn.Softplus` (activations, not layers) the rule reports only under exact
    # selection, as rule.py's _sequence_candidates.
    inplace, before = source.names_for(INPLACE_MODULES), source.names_for(FRESH_OUTPUT_LAYERS if exact else OUTPUT_NOT_SAVED)
    before = before | _factories(source, before) | _norm_names(source)
    before = before | _module_classes(source)
    sequential = source.names_for(["Sequential"])
    sequences = [node.elts for node in source.nodes(ast.List, ast.Tuple)]  # type: ignore[attr-defined]
    sequences += [node.args for node in source.nodes(ast.Call) if final_name(node.func) in sequential]  # type: ignore[attr-defined]
    # `super().__init__(conv, norm, nn.ReLU())` in a subclass of nn.Sequential (analysis/sequential_subclasses.py)
    sequences += [node.args for node in source.nodes(ast.Call) if _super_init(node)]  # type: ignore[attr-defined]
    if source.mentions("append", "add_module", "OrderedDict"):
        sequences += _added_one_by_one(source)
        # Added in branches (`if bn: net.add_module(...)`, then `if leaky: net.add_module(...)`): the
        # analysis joins the branches; here, any such layer added and any activation added will do.
        added = [_layer_of(a) for node in source.nodes(ast.Expr) if (a := _added(node)) is not None]  # type: ignore[arg-type]
        if any(names & before for names in added) and any(names & inplace for names in added):
            return True
    # `conv2d = nn.Conv2d(...)`: what a name may hold (any assignment: a loosening); `self.bn1 =
    # nn.BatchNorm2d(64)` under "self.bn1", for a Sequential that lists `self.bn1`
    bound: dict[str, set] = {}
    for node in source.nodes(ast.Assign):
        if isinstance(node.value, ast.Call):  # type: ignore[attr-defined]
            for target in node.targets:  # type: ignore[attr-defined]
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).update(_layer_of(node.value))  # type: ignore[attr-defined]
                elif is_self_attribute(target):
                    bound.setdefault("self." + target.attr, set()).update(_layer_of(node.value))  # type: ignore[attr-defined]
    for elements in sequences:
        layers = [
            bound.get(e.id, set()) if isinstance(e, ast.Name) else bound.get("self." + e.attr, set()) if is_self_attribute(e) else _layer_of(e)  # type: ignore[attr-defined]
            for e in elements
        ]
        for previous, layer in zip(layers, layers[1:]):
            if previous & before and layer & inplace:
                return True
    return _extended_after_layer(source, inplace, before, bound)


def _extended_after_layer(source: Source, inplace: set, before: set, bound: dict) -> bool:
    """A list extended by a display that starts with an in-place-capable module (`model +=
    [nn.LeakyReLU(0.2), conv]`, `model.extend([...])`), where some display binding or extending
    the same name, or an `.append` to it, ends with such a layer (the analysis follows which one
    comes last before it: analysis/list_tails.py; here, any will do)."""
    starts: set[str] = set()
    ends: set[str] = set()
    displays: list[tuple[str, ast.AST, bool]] = []  # name, display, extends it
    for node in source.nodes(ast.AugAssign, ast.Assign):
        targets = [node.target] if isinstance(node, ast.AugAssign) else node.targets  # type: ignore[attr-defined]
        for target in targets:
            if isinstance(target, ast.Name):
                displays.append((target.id, node.value, isinstance(node, ast.AugAssign)))  # type: ignore[attr-defined]
    appended: list[tuple[str, ast.AST]] = []
    if source.mentions("extend") or any(extends and _starts_with(value, inplace) for _, value, extends in displays):
        for node in source.nodes(ast.Call):  # (asked only where a list may be extended so)
            func = node.func  # type: ignore[attr-defined]
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and isinstance(func.value, ast.Name) and node.args:  # type: ignore[attr-defined]
                if func.attr == "append":
                    appended.append((func.value.id, node.args[0]))  # type: ignore[attr-defined]
                else:
                    displays.append((func.value.id, node.args[0], True))  # type: ignore[attr-defined]
    for name, value, extends in displays:
        if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
            continue
        last = value.elts[-1]
        if (bound.get(last.id, set()) if isinstance(last, ast.Name) else _layer_of(last)) & before:
            ends.add(name)
        if extends and _starts_with(value, inplace):
            starts.add(name)
    ends.update(name for name, value in appended if _layer_of(value) & before)
    return bool(starts & ends)


def _starts_with(value: ast.AST, layers: set) -> bool:
    """Is `value` a list or tuple display whose first element builds one of `layers`?"""
    return isinstance(value, (ast.List, ast.Tuple)) and bool(value.elts) and bool(_layer_of(value.elts[0]) & layers)


def _factories(source: Source, layers: set[str]) -> set[str]:
    """Functions of the file with a `return` of such a layer (`def conv1x1(...): return
    nn.Conv2d(...)`), also through a wrapper (looser than the analysis's factories, whose every
    return builds one class)."""
    found: set[str] = set()
    for node in source.nodes(ast.Return):  # few, and indexed: no walk of every function
        if isinstance(node.value, ast.Call) and _layer_of(node.value) & layers:  # type: ignore[attr-defined]
            function = next((a for a in source.ancestors(node) if isinstance(a, FUNCTIONS)), None)
            if function is not None:
                found.add(function.name)  # type: ignore[attr-defined]
    return found


def _module_classes(source: Source) -> set[str]:
    """Classes of the file with a `forward` (looser than the analysis's classes whose `forward` returns
    a fresh tensor or the output of the layer their constructor builds: `FusedDownsample`, `EqualConv2d`),
    or on one base that is a layer whose output nothing keeps (`class Conv(nn.Conv2d)` with only an
    `__init__`: the layer's own `forward`, fresh_forwards' `_fresh_layer_subclasses`), or on one
    base `Sequential` (whose call returns its last layer's output: analysis/sequential_subclasses.py)."""
    fresh = source.names_for(FRESH_OUTPUT_LAYERS) | source.names_for(["Sequential"])
    return {
        node.name  # type: ignore[attr-defined]
        for node in source.nodes(ast.ClassDef)
        if any(isinstance(s, FUNCTIONS) and s.name == "forward" for s in node.body)  # type: ignore[attr-defined]
        or (len(node.bases) == 1 and final_name(node.bases[0]) in fresh)  # type: ignore[attr-defined]
    }


def _added_one_by_one(source: Source) -> list[list[ast.AST]]:
    """The layers of runs of consecutive `x.append(layer)` / `x.add_module(name, layer)` statements."""
    runs: list[list[ast.AST]] = []
    for node in source.nodes(*_BLOCK_OWNERS):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            run: list[ast.AST] = []
            for statement in block:
                added = _added(statement)
                if added is None and _bookkeeping(statement):
                    continue  # (`width = c` between two appends: analysis/added_layers.py's `_untouched`)
                if added is None:
                    if len(run) > 1:
                        runs.append(run)
                    run = []
                else:
                    run.append(added)
            if len(run) > 1:
                runs.append(run)
    return runs


def _bookkeeping(statement: ast.stmt) -> bool:
    """An assignment to plain names alone (or `pass`) with no call in it (looser than the rule: any
    name, the container's too)."""
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Assign):
        targets = statement.targets
    elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
        targets = [statement.target]
    else:
        return False
    return all(isinstance(t, ast.Name) for t in targets) and not any(isinstance(n, ast.Call) for n in ast.walk(statement))


_BLOCK_OWNERS = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While,
                 ast.If, ast.With, ast.AsyncWith, ast.Try, ast.ExceptHandler)  # fmt: skip


def _added(statement: ast.stmt):
    """The layer of `x.append(layer)` / `x.add_module(name, layer)` as a statement, or of `x[key] =
    layer` (an OrderedDict filled for `nn.Sequential(x)`) (looser than the rule: any receiver, any key)."""
    if (
        isinstance(statement, ast.Assign) and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Subscript) and isinstance(statement.value, ast.Call)
    ):  # fmt: skip
        return statement.value
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return None
    call = statement.value
    if not isinstance(call.func, ast.Attribute) or call.func.attr not in ("append", "add_module") or not call.args:
        return None
    return call.args[-1]


def _norm_names(source: Source) -> set[str]:
    """Called names that may stand for a norm layer (`norm_layer(c)`, `BatchNorm(planes)`,
    `SynchronizedBatchNorm2d(c)`): the words of analysis/norm_layers.py, whatever they are bound to."""
    if not any(NORM_CLASS_NAME.search(word) or NORM_PARAMETER_NAME.search(word) for word in source.identifiers):
        return set()
    # The parameter words only for the file's parameters (`ConvNorm(...)` is a class, not `norm_layer`).
    parameters = {node.arg for node in source.nodes(ast.arg) if NORM_PARAMETER_NAME.search(node.arg)}  # type: ignore[attr-defined]
    return {
        node.func.id  # type: ignore[attr-defined]
        for node in source.nodes(ast.Call)
        if isinstance(node.func, ast.Name) and (NORM_CLASS_NAME.search(node.func.id) or node.func.id in parameters)  # type: ignore[attr-defined]
    }


def _layer_of(element: ast.AST) -> set:
    """The constructor names of a sequence element: `nn.ReLU()` or `("relu", nn.ReLU())` -> {"ReLU"};
    through wrappers: `layer_init(nn.Conv2d(...))` -> {"layer_init", "Conv2d"} (any call's first
    positional argument, looser than the rule's wrappers that return their argument)."""
    if isinstance(element, ast.Tuple) and len(element.elts) == 2:
        element = element.elts[1]
    names = set()
    while isinstance(element, ast.Call):
        names.add(final_name(element.func))
        if not element.args or isinstance(element.args[0], ast.Starred):
            break
        element = element.args[0]
    return names


def _applies_inplace_function(statement, previous, call: ast.Call, layers: set[str], function, unsaved=frozenset(), first=None) -> bool:
    """The analysis's test, loosened: `F.relu(self.bn(x))` anywhere in an expression, assignment,
    augmented assignment or return, or
    `x = F.relu(h)` / `return F.relu(h)` right after `h = self.bn(x)`.  `first`: the value the
    activation runs on where it is not the call's first argument (`h.relu()`'s receiver)."""
    if isinstance(statement, ast.Assign):
        single_name = len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name)
        direct = statement.value if single_name else None
    elif isinstance(statement, (ast.Return, ast.Expr)):
        direct = statement.value
    elif isinstance(statement, ast.AugAssign):  # `log_pi -= torch.log(F.relu(1 - p))`
        direct = None
    else:
        return False
    if first is None:
        first = call.args[0]
    first = _unreshaped(first)
    if _layer_output(first, layers):
        return True
    if _fresh_result(first, unsaved):
        return True
    if isinstance(first, ast.Call) and isinstance(first.func, ast.Attribute) and first.func.attr in RESHAPE_METHODS:
        first = first.func.value  # `F.relu(x.view(n, -1))`: the value reshaped is the one asked about
    if not isinstance(first, ast.Name):
        return False
    # Bound further back, the activation's statement ending the name's life (analysis/reaching.py):
    # here, any binding of the name in the function to such a value will do.
    ends = isinstance(statement, ast.Return) or (
        isinstance(statement, ast.Assign) and any(isinstance(t, ast.Name) and t.id == first.id for t in statement.targets)
    )
    if call is direct and ends and any(
        _binds_layer_output(node, first.id, layers, unsaved) for node in ast.walk(function) if isinstance(node, ast.Assign)
    ):
        return True
    # `out += y` before: the statement before that is not looked at (a loosening); an `if` or a loop
    # before, whose branches or turns may each bind the name (analysis/producers.py): not looked at
    return (
        _binds_layer_output(previous, first.id, layers, unsaved)
        or (isinstance(previous, ast.AugAssign) and isinstance(previous.target, ast.Name) and previous.target.id == first.id)
        or isinstance(previous, (ast.If, ast.For, ast.While))
    )


def _binds_layer_output(statement, name: str, layers: set[str], unsaved=frozenset()) -> bool:
    return (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
        and (_layer_output(_unreshaped(statement.value), layers) or _fresh_result(_unreshaped(statement.value), unsaved))
    )


def _unreshaped(value: ast.AST) -> ast.AST:
    """`self.linear(x).view(n, c)` -> `self.linear(x)`: a reshape of a temporary is fresh where the
    temporary is (analysis/fresh_values.py)."""
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in RESHAPE_METHODS \
            and isinstance(value.func.value, (ast.Call, ast.BinOp, ast.Subscript)):
        value = value.func.value
    return value


def _layer_output(value: ast.AST, layers: set[str]) -> bool:
    """`self.bn(x)`, or an element of what it returns (`self.actnorm(x)[0]`: a class of the file whose
    `forward` returns a tuple with fresh elements, analysis/fresh_forwards.py; any index here)."""
    if isinstance(value, ast.Subscript):
        value = value.value
    return isinstance(value, ast.Call) and _called_attribute(value.func) in layers


def _fresh_result(value: ast.AST, unsaved=frozenset()) -> bool:
    """A sum, difference, product, quotient or matrix product, or a call named like a torch function
    whose result its backward does not read (`torch.cat`, `F.gelu`: analysis/saved.py; any receiver,
    a loosening of the analysis's resolved name), or of a project helper returning one (`unsaved`,
    as written: `FileView.unsaved_calls`)."""
    if unsaved and isinstance(value, ast.Call) and dotted(value.func) in unsaved:
        return True
    if isinstance(value, ast.BinOp):
        return isinstance(value.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult))
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr in FRESH_RESULT_METHODS:
        return True  # `h.div(s)` (any receiver, a loosening of the analysis's)
    return final_name(value.func) in FRESH_RESULT_FUNCTIONS
