"""Is a value a model's output (logits, predictions, features), still where the model left it?

Values.py answers "does it carry autograd history"; this answers "did it come out of a model, and
has it not been moved to the host or reduced to a metric since".  A rule keeps the names it has seen
bound to such values (per function) and passes them in as `known`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Collection, Optional

import libcst as cst

from memlint.analysis.evaluation import is_model_call
from memlint.analysis.project_facts import returns_history
from memlint.analysis.tables import LOSS_CONTAINER_WORDS, LOSS_NAME
from memlint.analysis.naming import name_tokens, named_like_model
from memlint.analysis.tables import GATHERING_METHODS, NON_MODEL_VERBS, TENSOR_CASTS
from memlint.analysis.values import Kind, evaluate, own_definition
from memlint.analysis.walk import code_descendants, dotted_name, self_attr

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Methods whose result stays on the receiver's device and keeps one value per sample (or more).
_KEEPS_DEVICE = frozenset(
    {
        "detach", "softmax", "log_softmax", "sigmoid", "tanh", "argmax", "argmin", "float", "half", "bfloat16",
        "double", "long", "int", "view", "reshape", "squeeze", "unsqueeze", "flatten", "clone", "contiguous",
        "permute", "transpose", "round", "exp", "abs", "logits", "to_dense",
    }
)  # fmt: skip
# torch functions that do the same to their first argument.
_TORCH_KEEPS_DEVICE = frozenset({"softmax", "log_softmax", "sigmoid", "argmax", "argmin", "squeeze", "flatten"})
# torch.nn.functional's that keep their first argument's shape (`F.normalize(feats, dim=-1)`).
_FUNCTIONAL_KEEPS_DEVICE = _TORCH_KEEPS_DEVICE | frozenset({"normalize", "relu", "gelu", "silu", "elu", "tanh"})
# Reductions that, along an axis after the batch's (`feats.mean(dim=1)`, pooling frames or tokens),
# keep one value per sample: still a per-sample output. Along no axis or the batch's they give a metric.
_AXIS_REDUCTIONS = frozenset({"mean", "sum", "amax", "amin", "logsumexp", "norm"})
# Reductions whose first positional argument after the tensor is not the axis (`norm(p, dim)`).
_P_FIRST_REDUCTIONS = frozenset({"norm"})
# torch functions that join a sequence of tensors into one on their device.
_TORCH_JOINS = frozenset({"cat", "concat", "concatenate", "stack", "hstack", "vstack"})
_NOT_OUTPUT_ATTRIBUTES = frozenset({"shape", "dtype", "device", "ndim", "requires_grad", "is_cuda", "loss"})


def model_output(expr: cst.BaseExpression, ctx: "Context", known: Collection[str] = ()) -> bool:
    """`model(x)`, `self.net(x)`, `outputs.logits`, `out[0]`, `logits.argmax(1)`, `probs.detach()`; a
    slice or a view of one (`out[:-1]`, `out.view(n, -1)`) too: it keeps the output's storage alive."""
    if isinstance(expr, cst.Name):
        # `loss, logits = model(x, labels=y)`: the loss is reduced already (one number per batch)
        return expr.value in known and "loss" not in name_tokens(expr.value)
    if isinstance(expr, cst.Subscript):
        return model_output(expr.value, ctx, known)
    if isinstance(expr, cst.Attribute):
        if ctx.resolve(expr) is not None or expr.attr.value in _NOT_OUTPUT_ATTRIBUTES:
            return False
        if self_attr(expr) is not None:
            # `self.logits`, where the caller knows it holds an output (`self_output_key`)
            return self_output_key(expr.attr.value) in known and "loss" not in name_tokens(expr.attr.value)
        return model_output(expr.value, ctx, known)
    if not isinstance(expr, cst.Call):
        return False
    func = expr.func
    project = ctx.project
    if (project.history_calls or project.history_methods) and returns_history(expr, ctx):
        # a helper (here or in another file) that returns a model's output: `infer(model, x)`
        name = func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""
        return not LOSS_NAME.match(name)  # (a loss is reduced already: one number per batch)
    qualified = ctx.resolve(func)
    if qualified is not None:
        module, _, name = qualified.rpartition(".")
        if module == "torch" and name in _TORCH_KEEPS_DEVICE and expr.args:
            return model_output(expr.args[0].value, ctx, known)
        if module == "torch.nn.functional" and name in _FUNCTIONAL_KEEPS_DEVICE and expr.args:
            return model_output(expr.args[0].value, ctx, known)
        if module == "torch" and name in _AXIS_REDUCTIONS and len(expr.args) > 1 and _per_sample_axes(expr.args[1:], name):
            return model_output(expr.args[0].value, ctx, known)
        if module == "torch" and name in _TORCH_JOINS and expr.args:
            return _joined_outputs(expr.args[0].value, ctx, known)
        return False
    if isinstance(func, cst.Attribute) and func.attr.value in _KEEPS_DEVICE:
        return model_output(func.value, ctx, known)
    if isinstance(func, cst.Attribute) and func.attr.value in _AXIS_REDUCTIONS and _per_sample_axes(expr.args, func.attr.value):
        return model_output(func.value, ctx, known)
    if isinstance(func, cst.Attribute) and func.attr.value in GATHERING_METHODS and len(expr.args) == 1:
        return model_output(expr.args[0].value, ctx, known)  # `accelerator.gather(preds)`: still on the device
    if isinstance(func, cst.Attribute) and func.attr.value == "forward" and is_model_call(expr, ctx):
        return True  # `self.forward(x)` in a module class: the class's own forward is the model's
    if own_definition(func, ctx) is not None:
        return False  # the file's own function or class, named like a model (`test_model`): not one
    return is_model_call(expr, ctx) or _model_method(expr, ctx) or _model_in_collection(expr, ctx)


