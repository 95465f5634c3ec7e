"""How often a loop runs its body, and what a function is for: two facts of the semantic model
(model.py asks them; rules ask the model), each with the evidence it rests on.

**Loop scope** (`loop_scope`): what a loop iterates and so how often its own statements run.

- "fixed": a fixed small count written in the code: `range(10)` (a literal of at most
  SMALL_COUNT), a literal list or tuple (`for name in ["a", "b"]`), or either through
  `enumerate` / `zip`; or any loop that breaks unconditionally once a counter reaches such a
  count (`if count == num_examples: break`, `num_examples=2` a parameter's default: loop_bounds.py).  Code in it runs that many times per run, not once per step.
- "step": one iteration per batch: it iterates a data loader (named like one, or a name the file
  binds to a `DataLoader(...)`), through `enumerate` / `tqdm` / `iter` / `zip`; its own body calls
  backward or an optimizer's `step()` and holds no loop over a loader (also `for epoch in range(n)`:
  full-batch training, one step per epoch); or its own body runs a training or evaluation step
  (iteration.is_step_loop) and it is not an epoch loop; or it is a `while` decoding loop whose own
  statements call a method of something named like a model (`model.decode(...)`: one model step
  per generated token); or it walks a dataset's items by index (`for idx in range(len(dataset)):
  data = dataset[idx]`, dataset_walks.py) and runs a model on each, in its own statements or through
  a function that runs one (the class's `self.test()` whose body runs `self.net_g(...)`, or another
  file's, by the project pass's FileView.update_calls).
- "run": one whole run per iteration: the loop sets the run's configuration per item
  (`for opt.weights in ...`, run_loops.py), and what it calls runs once per run.
- "epoch": one iteration per pass over the data: `for epoch in range(n)`, a loop over
  `range(epochs)`, a loop that hands a loader to a call, or one that holds a step loop.
- "unknown": none of these.

**Function role** (`function_role`): "plotting" (it calls matplotlib, resolved through the file's
imports: `plt.imshow`, or draws on an axis it creates), "training" (it calls backward, directly or
through the file's helpers), "evaluation" (decorated with `torch.no_grad()` /
`torch.inference_mode()`), or None.  A function that
plots and trains is "training": the step is what runs often.

**Run once per batch** (`per_batch_function`, asked at the traversal's point): a framework's
per-batch hook (Lightning's `training_step` and evaluation hooks, the Hugging Face Trainer's
`compute_loss` in a subclass of it) or a helper the project's training or evaluation loops call on
every step (the project pass).  `in_forward_pass`: inside a function named like a forward pass
(not one that steps an optimizer itself: a training step named `forward`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Optional

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.dataset_walks import indexed_dataset
from memlint.analysis.iteration import configuration_value, hands_built_loader, is_epoch_loop, is_step_loop, iterates_batches, own_statements, runs_model, steps_itself
from memlint.analysis.loop_bounds import DefaultOf, counted_break
from memlint.analysis.naming import is_forward_name, named_like_model
from memlint.analysis.step_calls import is_optimizer_step
from memlint.analysis.walk import code_descendants, dotted_name
from memlint.pipeline.tree import code_children

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# A literal `range(n)` with n at most this is a fixed small count; a longer literal range is taken
# for a step loop if it steps.
SMALL_COUNT = tables.SMALL_COUNT
# Calls that wrap an iterable without changing how many items it yields per step.
_WRAPPERS = frozenset({"enumerate", "tqdm", "iter", "zip", "trange", "progress_bar", "track"})
_NO_GRAD = frozenset({"torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})


@dataclass(frozen=True)
class LoopScope:
    kind: str  # "fixed", "step", "run", "epoch", "unknown"
    evidence: str  # what in the code says so, for messages and tests
    count: Optional[int] = None  # for "fixed": how many iterations


def literal_count(iterable: cst.BaseExpression) -> Optional[int]:
    """How many items a literal iterable yields: `range(10)` -> 10, `range(2, 5)` -> 3,
    `["a", "b"]` -> 2, `enumerate(range(4))` -> 4; None when the code does not say."""
    kind = type(iterable)
    if kind in (cst.List, cst.Tuple, cst.Set):
        if any(type(e) is cst.StarredElement for e in iterable.elements):  # type: ignore[attr-defined]
            return None
        return len(iterable.elements)  # type: ignore[attr-defined]
    if kind is not cst.Call or type(iterable.func) is not cst.Name:  # type: ignore[attr-defined]
        return None
    name = iterable.func.value  # type: ignore[attr-defined]
    args = [a.value for a in iterable.args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
    if name == "range" and 1 <= len(args) <= 2 and all(type(a) is cst.Integer for a in args):
        values = [int(a.value, 0) for a in args]  # type: ignore[attr-defined]
        return max(0, values[-1] - (values[0] if len(values) == 2 else 0))
    if name in ("enumerate", "zip") and args:
        counts = [literal_count(a) for a in (args[:1] if name == "enumerate" else args)]
        known = [c for c in counts if c is not None]
        return min(known) if known else None
    return None


def reconfigures_run(loop: cst.CSTNode) -> bool:
    """Does the `for` loop bind an attribute of the run's configuration (`for opt.weights in ...`,
    `for self.args.seed in seeds`)?  A loop over runs (run_loops.py, the same fact on CPython's AST)."""
    return type(loop) is cst.For and type(loop.target) is cst.Attribute and configuration_value(loop.target)  # type: ignore[attr-defined]


def loop_scope(
    loop: cst.CSTNode,
    loader_names: frozenset[str],
    default_of: Optional[DefaultOf] = None,
    inside_loop: Optional[Callable[[], bool]] = None,
    around: Optional[Callable[[], Optional[cst.CSTNode]]] = None,
    runs_model_through: Optional[Callable[[cst.Call], bool]] = None,
) -> LoopScope:
    """The scope of `loop` (see the module's docstring); `loader_names` are the names the file binds
    to a data loader it builds; `default_of` resolves a name a counter is compared with (the
    enclosing function's parameter default: `num_examples=2`); `inside_loop` says whether another
    loop of the same function holds `loop` (asked only for a fixed loop that steps itself); `around`
    gives that loop (asked only for a `for` that calls a method of the model, undecided otherwise);
    `runs_model_through` says whether a call runs a function of the file or the project that runs a
    model (`self.test()` whose body runs `self.net_g(...)`; asked only for a loop over a dataset's items)."""
    if reconfigures_run(loop):
        return LoopScope("run", "sets the run's configuration per item (`for opt.weights in ...`): one whole run per item")
    fixed = _fixed_scope(loop, default_of)
    if fixed is not None:
        if inside_loop is not None and steps_itself(loop) and inside_loop():  # type: ignore[arg-type]
            # `for dataset in ["CelebA", "RaFD"]:` inside the iterations loop, each item a
            # backward and an optimizer step: the few items are steps, repeated by the loop around.
            return LoopScope("step", f"{fixed.evidence}, each a training step (it calls backward or an optimizer step), inside another loop")
        return fixed
    if type(loop) is cst.For:
        iterated = _iterated_name(loop.iter)  # type: ignore[attr-defined]
        if iterated is not None and iterated in loader_names:
            return LoopScope("step", f"iterates `{iterated}`, a DataLoader the file builds")
        if iterates_batches(loop):  # type: ignore[arg-type]
            return LoopScope("step", "iterates something named like a data loader")
    holds_step_loop = _holds_step_loop(loop, loader_names)
    if not holds_step_loop and steps_itself(loop):  # type: ignore[arg-type]
        # Before the epoch tests: `for epoch in range(n)` whose own body calls backward or steps an
        # optimizer is full-batch training (or samples its own batch), one step per iteration.
        return LoopScope("step", "calls backward or an optimizer step in its own body")
    if not holds_step_loop and not hands_built_loader(loop) and _runs_model_per_item(loop, runs_model_through):  # type: ignore[arg-type]
        # (before the epoch tests: the item it hands on, `val_data = dataset[idx]`, may be named
        # like a loader; a loader the loop builds and hands on is one, a pass per item: epoch)
        return LoopScope("step", "walks a dataset item by item and runs a model on each item")
    if is_epoch_loop(loop):  # type: ignore[arg-type]
        return LoopScope("epoch", "a loop over epochs, or one that hands a loader to a call")
    if holds_step_loop:
        return LoopScope("epoch", "holds a loop over a data loader")
    if is_step_loop(loop):  # type: ignore[arg-type]
        # (also `for i in range(epochs)` that steps itself: full-batch training, a step per epoch)
        return LoopScope("step", "runs a model, a loss, backward or an optimizer step each iteration")
    if type(loop) is cst.While and _decodes(loop):
        return LoopScope("step", "a decoding loop: calls a method of the model on every iteration")
    if type(loop) is cst.For and _decodes(loop) and around is not None and type(around()) is cst.While:
        # `while True: for candidate, score in candidates: out = model.decode(...)`: a beam step runs
        # the model once per candidate, and the `while` around it once per generated token.
        return LoopScope("step", "calls a method of the model on every item, inside a `while` loop (a beam step's candidates)")
    if type(loop) is cst.For and _mentions_epochs(loop.iter):  # type: ignore[attr-defined]
        return LoopScope("epoch", "iterates a count of epochs")
    if type(loop) is cst.For and _runs_model_in_small_loop(loop):  # type: ignore[arg-type]
        return LoopScope("step", "runs a model in a small fixed loop it holds (test-time flips or crops) each iteration")
    return LoopScope("unknown", "nothing in the code says how often")


def _runs_model_per_item(loop: cst.CSTNode, runs_model_through: Optional[Callable[[cst.Call], bool]]) -> bool:
    """`for idx in range(rank, len(dataset), world_size): data = dataset[idx]; self.feed_data(data);
    self.test()`: a walk over a dataset's items (dataset_walks.py) whose own statements run a model,
    directly (`model(x)`) or through a function that runs one: one sample per iteration."""
    if indexed_dataset(loop) is None:
        return False
    if runs_model(loop):  # type: ignore[arg-type]
        return True
    return runs_model_through is not None and any(
        type(node) is cst.Call and runs_model_through(node) for node in own_statements(loop)  # type: ignore[arg-type]
    )


def _fixed_scope(loop: cst.CSTNode, default_of: Optional[DefaultOf]) -> Optional[LoopScope]:
    """A small fixed count: a break once a counter reaches a small bound, or a literal of a few items."""
    bound = counted_break(loop, SMALL_COUNT, default_of or (lambda name: None))
    if bound is not None:
        return LoopScope("fixed", f"breaks once a counter reaches {bound}", bound)
    if type(loop) is cst.For:
        count = literal_count(loop.iter)  # type: ignore[attr-defined]
        if count is not None and count <= SMALL_COUNT:
            return LoopScope("fixed", f"iterates a literal of {count} item(s)", count)
    return None


def _runs_model_in_small_loop(loop: cst.For) -> bool:
    """`for i, data in enumerate(dataloaders): ff = ...; for i in range(2): (for scale in ms:)
    outputs = model(img)`: each iteration runs the model, in a fixed loop of a few items it holds
    (a test-time flip), as if the call were in its own body; so its own statements run once per
    batch.  Below the fixed loop, loops over anything but batches or epochs are looked into too."""
    return any(
        (count := literal_count(inner.iter)) is not None and count <= SMALL_COUNT and _runs_model_within(inner)
        for inner in _nested_fors(loop)
    )


def _runs_model_within(loop: cst.For) -> bool:
    if runs_model(loop):
        return True
    return any(not iterates_batches(inner) and not _mentions_epochs(inner.iter) and _runs_model_within(inner) for inner in _nested_fors(loop))


def _nested_fors(loop: cst.CSTNode) -> Iterator[cst.For]:
    """The `for` loops directly in `loop`'s body (not inside another loop of it, a function or a class)."""
    stack: list[cst.CSTNode] = [loop.body]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.For:
            yield node  # type: ignore[misc]
        elif kind not in (cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda):
            stack.extend(code_children(node))


def _decodes(loop: cst.CSTNode) -> bool:
    """`while True: out = model.decode(...)`: an autoregressive loop that runs the model once per
    generated token (greedy or beam decoding), so its own statements run once per model step."""
    for node in own_statements(loop):  # type: ignore[arg-type]
        if type(node) is cst.Call and type(node.func) is cst.Attribute and type(node.func.value) is cst.Name:  # type: ignore[attr-defined]
            if named_like_model(node.func.value.value):  # type: ignore[attr-defined]
                return True
    return False


def _iterated_name(iterable: cst.BaseExpression) -> Optional[str]:
    """`loader`, `enumerate(loader)`, `tqdm(loader, ...)`, `iter(loader)` -> "loader"."""
    while type(iterable) is cst.Call and type(iterable.func) in (cst.Name, cst.Attribute):  # type: ignore[attr-defined]
        func = iterable.func  # type: ignore[attr-defined]
        name = func.value if type(func) is cst.Name else func.attr.value
        if name not in _WRAPPERS or not iterable.args:  # type: ignore[attr-defined]
            return None
        iterable = iterable.args[0].value  # type: ignore[attr-defined]
    return iterable.value if type(iterable) is cst.Name else None  # type: ignore[attr-defined]


def _mentions_epochs(iterable: cst.BaseExpression) -> bool:
    """`range(epochs)`, `range(args.num_epochs)`, `range(start_epoch, n_epochs + 1)`."""
    if type(iterable) is not cst.Call or type(iterable.func) is not cst.Name or iterable.func.value not in ("range", "trange"):  # type: ignore[attr-defined]
        return False
    for arg in iterable.args:  # type: ignore[attr-defined]
        stack: list[cst.CSTNode] = [arg.value]
        while stack:
            node = stack.pop()
            if type(node) is cst.Name and "epoch" in node.value.lower():  # type: ignore[attr-defined]
                return True
            if type(node) is cst.Attribute and "epoch" in node.attr.value.lower():  # type: ignore[attr-defined]
                return True
            stack.extend(code_children(node))
    return False


def _holds_step_loop(loop: cst.CSTNode, loader_names: frozenset[str]) -> bool:
    stack: list[cst.CSTNode] = [loop.body]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if kind is cst.For and (iterates_batches(node) or _iterated_name(node.iter) in loader_names):  # type: ignore[arg-type, attr-defined]
            return True
        stack.extend(code_children(node))
    return False


def loader_names(module: cst.Module, resolve: Callable[[cst.BaseExpression], str]) -> frozenset[str]:
    """Names the file binds (anywhere) to `DataLoader(...)`, resolved as torch's through imports."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [module]
    while stack:
        node = stack.pop()
        stack.extend(code_children(node))
        if type(node) is not cst.Assign or type(node.value) is not cst.Call:  # type: ignore[attr-defined]
            continue
        if resolve(node.value.func).endswith(".DataLoader"):  # type: ignore[attr-defined]
            for target in node.targets:  # type: ignore[attr-defined]
                if type(target.target) is cst.Name:
                    found.add(target.target.value)
    return frozenset(found)


def function_role(function: cst.FunctionDef, resolve: Callable[[cst.BaseExpression], str], trains: bool) -> Optional[str]:
    """The role of `function` (see the module's docstring); `trains`: the model's backward fact for it."""
    if trains:
        return "training"
    for decorator in function.decorators:
        target = decorator.decorator
        if type(target) is cst.Call:
            target = target.func
        if resolve(target) in _NO_GRAD:
            return "evaluation"
    plots = False
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind in (cst.FunctionDef, cst.ClassDef, cst.Lambda):
            continue
        if kind is cst.Call and resolve(node.func).startswith("matplotlib."):  # type: ignore[attr-defined]
            plots = True
        stack.extend(code_children(node))
    return "plotting" if plots else None


def qualifier(imports: Mapping[str, str]) -> Callable[[cst.BaseExpression], str]:
    """`plt.imshow` -> "matplotlib.pyplot.imshow" through the file's imports ("" when not imported)."""

    def resolve(expr: cst.BaseExpression) -> str:
        written = dotted_name(expr)
        if not written:
            return ""
        root, dot, rest = written.partition(".")
        base = imports.get(root)
        return (base + dot + rest) if base is not None else ""

    return resolve


# --------------------------------------------------------------------- functions run once per batch

@dataclass(frozen=True)
class PerBatch:
    """A function a framework or the project runs once per batch (see `per_batch_function`)."""

    name: str  # the function's name (`training_step`, `compute_loss`, the project's helper)
    kind: str  # "training", "evaluation" (a framework's hooks) or "step" (the project's loops call it)
    backpropagated: bool  # the framework backpropagates what it returns (`training_step`, `compute_loss`)
    runner: Optional[str] = None  # who calls it once per batch, for messages: "Lightning", "the Trainer"


def per_batch_function(ctx: "Context") -> Optional[PerBatch]:
    """The function the traversal is in, when it runs once per batch:

    - "training": a method `training_step` (Lightning's, or a Trainer's: the framework backpropagates
      its loss), or `compute_loss` of a subclass of something imported from transformers (Hugging
      Face's Trainer calls it on every training step and backpropagates its loss);
    - "evaluation": a method `validation_step` / `test_step` / `predict_step`
      (tables.EVALUATION_STEP_HOOKS: Lightning calls it once per batch of the evaluation);
    - "step": a function the project pass saw called unconditionally on every iteration of a training
      or evaluation loop, or by such a hook (`ctx.project.per_step_of`).
    """
    function = ctx.function_node
    if function is None:
        return None
    name = function.name.value
    if ctx.class_name is not None and name == "training_step":
        return PerBatch(name, "training", True, "Lightning")
    if name == "compute_loss" and _subclasses_transformers(ctx):
        return PerBatch(name, "training", True, "the Trainer")
    if ctx.class_name is not None and name in tables.EVALUATION_STEP_HOOKS:
        # (before the project's evidence: a hook the project's loops also call is still evaluation)
        return PerBatch(name, "evaluation", False, "Lightning")
    if ctx.function_key is not None and ctx.project.per_step_of(ctx.function_key) is not None:
        return PerBatch(name, "step", False)
    return None


def graph_building_per_batch_function(ctx: "Context") -> Optional[PerBatch]:
    """The per-batch function the traversal is in (`per_batch_function`), when what it runs may build
    a graph: a training hook or a helper the project's loops call every step.  Not an evaluation
    hook: Lightning runs `validation_step` and its kin under `torch.no_grad()`."""
    found = per_batch_function(ctx)
    return found if found is not None and found.kind != "evaluation" else None


def enclosing_class(ctx: "Context") -> Optional[cst.ClassDef]:
    """The class whose body (or method) the traversal is in, if any."""
    for frame in reversed(ctx.frames):
        if frame.kind == "class":
            return frame.node  # type: ignore[return-value]
    return None


def _subclasses_transformers(ctx: "Context") -> bool:
    """Is the enclosing class a subclass of something imported from transformers (`Trainer`)?"""
    node = enclosing_class(ctx)
    return node is not None and any((ctx.resolve(base.value) or "").startswith("transformers.") for base in node.bases)


def in_forward_pass(ctx: "Context") -> bool:
    """Inside a forward function (`forward`, `_forward_impl`, `forward_features`, `__call__`:
    naming.is_forward_name): what it computes and collects is part of the model's computation, and
    the caller backpropagates through it.  Not a forward that steps an optimizer itself (MAML's
    `Meta.forward` runs the inner updates, `loss_q.backward()` and `meta_optim.step()`): that is a
    training step named `forward`, and no caller backpropagates what it collects."""
    function = ctx.function_node
    if function is None or not is_forward_name(function.name.value):
        return False
    return not ctx.memo(("steps-an-optimizer", id(function)), lambda: steps_an_optimizer(function.body))


def steps_an_optimizer(block: cst.CSTNode) -> bool:
    """Does the code below `block` (a function's body, a branch) call `<optimizer>.step()` (a receiver
    named like an optimizer)?"""
    return any(is_optimizer_step(node) for node in code_descendants(block))
