"""What counts as direct evidence that a value carries autograd history, as plain rules on names.

No libcst here: the semantic model (memlint/analysis/model.py) reads libcst's tree; the project
pass's summaries (summaries.py) and the screens (memlint/prescreen/history.py) read CPython's AST
through `backpropagated_names` below.  All three ask `is_backward` / `backward_subject` what a call
means, so they agree on the evidence by construction.

Backward is only ever called on a value that carries history: `loss.backward()`,
`scaler.scale(loss).backward()`, `(loss / accum).backward()`, `accelerator.backward(loss)`,
`fabric.backward(loss)`, `model_engine.backward(loss)` (DeepSpeed), `self.manual_backward(loss)`
(Lightning), `torch.autograd.backward(loss)` and `torch.autograd.grad(loss, params)`.  Whatever the
rest of the analysis guesses about where `loss` came from (a helper in another file, a loss
function it cannot see into), that call is proof.
"""

from __future__ import annotations

import ast
from typing import Iterable, Optional

from memlint.analysis.naming import dotted
from memlint.analysis.tables import AUTOGRAD_FUNCTIONS, BACKWARD_METHODS

# `x.backward()` backpropagates the receiver; `x.backward(loss)` (accelerate, Fabric, DeepSpeed:
# the receiver is the engine) and `x.manual_backward(loss)` (Lightning) their first argument;
# `torch.autograd.grad` / `backward` their first argument, also as written without a resolution.
_WRITTEN_AUTOGRAD = frozenset({"autograd.grad", "autograd.backward", *AUTOGRAD_FUNCTIONS})
# Wrappers that hand their argument on to backward unchanged in history: `scaler.scale(loss)`.
SCALING_METHODS = frozenset({"scale"})
# Tensor methods between the value and backward that keep its history: `loss.mean().backward()`.
REDUCING_METHODS = frozenset({"mean", "sum", "float", "double", "squeeze", "contiguous", "clone", "to"})


# Methods only an nn.Module has, of those training code calls on its values: a name that gets one
# (`G.parameters()`, `G.eval()`, `G.train()`) and is also called (`G(z)`) holds a model, whatever its
# name.  (An optimizer has `state_dict`, `load_state_dict` and `zero_grad` too, but is never called.)
MODULE_METHODS = frozenset(
    {"parameters", "named_parameters", "eval", "train", "modules", "children", "state_dict", "load_state_dict", "zero_grad"}
)


# Of those, the methods only a module has: an entry of a container given one (`nets[k].parameters()`)
# holds a model.  A container may mix models with optimizers, metrics and plain functions, whose
# `state_dict`, `load_state_dict`, `zero_grad`, `train` prove nothing about the entry called.
ENTRY_MODULE_METHODS = frozenset({"parameters", "named_parameters", "modules", "children", "named_modules", "named_children"})


# Functions that run the module handed as their first argument: `nn.parallel.data_parallel(netG,
# inputs, gpus)` calls `netG` as `netG(*inputs)` would (StackGAN): evidence the name is called.
MODULE_RUNNING_FUNCTIONS = frozenset({"data_parallel"})


def is_backward(written: Optional[str], method: Optional[str], qualified: Optional[str] = None) -> bool:
    """Does the call run backward (in any form, whatever its arguments)?"""
    return method in BACKWARD_METHODS or qualified in AUTOGRAD_FUNCTIONS or written in _WRITTEN_AUTOGRAD


def backward_subject(written: Optional[str], method: Optional[str], positional: int, qualified: Optional[str] = None) -> Optional[str]:
    """Which operand of a call is backpropagated: "receiver" (`loss.backward()`), "argument"
    (`accelerator.backward(loss)`, `torch.autograd.grad(loss, ...)`), or None when the call is not
    backward.  `written` is the callee as a dotted name ("self.accelerator.backward"), `method` its
    last attribute (None for a plain name), `positional` the number of positional arguments, and
    `qualified` what the callee resolves to through the imports, when known."""
    if qualified in AUTOGRAD_FUNCTIONS or written in _WRITTEN_AUTOGRAD:
        return "argument" if positional else None
    if method == "manual_backward":
        return "argument" if positional else None
    if method == "backward":
        # A tensor's `backward(gradient)` takes a gradient of the tensor's shape (rare, and the
        # gradient is a fresh tensor: never a name the analysis could not value); an engine's
        # `backward(loss)` takes the loss.
        return "argument" if positional else "receiver"
    return None