def _model_in_collection(call: cst.Call, ctx: "Context") -> bool:
    """`self.networks["classifier"](feats)`: an element of a collection the file calls and gives a
    method only a module has (`self.networks[key].parameters()`: `ModelFacts.module_evidence`)."""
    func = call.func
    if type(func) is not cst.Subscript:
        return False
    held = dotted_name(func.value)  # type: ignore[attr-defined]
    if held is None or LOSS_CONTAINER_WORDS & set(name_tokens(held.rpartition(".")[2])):
        return False  # `self.criterions["ce"](logits, y)`: losses are modules too, and reduce
    return ctx.model.module_evidence(held + "[]")


def self_output_key(attribute: str) -> str:
    """How a caller of `model_output` names, among its `known` names, an attribute of `self` it knows
    holds a model output (`self.logits = self.classifier(feats)`, here or in a method it called)."""
    return f"self.{attribute}"


def self_attribute_outputs(target: cst.BaseExpression, value: cst.BaseExpression, ctx: "Context", known: Collection[str] = ()) -> list[tuple[str, bool]]:
    """(attribute, whether it is now a model output) for each `self.<attribute>` an assignment binds:
    `self.logits = self.fc(feats)`, or one element of `self.logits, self.memory = self.classifier(x)`
    (every element of a model's returned tuple is one of its outputs)."""
    if self_attr(target) is not None:
        return [(target.attr.value, model_output(value, ctx, known))]  # type: ignore[attr-defined]
    if type(target) not in (cst.Tuple, cst.List):
        return []
    whole = model_output(value, ctx, known)
    return [
        (e.value.attr.value, whole)  # type: ignore[attr-defined]
        for e in target.elements  # type: ignore[attr-defined]
        if self_attr(e.value) is not None
    ]


