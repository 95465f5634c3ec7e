"""How a name is used elsewhere in its function: for gradients, as a tensor, as a number, or in a way
that lets it escape where the analysis cannot follow."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Callable, Collection, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.returning_helpers import hands_back_only
from memlint.analysis.walk import code_with_parents

if TYPE_CHECKING:
    from memlint.analysis.context import Context


class Use(enum.Enum):
    GRADIENT = "gradient"  # reaches backward() / autograd.grad: the graph is wanted
    TENSOR = "tensor"  # used as a tensor (a method, a torch function)
    NUMERIC = "numeric"  # printed, formatted, logged, compared, arithmetic with numbers
    HOST = "host"  # given to code that needs a Python number or host memory: numpy, JSON, plotting
    ESCAPES = "escapes"  # returned, stored on an object, passed to code we cannot see


# Calls that only read a number: printing, formatting, logging and progress bars.
_NUMERIC_FUNCTIONS = frozenset({"print", "float", "int", "round", "str", "repr", "format", "len", "bool"})
_PASS_THROUGH_FUNCTIONS = frozenset({"sum", "max", "min", "abs", "sorted"})
_LOGGING_METHODS = frozenset(
    {
        "info", "debug", "warning", "warn", "error", "critical", "log", "log_dict", "log_metrics",
        "add_scalar", "add_scalars", "set_postfix", "set_description", "write", "format", "report",
    }
)  # fmt: skip
_NUMERIC_MODULES = ("math.", "statistics.")
# Libraries that need host numbers: a CUDA tensor breaks them (`np.mean`, `plt.plot`, `json.dump`).
_HOST_MODULES = ("numpy.", "json.", "matplotlib.", "pandas.", "seaborn.", "plotly.")
_CONTAINER_METHODS = frozenset({"append", "extend", "clear", "pop", "insert", "copy", "keys", "values", "items", "get"})


def classify_uses(
    scope: cst.CSTNode,
    name: str,
    ctx: "Context",
    *,
    skip: Collection[cst.CSTNode] = (),
    is_container: bool = False,
    rebound: Optional[Callable[[str], Collection[cst.CSTNode]]] = None,
    _seen: Optional[set[str]] = None,
) -> set[Use]:
    """Uses of `name` inside `scope`, other than bindings and the statements in `skip`, and of the
    names its value flows into (`mean = total / n; mean.backward()`, `out = criterion(preds, y);
    loss = sum(out.values()); loss.backward()`).  `rebound(name)`: the statements where `name`, or a
    name the value flows into, holds another value (after `returns = torch.cat(returns).detach()`,
    up to its next binding), passed over."""
    seen = _seen if _seen is not None else set()
    seen.add(name)
    uses: set[Use] = set()
    derived: list[str] = []
    if rebound is not None:
        skip = [*skip, *rebound(name)]
    skip_ids = {id(node) for node in skip}
    local_elsewhere: dict[int, bool] = {}  # id(nested function) -> does it bind `name` itself
    for node, parents in code_with_parents(scope):
        if not (isinstance(node, cst.Name) and node.value == name):
            continue
        if any(id(p) in skip_ids for p in parents) or is_binding(node, parents):
            continue
        if any(
            type(p) is cst.FunctionDef and p is not scope and _binds(p, name, local_elsewhere) for p in parents
        ):
            continue  # another function's own variable of the same name (`fit`'s `losses` in a notebook)
        if isinstance(parents[-1], (cst.FunctionDef, cst.ClassDef, cst.Param)):
            continue
        use, target = _classify(node, parents, ctx, is_container)
        if use is not None:
            uses.add(use)
            if any(isinstance(p, (cst.Return, cst.Yield)) for p in parents):
                uses.add(Use.ESCAPES)  # `return torch.stack(losses).sum()`: also leaves the function
        if target is None:
            target = _assigned_name(parents)
        if target is not None and target not in seen:
            derived.append(target)
    for other in derived[:8]:  # follow what the name flows into (a few names, each once)
        if other not in seen and len(seen) < 24:
            uses |= {u for u in classify_uses(scope, other, ctx, rebound=rebound, _seen=seen) if u in _FOLLOWED}
    return uses


def _binds(function: cst.FunctionDef, name: str, known: dict[int, bool]) -> bool:
    """Is `name` local to `function` (a parameter, or assigned in its body)?"""
    found = known.get(id(function))
    if found is None:
        params = function.params
        found = any(p.name.value == name for p in (*params.posonly_params, *params.params, *params.kwonly_params))
        if not found:
            for node, parents in code_with_parents(function.body):
                if type(node) is cst.Name and node.value == name and is_binding(node, parents):
                    found = True
                    break
        known[id(function)] = found
    return found


def _assigned_name(parents: tuple[cst.CSTNode, ...]) -> Optional[str]:
    """The name the statement around an occurrence assigns its value to: `loss_value` in
    `loss_value = criterion(images, [preds, ...])` (None outside the value of an assignment)."""
    for index in range(len(parents) - 1, -1, -1):
        parent = parents[index]
        if isinstance(parent, (cst.Assign, cst.AugAssign, cst.AnnAssign)):
            child = parents[index + 1] if index + 1 < len(parents) else None
            if child is None or child is getattr(parent, "value", None):
                targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
                if len(targets) == 1 and isinstance(targets[0], cst.Name):
                    return targets[0].value
            return None
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement, cst.Lambda, cst.FunctionDef)):
            return None
    return None


_FOLLOWED = (Use.GRADIENT, Use.ESCAPES, Use.TENSOR, Use.HOST)


def classify_expression(scope: cst.CSTNode, expr: cst.CSTNode, ctx: "Context") -> set[Use]:
    """How the value of one expression of `scope` is used (`[model(x) for x in loader]` assigned to a
    name, stacked and backpropagated, or printed)."""
    for node, parents in code_with_parents(scope):
        if node is expr:
            use, target = _classify(node, parents, ctx, False)
            uses = {use} if use is not None else set()
            if target is not None:
                uses |= {u for u in classify_uses(scope, target, ctx) if u in _FOLLOWED}
            return uses
    return {Use.ESCAPES}


def classify_attribute_uses(
    holder: cst.CSTNode, attribute: str, ctx: "Context", *, skip: Collection[cst.CSTNode] = (), is_container: bool = False
) -> set[Use]:
    """Uses of `self.<attribute>` anywhere in `holder` (the class: `on_train_epoch_end` stacks the
    losses `training_step` appended), other than assignments to it and the statements in `skip`."""
    uses: set[Use] = set()
    derived: list[str] = []
    skip_ids = {id(node) for node in skip}
    for node, parents in code_with_parents(holder):
        if not (type(node) is cst.Attribute and node.attr.value == attribute and type(node.value) is cst.Name and node.value.value == "self"):
            continue
        if any(id(p) in skip_ids for p in parents) or _is_attribute_binding(node, parents):
            continue
        use, target = _classify(node, parents, ctx, is_container)
        if use is not None:
            uses.add(use)
        target = target or _assigned_name(parents)
        if target is not None:
            derived.append(target)
    for other in derived[:8]:
        uses |= {u for u in classify_uses(holder, other, ctx) if u in _FOLLOWED}
    return uses


def _is_attribute_binding(node: cst.Attribute, parents: tuple[cst.CSTNode, ...]) -> bool:
    parent = parents[-1]
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and getattr(parent, "target", None) is node:
        return True
    return isinstance(parent, (cst.Tuple, cst.List, cst.Element)) and any(isinstance(p, cst.AssignTarget) for p in parents[-3:])


def returns_name(function: cst.FunctionDef, name: str) -> bool:
    """Does a `return` of `function` (not of a nested one) hand out `name`, alone or in a display?"""
    for node, parents in code_with_parents(function.body):
        if type(node) is cst.Return and node.value is not None and not any(type(p) in (cst.FunctionDef, cst.Lambda) for p in parents):
            shown = [node.value, *getattr(node.value, "elements", ())]
            if any(type(e) is cst.Name and e.value == name or type(getattr(e, "value", None)) is cst.Name and e.value.value == name for e in shown):
                return True
    return False


def stored_on_self(scope: cst.CSTNode, name: str) -> frozenset[str]:
    """The attributes a statement of `scope` stores `name`'s value on, as `self.<attr> = name` (alone,
    or reduced or scaled: `self.loss = loss / n`): `compute_loss` sums the terms, and another method
    of the class reads `self.loss`."""
    found: set[str] = set()
    for node, parents in code_with_parents(scope):
        if type(node) is cst.Name and node.value == name and not is_binding(node, parents):
            attribute = _stored_attribute(node, parents)
            if attribute is not None:
                found.add(attribute)
    return frozenset(found)


def _stored_attribute(node: cst.Name, parents: tuple[cst.CSTNode, ...]) -> Optional[str]:
    """`attr` when the occurrence is (part of) the value of `self.<attr> = ...`, the assignment's one
    target; through arithmetic only, so a call in between (`self.x = f(name)`) hands on something else."""
    child: cst.CSTNode = node
    for parent in reversed(parents):
        if type(parent) is cst.Assign:
            if child is not parent.value or len(parent.targets) != 1:
                return None
            target = parent.targets[0].target
            if type(target) is cst.Attribute and type(target.value) is cst.Name and target.value.value == "self":
                return target.attr.value
            return None
        if not isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation)):
            return None
        child = parent
    return None


def classify_caller_uses(module: cst.Module, function: str, ctx: "Context") -> set[Use]:
    """What the callers in the file do with `function`'s result, through the names they bind it to
    (`losses = train(...)`, or `train_losses, val_losses = fit(...)`, in any cell of a notebook)."""
    uses: set[Use] = set()
    for node, scope in ctx.memo("assignments of calls", lambda: _call_assignments(module)).get(function, ()):
        for target in node.targets:
            names = [target.target] if type(target.target) is cst.Name else [e.value for e in getattr(target.target, "elements", ())]
            for name in names:
                if type(name) is cst.Name:
                    uses |= {u for u in classify_uses(scope, name.value, ctx) if u in _FOLLOWED}
    return uses


def _call_assignments(module: cst.Module) -> dict[str, list[tuple[cst.Assign, cst.CSTNode]]]:
    """function name -> the `x = function(...)` of the file with the function (or module) holding
    each: one walk of the file for every function classify_caller_uses asks about."""
    found: dict[str, list[tuple[cst.Assign, cst.CSTNode]]] = {}
    for node, parents in code_with_parents(module):
        if type(node) is cst.Assign and type(node.value) is cst.Call and type(node.value.func) is cst.Name:
            scope = next((p for p in reversed(parents) if type(p) is cst.FunctionDef), module)
            found.setdefault(node.value.func.value, []).append((node, scope))
    return found


def is_binding(node: cst.Name, parents: tuple[cst.CSTNode, ...]) -> bool:
    parent = parents[-1]
    if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)) and getattr(parent, "target", None) is node:
        return True
    if isinstance(parent, (cst.For, cst.CompFor)) and parent.target is node:
        return True
    return isinstance(parent, (cst.Tuple, cst.List, cst.Element)) and any(isinstance(p, cst.AssignTarget) for p in parents[-3:])


def _classify(node: cst.CSTNode, parents: tuple[cst.CSTNode, ...], ctx: "Context", is_container: bool):
    """(use, name the value flows into) for one occurrence, looking outward through its parents."""
    child = node
    element = False  # the occurrence is an element of a container accumulator: losses[-1]
    for index in range(len(parents) - 1, -1, -1):
        parent = parents[index]
        outer = parents[:index]
        if isinstance(parent, cst.Attribute) and parent.value is child:
            method = parent.attr.value
            if is_container and not element and method in _CONTAINER_METHODS:
                return None, None
            if method in tables.BACKWARD_METHODS or _reaches_backward(outer):
                return Use.GRADIENT, None
            return Use.TENSOR, None
        if isinstance(parent, cst.Subscript) and parent.value is child:
            element = True
        elif isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.BooleanOperation,
                                 cst.ComparisonTarget, cst.SubscriptElement, cst.Index, cst.Slice,
                                 cst.Element, cst.DictElement, cst.List, cst.Tuple, cst.Dict, cst.Set,
                                 cst.StarredElement, cst.FormattedStringExpression)):  # fmt: skip
            if isinstance(parent, cst.FormattedStringExpression):
                return Use.NUMERIC, None
        elif isinstance(parent, cst.Arg):
            pass
        elif isinstance(parent, cst.Call):
            if type(child) is cst.Arg and ctx.model.hands_to_backpropagating_helper(parent, child.value):
                return Use.GRADIENT, None  # a helper of the file that backpropagates what it is handed
            if type(child) is cst.Arg and hands_back_only(parent, child, outer, ctx):
                # a helper that can keep it only in what it returns: used as its result is
                child, element = parent, True
                continue
            use = _call_use(parent, outer, ctx)
            if use is not _CONTINUE:
                return use, None
        elif isinstance(parent, (cst.Return, cst.Yield)):
            return Use.ESCAPES, None
        elif isinstance(parent, cst.Assign):
            targets = [t.target for t in parent.targets]
            if len(targets) == 1 and isinstance(targets[0], cst.Name):
                return Use.NUMERIC, targets[0].value
            return Use.ESCAPES, None
        elif isinstance(parent, (cst.AugAssign, cst.AnnAssign)):
            target = parent.target
            return (Use.NUMERIC, target.value) if isinstance(target, cst.Name) else (Use.ESCAPES, None)
        elif isinstance(parent, (cst.If, cst.While, cst.IfExp, cst.Assert)):
            return Use.NUMERIC, None
        elif isinstance(parent, (cst.Expr, cst.SimpleStatementLine)):
            return Use.NUMERIC, None
        elif isinstance(parent, cst.Del):
            return None, None
        elif isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is child:
            # `for l in losses`, `[l.item() for l in losses]`: the elements' uses are the list's
            target = parent.target
            return (None, target.value) if isinstance(target, cst.Name) else (Use.ESCAPES, None)
        else:
            return Use.ESCAPES, None
        child = parent
    return Use.ESCAPES, None


_CONTINUE = object()


def _call_use(call: cst.Call, outer: tuple[cst.CSTNode, ...], ctx: "Context"):
    func = call.func
    qualified = ctx.resolve(func)
    if qualified in tables.AUTOGRAD_FUNCTIONS:
        return Use.GRADIENT
    if qualified is not None:
        if qualified == "torch.tensor" or qualified.startswith(_NUMERIC_MODULES):
            return Use.NUMERIC
        if qualified.startswith(_HOST_MODULES):
            return Use.HOST
        if qualified.startswith("torch."):
            return Use.GRADIENT if _reaches_backward(outer) else Use.TENSOR
        return Use.ESCAPES
    if isinstance(func, cst.Name) and ctx.is_builtin(func.value):
        if func.value in _NUMERIC_FUNCTIONS:
            return Use.NUMERIC
        if func.value in _PASS_THROUGH_FUNCTIONS:
            return Use.GRADIENT if _reaches_backward(outer) else _CONTINUE
    if isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in tables.BACKWARD_METHODS:  # accelerator.backward(total), self.manual_backward(total)
            return Use.GRADIENT
        if method in _LOGGING_METHODS:
            return Use.NUMERIC
    if _reaches_backward(outer):  # scaler.scale(total).backward()
        return Use.GRADIENT
    return Use.ESCAPES


def _reaches_backward(outer: tuple[cst.CSTNode, ...]) -> bool:
    """Is the expression, somewhere up its chain of calls, the receiver of backward()?"""
    for parent in reversed(outer):
        if isinstance(parent, cst.Attribute) and parent.attr.value in tables.BACKWARD_METHODS:
            return True
        if isinstance(parent, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False


def first_read_after(scope: cst.CSTNode, block: cst.CSTNode, name: str) -> Optional[cst.Name]:
    """The first read of `name` in `scope` after `block` (a loop) and outside it: where a value the
    block accumulated into `name` is first used (not a binding of `name`)."""
    passed = False
    for node, parents in code_with_parents(scope):
        if node is block:
            passed = True
        elif passed and type(node) is cst.Name and node.value == name and not any(p is block for p in parents):
            if parents and not is_binding(node, parents):
                return node
    return None