def backpropagated_names(calls: Iterable[ast.AST], assignments: Iterable[ast.AST], *, loose: bool = False) -> frozenset[str]:
    """On CPython's AST: the names backward is called on among `calls`, and the other names of those
    `assignments` (tuple targets of a call) that bind one of them: the history fact of model.py,
    without its flow (which assignment reaches the call).  `loose` (the screens): every name in the
    backpropagated operand, and `grad(...)` / `ag.grad(...)` taken for torch.autograd's."""
    found: set[str] = set()
    for call in calls:
        func = call.func  # type: ignore[attr-defined]
        written = dotted(func)
        method = func.attr if isinstance(func, ast.Attribute) else None
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]  # type: ignore[attr-defined]
        readings = (None, _loosely_qualified(written)) if loose else (None,)
        for qualified in readings:
            if not is_backward(written, method, qualified):
                continue
            subject_of = backward_subject(written, method, len(positional), qualified)
            if subject_of is None:
                continue
            subject = func.value if subject_of == "receiver" else positional[0]
            if loose:
                found.update(n.id for n in ast.walk(subject) if isinstance(n, ast.Name))
            else:
                name = _subject_name(subject)
                if name is not None:
                    found.add(name)
    if not found:
        return frozenset()
    assignments = list(assignments)
    # `loss = raw_loss / steps` backpropagated: `raw_loss` is the same computation (model.py's `_chain`)
    for _ in range(4):
        more = {
            source
            for node in assignments
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id in found and (source := _subject_name(node.value)) is not None
        }  # fmt: skip
        if more <= found:
            break
        found |= more
    for node in assignments:
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Call):
            continue
        for target in node.targets:
            if isinstance(target, (ast.Tuple, ast.List)):
                names = [e.id for e in target.elts if isinstance(e, ast.Name)]
                if not found.isdisjoint(names):
                    found.update(names)
    return frozenset(found)


def _subject_name(expr: ast.AST) -> Optional[str]:
    """model.py's `_subject_name` on CPython's AST: `loss`, `scaler.scale(loss)`, `loss.mean()`,
    `loss / accum`, `2 * loss`, `losses["total"]` (the name `losses`)."""
    while True:
        if isinstance(expr, ast.Name):
            return expr.id
        if (
            isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Name) and isinstance(expr.slice, ast.Constant)
            and type(expr.slice.value) in (int, str)
        ):  # fmt: skip
            return expr.value.id  # `losses["total"]`, `res[0]`: an element of a name's value (model.py)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            method = expr.func.attr
            if method in SCALING_METHODS and len(expr.args) == 1 and not isinstance(expr.args[0], ast.Starred):
                expr = expr.args[0]
                continue
            if method in REDUCING_METHODS:
                expr = expr.func.value
                continue
            return None
        if isinstance(expr, ast.BinOp):
            number = (ast.Constant,)
            if isinstance(expr.op, (ast.Div, ast.Mult)) and isinstance(expr.right, number):
                expr = expr.left
                continue
            if isinstance(expr.op, ast.Div) and isinstance(expr.right, (ast.Name, ast.Attribute)):
                expr = expr.left
                continue
            if isinstance(expr.op, ast.Mult) and isinstance(expr.left, number):
                expr = expr.right
                continue
        return None


def _loosely_qualified(written: Optional[str]) -> Optional[str]:
    last = (written or "").rpartition(".")[2]
    return "torch.autograd." + last if last in ("grad", "backward") else None


def module_names(calls: Iterable[ast.AST]) -> frozenset[str]:
    """On CPython's AST: the names (and `self.<attr>`s, as "self.attr") that get one of
    MODULE_METHODS and are also called: the model fact of model.py (`SemanticModel.module_evidence`),
    file-wide as there."""
    receivers: set[str] = set()
    called: set[str] = set()
    for call in calls:
        func = call.func  # type: ignore[attr-defined]
        written = _name_or_self_attribute(func) or _entries_of(func)
        if written is not None:
            called.add(written)
        elif isinstance(func, ast.Attribute) and func.attr in MODULE_METHODS:
            receiver = _name_or_self_attribute(func.value) or (_entries_of(func.value) if func.attr in ENTRY_MODULE_METHODS else None)
            if receiver is not None:
                receivers.add(receiver)
        if _final_name(func) in MODULE_RUNNING_FUNCTIONS and call.args:  # `data_parallel(G, inputs, gpus)` runs G
            ran = _name_or_self_attribute(call.args[0])  # type: ignore[attr-defined]
            if ran is not None:
                called.add(ran)
    return frozenset(receivers & called)


def file_module_names(source) -> frozenset[str]:
    """`module_names` of a whole file, from a `memlint.prescreen.Source` (its node index), computed
    once per file: the screens (prescreen/history.py) and the project pass's summaries both read it."""
    return source.memo(  # type: ignore[no-any-return]
        "module-names", lambda: module_names(source.nodes(ast.Call)) if source.mentions(*MODULE_METHODS) else frozenset()
    )


def entries_key(held: str) -> str:
    """The key of the entries of a container held by a name or `self.<attr>` (`self.networks` ->
    "self.networks[]"), as `module_names` and `SemanticModel.module_evidence` know them: a container
    one of whose entries gets a module's method (`self.networks[key].parameters()`) and one of
    whose entries is called (`self.networks["feat_model"](x)`) holds models, as a name does."""
    return held + "[]"


def _entries_of(expr: ast.AST) -> Optional[str]:
    """`nets[k]`, `self.networks["G"]` -> the entries key of the container; None otherwise."""
    if not isinstance(expr, ast.Subscript):
        return None
    held = _name_or_self_attribute(expr.value)
    return entries_key(held) if held is not None else None


def _name_or_self_attribute(expr: ast.AST) -> Optional[str]:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == "self":
        return "self." + expr.attr
    return None


def _final_name(func: ast.AST) -> Optional[str]:
    # (prescreen.source.final_name is the same, but analysis must not import the screens' package)
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None