def _per_sample_axes(args: "Collection[cst.Arg]", reduction: str) -> bool:
    """The axis argument of a reduction (`dim=1`, `1`, `dim=(2, 3)`, `[1, 2]`) names only literal
    axes after the batch's: what is left keeps the batch axis. `dim=-1` may be the batch axis of a
    one-dimensional output (one value per batch), a name any axis: no answer, so no output.  The
    first positional argument is the axis only where the reduction takes the axis first: `norm`'s is
    the order `p` (`out.norm(2)` reduces everything), so its axis is read from `dim=` alone."""
    positional_axis = reduction not in _P_FIRST_REDUCTIONS
    axes = [a.value for a in args if (a.keyword is None and positional_axis) or (a.keyword is not None and a.keyword.value in ("dim", "axis"))]
    if len(axes) != 1:
        return False
    axis = axes[0]
    elements = [e.value for e in axis.elements] if type(axis) in (cst.Tuple, cst.List) else [axis]  # type: ignore[attr-defined]
    return bool(elements) and all(type(e) is cst.Integer and e.evaluated_value > 0 for e in elements)  # type: ignore[attr-defined]


def _joined_outputs(sequence: cst.BaseExpression, ctx: "Context", known: Collection[str]) -> bool:
    """`torch.cat([z.flatten(1) for z in zs])` with `zs` a model's outputs, `torch.stack([a, b])` of
    outputs: every element joined is an output (a join takes tensors only, so a comprehension's
    target over an output is a tensor part of it, no dict or key), and so is what is joined. A
    running concatenation (`torch.cat([feats, f])`) joins an accumulator that is no output: not one."""
    if type(sequence) in (cst.List, cst.Tuple):
        elements = sequence.elements  # type: ignore[attr-defined]
        return bool(elements) and all(
            type(e) is cst.Element and model_output(e.value, ctx, known) for e in elements
        )  # fmt: skip
    if type(sequence) not in (cst.ListComp, cst.GeneratorExp):
        return False
    clause = sequence.for_in  # type: ignore[attr-defined]
    if clause.inner_for_in is not None or clause.ifs or type(clause.target) is not cst.Name:
        return False
    if not model_output(clause.iter, ctx, known):
        return False
    return model_output(sequence.elt, ctx, {*known, clause.target.value})  # type: ignore[attr-defined]


def argument_filled_by_model(statement: cst.Expr, ctx: "Context") -> Optional[str]:
    """`model(batch)` as a statement of its own, its result dropped: what the model computes comes
    back through its one argument, a container it writes its outputs into (a model that sets
    `batch["features"]`, `batch["yhat"]` and returns nothing needed). The argument's name, when the
    call runs a model and is handed that name alone; whether the name holds a dict is the caller's
    question (a tensor argument is only the model's input)."""
    call = statement.value
    if type(call) is not cst.Call or len(call.args) != 1:  # type: ignore[attr-defined]
        return None
    arg = call.args[0]  # type: ignore[attr-defined]
    if arg.keyword is not None or arg.star or type(arg.value) is not cst.Name:
        return None
    return arg.value.value if is_model_call(call, ctx) else None  # type: ignore[arg-type]


def output_elements(loop: cst.For, ctx: "Context", known: Collection[str] = ()) -> list[str]:
    """The names a `for` binds to parts of a model output: `for out in output` (each row of a tensor is
    a view of it, each element of a returned tuple one of its outputs), `for i, out in
    enumerate(output)`. A view is the same fact as the output for what keeps memory: kept in a list,
    it holds the whole output's storage on the device (`feat = out[:-1]` as much as `out`)."""
    iterable, target = loop.iter, loop.target
    if type(iterable) is cst.Call and type(iterable.func) is cst.Name and iterable.func.value == "enumerate":
        if len(iterable.args) != 1 or iterable.args[0].keyword is not None or not ctx.is_builtin("enumerate"):
            return []
        elements = target.elements if type(target) in (cst.Tuple, cst.List) else ()  # type: ignore[attr-defined]
        if len(elements) != 2:
            return []
        iterable, target = iterable.args[0].value, elements[1].value
    if type(target) is not cst.Name or not model_output(iterable, ctx, known):
        return []
    if not _row_used_as_tensor(loop.body, target.value, ctx):  # type: ignore[attr-defined]
        return []
    return [target.value]  # type: ignore[attr-defined]


# Methods only a tensor has (not a dict of a detection model's outputs, not a string key).
_TENSOR_ONLY_METHODS = _KEEPS_DEVICE - {"logits"} | TENSOR_CASTS | {"cpu", "cuda", "numpy", "item", "tolist", "numel"}


def _row_used_as_tensor(body: cst.CSTNode, name: str, ctx: "Context") -> bool:
    """Evidence that `for name in output` iterates a tensor's rows, not a list of dicts (torchvision's
    detection models) nor a dict's string keys (a Hugging Face ModelOutput): the body indexes or slices
    `name` (with no string key) and uses it, or a part of it, as a tensor (a tensor-only method,
    a `torch.` function, arithmetic). Without both, what the loop binds is unknown: no output."""
    indexed = used = False
    for node in code_descendants(body):
        kind = type(node)
        if kind is cst.Subscript and _is_row(node, name):
            indexed = True
        elif kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in _TENSOR_ONLY_METHODS and _is_row(func.value, name):
                used = True
            elif any(_is_row(a.value, name) for a in node.args) and (ctx.resolve(func) or "").startswith("torch."):  # type: ignore[attr-defined]
                used = True
        elif kind is cst.BinaryOperation and (_is_row(node.left, name) or _is_row(node.right, name)):  # type: ignore[attr-defined]
            used = True
        if indexed and used:
            return True
    return False


def _is_row(expr: cst.BaseExpression, name: str) -> bool:
    """`name`, or `name[...]` indexed by no string (`out[-1]`, `out[:, :4]`, not `out["boxes"]`)."""
    if type(expr) is cst.Name:
        return expr.value == name  # type: ignore[attr-defined]
    if type(expr) is not cst.Subscript or type(expr.value) is not cst.Name or expr.value.value != name:  # type: ignore[attr-defined]
        return False
    return not any(
        type(e.slice) is cst.Index and type(e.slice.value) in (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)  # type: ignore[attr-defined]
        for e in expr.slice  # type: ignore[attr-defined]
    )


def _model_method(call: cst.Call, ctx: "Context") -> bool:
    """`model.encode_image(images)`, `self.backbone.extract_features(x)`, `model.decode(z=z)`: a method
    of a model given an input (positional, or a keyword handed a computed value), which returns what
    the model computes (not `model.state_dict()`, `model.to(device)`, `model.compute_loss(x)`)."""
    func = call.func
    if not isinstance(func, cst.Attribute) or not any(arg.keyword is None or _given_a_value(arg) for arg in call.args):
        return False
    method = func.attr.value
    tokens = name_tokens(method)
    if method in _NOT_OUTPUT_METHODS or LOSS_NAME.match(method) or "loss" in tokens:
        return False
    if tokens and tokens[0] in NON_MODEL_VERBS and tokens[0] != "get":
        return False
    receiver = func.value
    if ctx.resolve(receiver) is not None:
        return False
    if evaluate(receiver, ctx).kind is Kind.MODULE:
        return True
    name = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value if isinstance(receiver, cst.Attribute) else None
    return name is not None and named_like_model(name) and evaluate(receiver, ctx).kind is Kind.UNKNOWN


def _given_a_value(arg: cst.Arg) -> bool:
    """`x=batch["output"]`: a keyword argument handed a value the code computed (a name, an element,
    a call's result), as an input is; not a literal setting (`glob=True`, `pose_rep="rot6d"`)."""
    value = arg.value
    if type(value) is cst.Name:
        return value.value not in ("None", "True", "False")  # type: ignore[attr-defined]
    return type(value) in (cst.Attribute, cst.Subscript, cst.Call)


_NOT_OUTPUT_METHODS = frozenset(
    {
        "state_dict", "load_state_dict", "parameters", "named_parameters", "buffers", "named_buffers", "modules",
        "named_modules", "children", "named_children", "to", "cuda", "cpu", "eval", "train", "half", "float",
        "double", "bfloat16", "zero_grad", "requires_grad_", "register_buffer", "register_parameter",
        "register_forward_hook", "register_forward_pre_hook", "register_full_backward_hook", "get_submodule",
        "get_parameter", "get_buffer", "get_input_embeddings", "get_output_embeddings", "log", "log_dict",
    }
)  # fmt: skip
