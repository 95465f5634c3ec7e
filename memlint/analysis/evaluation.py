"""Evaluation context: code that runs a model to evaluate it rather than to train it.

Three kinds of evidence, strongest region first:
- the function's name says it evaluates (`evaluate`, `validate`, `run_test`, `predict`, `infer`,
  `inference`, `eval_epoch`, ...): the whole body is the region;
- `model.eval()` / `self.eval()` / `model.train(False)` earlier in the same function, in a block that
  encloses the call (so it certainly ran), with no `.train()` in between: the rest of that block;
- a loop over a loader whose name marks it as validation / test data (`val_loader`, `test_dl`,
  `self.val_dataloader()`, `tqdm(dev_loader)`): the loop body.

`regions(ctx, scope)` maps every call inside `scope` (a function, or the module) that is in an
evaluation region to that region.  A region that computes gradients (`.backward()`,
`torch.autograd.grad`, `torch.func.*`) is no evaluation region: saliency maps and adversarial
examples run the model in eval mode on purpose.  For a function named as an evaluation the region
is the whole function; a training function that validates afterwards keeps its validation region.  Calls inside an explicit `torch.enable_grad()` are
left out too.  Computed once per scope, on request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence, Union

import libcst as cst

from memlint.analysis import evidence, tables, values
from memlint.analysis.returned import hands_back_no_history
from memlint.analysis.local_outputs import outputs_stay_local
from memlint.analysis.naming import is_evaluation_function_name, is_sampling_function_name, method_runs_module, name_tokens, named_like_model, names_evaluation_data, never_runs_module
from memlint.analysis.delegation import KEEPS_THE_MODULE, binds, binds_in_body, self_layers_helper_runs, computes_gradients, eval_call_shape, helper_runs, helper_runs_through_methods, mode_helper_call, top_function, train_call_shape
from memlint.analysis.built_models import builds_model
from memlint.analysis.context import GradMode, grad_mode_set_by
from memlint.analysis.bindings import alternatives, bound_names, bound_targets, target_name_nodes
from memlint.analysis.call_arguments import argument_for
from memlint.analysis.inventory import PARAMETER_FREE, held_layer
from memlint.analysis.notebooks import jupyter_cells
from memlint.analysis.eval_returns import returned_in_eval_mode
from memlint.analysis.model_wrappers import module_run_by_function, wraps_model
from memlint.analysis.mode_wrappers import calls_backprop_method, wrapper_eval_call, wrapper_trains
from memlint.analysis.values import Kind
from memlint.analysis.walk import code_children, code_descendants, code_with_parents, dotted_name, module_entries_key, nested_blocks, string_key

if TYPE_CHECKING:
    from memlint.analysis.context import Context

Scope = Union[cst.FunctionDef, cst.Module]

@dataclass(frozen=True)
class Region:
    node: cst.CSTNode  # the function, the `.eval()` statement, or the loop
    kind: str  # "function-name" | "eval-call" | "module-eval" | "mode-branch" | "loader"
    description: str  # for messages: "in `evaluate`", "after `model.eval()`", "in the loop over `val_loader`"
    loop: Optional[Union[cst.For, cst.While]] = None  # the loop region, for "loader"
    block: tuple = ()  # for "eval-call": the statements of the block the `.eval()` call is in
    # for "eval-call" and "module-eval" (a module-level `.eval()` covering a function that runs
    # that global model): the code of what was put in eval mode (`model`, `self.G`, `self`)
    receiver: str = ""
    # for "mode-branch" (`if phase == TRAIN: model.train()` / `else: model.eval()`): the code of the
    # test that selects training (`phase==LoopPhase.TRAIN`); code under `if <that test>:` is training's
    training: str = ""
    # for "function-name": the code of what the function's own statements put in eval mode
    # (`lm_model` of `lm_model.eval()`): a method of one fed data runs it (`lm_model.log_prob(x)`)
    evaluated: tuple = ()
    # for "mode-branch": the calls that choose its eval branch; the finding holds only where one
    # of them runs with gradients (`Rule.report`'s `grad_calls`)
    callers: tuple = ()


def is_evaluation_loader(expr: cst.BaseExpression) -> Optional[str]:
    """The name in a loop's iterable that marks it as validation / test data, if any."""
    for node in [expr, *code_descendants(expr)]:
        name = None
        if isinstance(node, cst.Name):
            name = node.value
        elif isinstance(node, cst.Attribute):
            name = node.attr.value
        if name is None:
            continue
        if names_evaluation_data(name):
            return name
    return None


def reads_evaluation_batches(loop: cst.CSTNode) -> Optional[str]:
    """The name of the validation / test loader a loop's own statements draw a batch from by hand,
    if any: `next(iter(test_loader))`, `test_dataloader.__iter__().next()` (LearningToCompare's
    omniglot scripts, `for i in range(TEST_EPISODE)`): the loop evaluates as a loop over that
    loader would.  A nested loop's draws are its own (a training loop holding a periodic test loop
    is no evaluation loop), as are a nested function's."""
    stack: list[cst.CSTNode] = [loop.body]  # type: ignore[attr-defined]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(code_children(node))
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value == "next" and node.args:  # type: ignore[attr-defined]
            iterator = node.args[0].value  # type: ignore[attr-defined]
        elif type(func) is cst.Attribute and func.attr.value in ("next", "__next__") and not node.args:  # type: ignore[attr-defined]
            iterator = func.value
        else:
            continue
        loader = _iterated_loader(iterator)
        if loader is not None:
            found = is_evaluation_loader(loader)
            if found is not None:
                return found
    return None


def _iterated_loader(iterator: cst.BaseExpression) -> Optional[cst.BaseExpression]:
    """`X` of `iter(X)` or `X.__iter__()`, else None."""
    if type(iterator) is not cst.Call:
        return None
    func = iterator.func  # type: ignore[attr-defined]
    if type(func) is cst.Name and func.value == "iter" and len(iterator.args) == 1:  # type: ignore[attr-defined]
        return iterator.args[0].value  # type: ignore[attr-defined]
    if type(func) is cst.Attribute and func.attr.value == "__iter__" and not iterator.args:  # type: ignore[attr-defined]
        return func.value
    return None


def is_model_call(call: cst.Call, ctx: "Context") -> bool:
    """`model(x)`, `self.net(x)`, `self(x)` in a module class, `model.forward(x)`: a call that runs a
    model (not a loss function, not a constructor, not a method such as `model.generate`)."""
    # Asked by several rules about the same call; the answer depends only on the bindings in scope.
    return ctx.remember("model-call", call, lambda: _runs_model(call, ctx))  # type: ignore[return-value]


def _runs_model(call: cst.Call, ctx: "Context") -> bool:
    func = call.func
    kind = type(func)  # libcst's concrete node classes have no subclasses: as isinstance, but cheaper
    ran = module_run_by_function(call, ctx)
    if ran is not None:
        # `nn.parallel.data_parallel(netG, inputs, gpus)` runs `netG` on the inputs (StackGAN)
        return _runs_model(cst.Call(func=ran), ctx)
    if kind is cst.Attribute and func.attr.value == "forward":
        # `net.forward(x)` runs `net` as `net(x)` would: the same evidence that the receiver is a model
        receiver = func.value
        value = values.evaluate(receiver, ctx)
        if value.kind is Kind.MODULE or _is_self(receiver):
            return value.kind is Kind.MODULE
        if type(receiver) is cst.Attribute and _is_self(receiver.value) and ctx.in_module_class and value.kind in (Kind.UNKNOWN, Kind.TENSOR):
            # `self.feature.forward(x)` in an nn.Module, `self.feature = model_func()`: its submodule's
            # forward (a tensor has none, whatever the valuation guessed of a call: CloserLookFewShot)
            return True
        if value.kind is not Kind.UNKNOWN or type(receiver) not in (cst.Name, cst.Attribute) or ctx.resolve(receiver) is not None:
            return False
        name = receiver.value if type(receiver) is cst.Name else receiver.attr.value  # type: ignore[union-attr]
        return named_like_model(name) or ctx.model.module_evidence(dotted_name(receiver))
    if kind is cst.Name and func.value == "self":
        return ctx.in_module_class
    if kind is cst.Name and values.names_a_module_class(func.value, ctx):
        return False  # `Model(envs)`, `QNetwork(env)`: builds a model (a class, maybe passed in), runs nothing
    if kind is cst.Subscript:
        # `self.networks["feat_model"](x)`: an entry of a container whose entries the file calls and
        # gives a module's method (`self.networks[key].parameters()`: model.module_evidence), not a
        # slot named like a loss (`self.criterions["PerformanceLoss"](logits, y)`)
        key = string_key(func)
        if key is not None and _LOSS_KEY.search(key):
            return False
        held = dotted_name(func.value) or ""  # type: ignore[attr-defined]
        if tables.LOSS_CONTAINER_WORDS & set(name_tokens(held.rpartition(".")[2])):
            return False  # `criterions["ce"](logits, y)`: losses are modules too, and reduce
        return ctx.model.module_evidence(module_entries_key(func)) and values.evaluate(func.value, ctx).kind is not Kind.TENSOR  # type: ignore[attr-defined]
    if (kind is not cst.Name and kind is not cst.Attribute) or ctx.resolve(func) is not None:
        return False
    if kind is cst.Attribute and not _is_self(func.value) and values.evaluate(func.value, ctx).kind is Kind.MODULE:
        # `model.encoder(x)` runs a submodule; `model.modules()`, `model.fuse_model()` are methods;
        # `model._encoder(x)`, named like nothing, runs one where the model's class assigns it a
        # layer (`self._encoder = Encoder(...)`: inventory.held_layer; the VQ-VAE notebook)
        if named_like_model(func.attr.value):
            return True
        layer = held_layer(func, ctx)  # type: ignore[arg-type]
        return layer is not None and not (layer.kind or "").endswith("Loss")
    callee = values.evaluate(func, ctx)
    if callee.kind is Kind.MODULE:
        return not callee.is_loss
    if callee.kind is not Kind.UNKNOWN:
        return False
    if values.own_definition(func, ctx) is not None:
        return False  # the file's own function or class, defined further down (`test_model`)
    if kind is cst.Attribute and ctx.resolve(func.value) is not None:
        return False
    if builds_model(call, ctx):
        return False  # `model = net(pretrained=True)` then `model.eval()`: a factory named like a model
    return named_like_model(func.value if kind is cst.Name else func.attr.value) or ctx.model.module_evidence(dotted_name(func))


# A container slot keyed like a loss or a criterion holds no model, whatever its neighbours are.
_LOSS_KEY = re.compile(r"loss|criterion", re.I)


def _is_self(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "self"


# At most this many guards live at once in a block, and this many regions opened beside an open one
# (`model_1.eval()` ... `model_2.eval()`): past them a model put in eval mode gets no region of its
# own (silence), so the scan stays linear in generated code with hundreds of models.
_MAX_GUARDS = 8
_MAX_REGIONS = 16


def regions(ctx: "Context", scope: Scope) -> dict[int, list[Region]]:
    """id(call) -> its evaluation regions, innermost first, for the calls directly in `scope` (not
    nested functions): one per model put in eval mode around it, each asked whether the call runs
    that model (`model_1.eval()` then, in a block of its region, `model_2.eval(); model_2(x)`)."""
    return ctx.memo(("evaluation", id(scope)), lambda: _Scanner(ctx, scope).run())  # type: ignore[return-value]


class _Scanner:
    def __init__(self, ctx: "Context", scope: Scope) -> None:
        self.ctx = ctx
        self.scope = scope
        self.result: dict[int, list[Region]] = {}

    def run(self) -> dict[int, list[Region]]:
        scope = self.scope
        if isinstance(scope, cst.FunctionDef):
            if any(self._enables_grad(d.decorator) for d in scope.decorators):
                return {}
            # A method of an nn.Module named `predict...` / `inference...` is a building block of its
            # forward (it runs in training too): its name alone is no evidence.
            name = scope.name.value
            # (samples drawn to look at are saved or shown there: one that hands them back, with
            # their history, is a generator step whose caller decides, `fake = sample_images(G, n)`)
            # A file that puts models in eval mode has its sampling covered by those regions (the call
            # `get_sample_image(G, n)` after `G.eval()` is reported there, once): the name counts alone.
            sampling = is_sampling_function_name(name) and not self._sets_eval_mode() and hands_back_no_history(scope, self.ctx)
            named = is_evaluation_function_name(name)
            # (one that hands back nothing with history and whose outputs go nowhere else, calling
            # no other method of self, is no building block: nothing it computes reaches a backward;
            # pytorch-semseg's `tile_predict`, whose `self.forward(tile)` outputs become a numpy
            # score map: local_outputs.outputs_stay_local)
            if (named or sampling) and (not _in_module_like_class(self.ctx) or (named and hands_back_no_history(scope, self.ctx) and outputs_stay_local(scope, self.ctx))):
                if not computes_gradients(scope, self.ctx) and not _shape_check(scope, self.ctx):
                    says = "draws samples to look at" if sampling and not is_evaluation_function_name(name) else "evaluates"
                    description = f"in `{name}` (its name says it {says})"
                    region = Region(scope, "function-name", description, evaluated=self._evaluated_receivers(scope))
                    self._claim([scope.body], region)
                return self.result
            body = scope.body.body if isinstance(scope.body, cst.IndentedBlock) else ()
        else:
            body = scope.body
        self._block(body)
        if isinstance(scope, cst.FunctionDef):
            region = module_eval_region(self.ctx, scope)
            if region is not None:
                self._claim([scope.body], region)  # (regions of the function's own come first)
        return self.result

    def _sets_eval_mode(self) -> bool:
        """Does the file call `.eval()` anywhere (memoised per file)?"""
        module = self.ctx.module
        return self.ctx.memo(("sets-eval-mode", id(module)), lambda: any(
            type(n) is cst.Call and type(n.func) is cst.Attribute and n.func.attr.value == "eval" and not n.args
            for n in code_descendants(module)
        ))  # type: ignore[return-value]

    def _evaluated_receivers(self, function: cst.FunctionDef) -> tuple:
        """The code of each receiver a statement of the function's own body puts in eval mode, also
        from the body of a loop or `with` of that body (MAML-Pytorch's `evaluation()` calls
        `net.eval()` first thing in each episode), not from a branch that may not run; and what a
        project context manager of such a body puts in eval mode (`with utils.eval_mode(self.agent):`)."""
        pending = [function.body.body if isinstance(function.body, cst.IndentedBlock) else ()]
        found = []
        while pending:
            for statement in pending.pop():
                call = _eval_mode_call(statement, self.ctx, function)
                if call is not None:
                    found.append(_code(self.ctx, eval_receiver(call, statement)))
                    continue
                entered = _eval_context(statement, self.ctx)  # `with utils.eval_mode(self.agent):`
                if entered is not None:
                    found.append(entered[1])
                if type(statement) in (cst.For, cst.While, cst.With) and isinstance(statement.body, cst.IndentedBlock):  # type: ignore[attr-defined]
                    pending.append(statement.body.body)  # type: ignore[attr-defined]
        return tuple(found)

    def _block(self, statements, covered: frozenset = frozenset(), eval_only: bool = False) -> None:
        """Find the regions of a block.  `covered`: the receivers whose region already holds the
        block (a block of a statement claimed by one); `eval_only`: such a block, where only the
        `.eval()` of another model opens a region of its own (cnngeometric's `if two_stage:
        model_2.eval(); model_2(...)` inside `model_1`'s region)."""
        region: Optional[Region] = None
        pending: list[cst.CSTNode] = []
        # regions of other models opened while `region` is open, each with its own statements:
        # one region per model put in eval mode (`model_1.eval()` ... `model_2.eval()`)
        others: list[tuple[Region, list]] = []
        guards: list[_Guard] = []
        built_in_eval = False  # was the region opened by `.eval()` chained onto a construction?
        for statement in statements:
            guards = self._follow_guards(guards, statement)
            if built_in_eval and region is not None and self._evaluates_another(statement, region):
                # `lpips_net = LPIPS().eval()`, later `model.eval()`: the chained form put only its
                # own target in eval mode; `model`'s region is the one its own `.eval()` opens
                self._close(region, pending, others, covered)
                region, pending, others = None, [], []
            opening = self._opening(statement)
            if region is not None and opening is not None and opening[2] and opening[1] == region.receiver:
                # `resnet = Net(classify=True).eval()` again: a new model under the name, its own region
                self._close(region, pending, others, covered)
                region, pending, others = None, [], []
            if region is not None and opening is None and _rebinds_afresh(statement, region.receiver):
                # `net = Net(16)` after the loop that left `net` in eval mode: another model, in
                # training mode, under the name (`net = net.cuda()` reads it: the same model)
                self._close(region, pending, others, covered)
                region, pending, others = None, [], []
            if region is None:
                switch = None if eval_only else _mode_switch(statement, self.ctx, self.scope)
                # `if phase == TRAIN: gat.train()` / `else: gat.eval()` called with another phase, or
                # `for phase in ["train", "val"]:` around it
                callers = _evaluated_with_grad(self.scope, statement.test, self.ctx) if switch is not None and isinstance(self.scope, cst.FunctionDef) else None
                if callers is None and switch is not None and isinstance(self.scope, cst.FunctionDef) and _loop_selects_eval(statement, self.scope):
                    callers = ()
                if callers is not None:
                    call, training = switch  # type: ignore[misc]
                    test = self.ctx.module.code_for_node(statement.test)  # type: ignore[attr-defined]
                    description = f"after `{self.ctx.module.code_for_node(call)}` (where `{test}` is false)"
                    receiver = _code(self.ctx, eval_receiver(call, statement))
                    region = Region(statement, "mode-branch", description, block=tuple(statements), receiver=receiver, training=training, callers=callers)
                    pending = []
                    continue
                if opening is not None and opening[1] not in covered:
                    description, receiver, built_in_eval = opening
                    region = Region(statement, "eval-call", description, block=tuple(statements), receiver=receiver)
                    pending = []
                    continue
            elif _train_mode_call(statement) or self._trains_inside(statement) or _mode_helper_trains(statement, self.ctx) or wrapper_trains(statement, self.ctx):
                self._close(region, pending, others, covered)  # `model.train()` (even in a nested block) ends the region
                region, pending, others = None, [], []
                guards = []
                if _train_mode_call(statement):
                    continue
                # (a block that trains inside is scanned as any statement outside a region is: its
                # own evaluation, the mode a loop leaves its model in)
            if opening is None:
                open_receivers = {region.receiver} | {r.receiver for r, _ in others} if region is not None else set()
                # (past the cap, stay silent: each live guard is asked about every later statement)
                guard = self._guard(statement, statements, covered | open_receivers) if len(guards) < _MAX_GUARDS else None
                if guard is not None:
                    guards.append(guard)
            if region is not None:
                for _, held in others:
                    held.append(statement)
                pending.append(statement)
                if region.kind == "eval-call" and opening is not None and len(others) < _MAX_REGIONS and opening[1] not in covered | {region.receiver} | {r.receiver for r, _ in others}:
                    others.append((Region(statement, "eval-call", opening[0], block=tuple(statements), receiver=opening[1]), []))
                continue
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
                continue
            if isinstance(statement, cst.For) and not eval_only:
                loader = is_evaluation_loader(statement.iter)
                if loader is not None:
                    self._claim([statement.body], Region(statement, "loader", f"in the loop over `{loader}`", statement))
                    continue
            if isinstance(statement, (cst.For, cst.While)) and not eval_only:
                loader = reads_evaluation_batches(statement)
                if loader is not None:  # (a loop that also backpropagates is no evaluation: `_claim`)
                    self._claim([statement.body], Region(statement, "loader", f"in the loop over batches of `{loader}`", statement))
                    continue
            if isinstance(statement, cst.With) and any(self._enables_grad(item.item) for item in statement.items):
                continue
            entered = None if eval_only else _eval_context(statement, self.ctx)
            if entered is not None:
                # `with utils.eval_mode(self.agent):`: the body runs what it was handed in eval mode
                call, receiver = entered
                code = self.ctx.module.code_for_node(call)
                description = f"in `with {code}` (whose `__enter__` puts `{receiver}` in eval mode)"
                self._claim([statement.body], Region(statement, "eval-call", description, block=tuple(statement.body.body), receiver=receiver))  # type: ignore[attr-defined]
                continue
            for block in nested_blocks(statement):
                self._block(block, covered, eval_only)
            left = None if eval_only else _left_in_eval_mode(statement, self.ctx, self.scope)
            if left is not None:
                call, bound = left
                description = f"after `{self.ctx.module.code_for_node(call)}` (the mode the loop above leaves it in)"
                region = Region(statement, "eval-call", description, block=tuple(statements), receiver=_code(self.ctx, eval_receiver(call, bound)))
                pending = []
                built_in_eval = False
        if region is not None:
            self._close(region, pending, others, covered)

    def _opening(self, statement: cst.CSTNode) -> Optional[tuple[str, str, bool]]:
        """(description, receiver code, built in eval mode) of a statement that puts a model in eval
        mode: `X.eval()` (`_eval_mode_call`), or `X = helper(...)` where the helper returns a model
        it put in eval mode (eval_returns: face-alignment's `self.net = self._load_native(...)`)."""
        call = _eval_mode_call(statement, self.ctx, self.scope)
        if call is not None:
            description = f"after `{self.ctx.module.code_for_node(call)}`"
            if call.func.attr.value not in ("eval", "train"):  # type: ignore[attr-defined]
                description = f"after `{self.ctx.module.code_for_node(call)}` (which puts the models it holds in eval mode)"
            elif not any(n is call for n in code_descendants(statement)):  # `self.net_mode(train=False)`
                helper = self.ctx.module.code_for_node(statement.body[0]).strip()  # type: ignore[attr-defined]
                description = f"after `{helper}` (which calls `{self.ctx.module.code_for_node(call)}`)"
            opened = eval_receiver(call, statement)
            return description, _code(self.ctx, opened), opened is not _module_of_chain(call.func.value)  # type: ignore[attr-defined]
        returned = returned_in_eval_mode(statement, self.ctx)
        if returned is None:
            return None
        helper, target = returned
        written = f"{self.ctx.module.code_for_node(target)} = {self.ctx.module.code_for_node(helper.func)}(...)"
        return f"after `{written}` (which returns a model it put in eval mode)", _code(self.ctx, target), True

    def _close(self, region: Region, pending: list, others: list, covered: frozenset) -> None:
        """Claim the statements of `region` and of the regions opened beside it; then, where the
        region computes no gradients, look in the blocks of its statements for the `.eval()` of a
        model none of them holds (its own region: cnngeometric's `if two_stage: model_2.eval()`)."""
        self._claim(pending, region)
        for other, held in others:
            self._claim(held, other)
        if region.kind != "eval-call" or not self._without_gradient_work(pending, region):
            return
        held_receivers = covered | {region.receiver} | {r.receiver for r, _ in others}
        for statement in pending:
            if isinstance(statement, (cst.FunctionDef, cst.ClassDef, cst.SimpleStatementLine)):
                continue
            if isinstance(statement, cst.With) and any(self._enables_grad(item.item) for item in statement.items):
                continue
            for block in nested_blocks(statement):
                self._block(block, held_receivers, eval_only=True)

    def _guard(self, statement: cst.CSTNode, statements: Sequence, covered: frozenset) -> Optional["_Guard"]:
        """`if do_aff: model_aff.eval()` (no `else`, a test of names and comparisons only, the
        `.eval()` a statement of the `if` body with no `.train()` after it): the model is in eval mode
        in any later `if` of the block whose test implies that one (cnngeometric's demo, `if do_aff:
        theta = model_aff(batch)`), until a name of the test is rebound or something trains.  Not
        where the rest of the block computes gradients (what those runs give may be part of a loss)."""
        if type(statement) is not cst.If or statement.orelse is not None or not isinstance(statement.body, cst.IndentedBlock):  # type: ignore[attr-defined]
            return None
        condition = conjuncts(statement.test)  # type: ignore[attr-defined]
        if condition is None:
            return None
        body = list(statement.body.body)  # type: ignore[attr-defined]
        for position in range(len(body) - 1, -1, -1):
            if self._trains_inside(body[position]) or _train_mode_call(body[position]) or wrapper_trains(body[position], self.ctx):
                return None
            opening = self._opening(body[position])
            if opening is None:
                continue
            description, receiver, _ = opening
            if receiver in covered:
                return None
            test = self.ctx.module.code_for_node(statement.test)  # type: ignore[attr-defined]
            region = Region(statement, "eval-call", f"{description} (under `if {test}:`)", block=tuple(statements), receiver=receiver)
            rest = list(statements[list(statements).index(statement) + 1 :])
            if len(self._without_gradient_work(rest, region)) != len(rest):
                return None
            return _Guard(region, condition)
        return None

    def _follow_guards(self, guards: list, statement: cst.CSTNode) -> list:
        """Claim for each guard the bodies of the `if`s in `statement` whose test implies its
        condition; drop the guards that `statement` ends (it rebinds a name of the test, or trains)."""
        if not guards:
            return guards
        if _train_mode_call(statement) or self._trains_inside(statement) or _mode_helper_trains(statement, self.ctx) or wrapper_trains(statement, self.ctx):
            return []
        kept = []
        touched = _names_touched(statement)
        for guard in guards:
            if guard.condition.names & touched or any(binds(statement, name) for name in guard.condition.names):
                continue
            implied = [
                node.body for node in (statement, *code_descendants(statement, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)))
                if type(node) is cst.If and implies(node.test, guard.condition)  # type: ignore[attr-defined]
            ]
            if implied:
                self._claim(implied, guard.region)
            kept.append(guard)
        return kept

    def _evaluates_another(self, statement: cst.CSTNode, region: Region) -> bool:
        """Is `statement` an `.eval()` call (`_eval_mode_call`) on another receiver than the region's?"""
        call = _eval_mode_call(statement, self.ctx, self.scope)
        return call is not None and _code(self.ctx, eval_receiver(call, statement)) != region.receiver

    def _trains_inside(self, statement: cst.CSTNode) -> bool:
        if isinstance(statement, cst.SimpleStatementLine):
            return False
        return any(_is_train_call(n) for n in code_descendants(statement))

    def _claim(self, nodes: list, region: Region) -> None:
        """Mark the calls in `nodes` as in `region`, unless the region computes gradients (outside
        the training branches of a "mode-branch" region)."""
        if region.kind == "mode-branch":
            nodes = [n for node in nodes for n in _outside_training(node, region.training, self.ctx)]
        if region.kind != "function-name":
            nodes = self._without_gradient_work(nodes, region)
            if not nodes:
                return
        if region.kind == "mode-branch" and any(_hands_model_away(n, region.receiver, self.ctx) for n in nodes):
            return  # (`ODFA(model, inputs)`: code of another file may take gradients through it)
        stack = list(nodes)
        while stack:
            current = stack.pop()
            if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
                continue
            if region.kind == "mode-branch" and type(current) is cst.If and _trains_only(current.test, region.training, self.ctx):
                stack.extend(_branches_after(current))  # (the training branch is not evaluation)
                continue
            if isinstance(current, cst.With) and any(self._enables_grad(item.item) for item in current.items):
                continue
            if isinstance(current, cst.Call):
                held = self.result.setdefault(id(current), [])
                if all(r is not region for r in held):
                    held.append(region)
            stack.extend(code_children(current))

    def _without_gradient_work(self, nodes: list, region: Region) -> list:
        """`nodes` where none computes gradients, else []: a region that does is no evaluation.  In
        a Jupyter notebook's own code, a cell that computes gradients (robustness's `model(im, label,
        make_adv=True)`, a PGD attack) leaves the region's other cells evaluation (`pred, _ =
        model(im_adv)` two cells on), except a statement of an earlier cell binding a name such a
        cell reads: its forward may be what that cell differentiates (`scores = model(x)`, then
        `scores[0, c].backward()` in the next cell)."""
        module = self.ctx.module
        cells = self.ctx.memo(("jupyter-cells", id(module)), lambda: jupyter_cells(module)) if self.scope is module else {}
        if not cells:
            if any(self._computes_gradients(n) for n in nodes) or self._hands_outputs_to_backward(nodes, region):
                return []
            return nodes
        gradient_nodes = [n for n in nodes if computes_gradients(n, self.ctx)]
        attacking = {cells.get(id(n)) for n in gradient_nodes}
        if None in attacking:
            return []
        if not attacking:
            return nodes
        last = max(attacking)  # type: ignore[type-var]
        stored = {id(name) for n in gradient_nodes for target, _ in bound_targets(n) for name in target_name_nodes(target)}
        read = {inner.value for n in gradient_nodes for inner in (n, *code_descendants(n)) if type(inner) is cst.Name and id(inner) not in stored}  # type: ignore[attr-defined]
        return [
            n for n in nodes
            if cells.get(id(n)) not in attacking and not ((cells.get(id(n)) or 0) < last and bound_names(n) & read)
        ]

    def _computes_gradients(self, node: cst.CSTNode) -> bool:
        """`computes_gradients`, once per statement (a statement is asked again for each region holding it)."""
        return self.ctx.memo(("computes-gradients", id(node)), lambda: computes_gradients(node, self.ctx))  # type: ignore[return-value]

    def _hands_outputs_to_backward(self, nodes: list, region: Region) -> bool:
        """Does a statement of `nodes` hand what the region computed from its model (a name the
        region's `=` binds to a value that runs the model, or that reads such a name) to one of the
        file's functions that runs backward on what that parameter holds (`loss =
        F.mse_loss(features(fake), features(hr))`, then `step(optimizer, loss)`; `soft =
        self.teacher(x)`, then `self.step(x, soft)`)?  The outputs are then part of the objective:
        backward comes, through the helper."""
        model = self.ctx.model
        if not model.backpropagates_anywhere():
            return False
        outputs: set[str] = set()
        for node in nodes:
            for inner in (node, *code_descendants(node)):  # (source order: a name before its readers)
                if type(inner) is cst.Assign and _carries_run(inner.value, outputs, region, self.ctx):  # type: ignore[attr-defined]
                    outputs.update(_assigned_names(inner))  # type: ignore[arg-type]
        if not outputs:
            return False
        return any(
            type(arg.value) is cst.Name and arg.value.value in outputs and model.hands_to_backpropagating_helper(inner, arg.value)  # type: ignore[attr-defined, arg-type]
            for node in nodes
            for inner in code_descendants(node)
            if type(inner) is cst.Call
            for arg in inner.args  # type: ignore[attr-defined]
        )

    def _enables_grad(self, expr: cst.BaseExpression) -> bool:
        target = expr.func if isinstance(expr, cst.Call) else expr
        qualified = self.ctx.resolve(target)
        if qualified in tables.ENABLE_GRAD_CONTEXTS:
            return True
        if qualified in tables.SET_GRAD_ENABLED and isinstance(expr, cst.Call):
            return not (expr.args and isinstance(expr.args[0].value, cst.Name) and expr.args[0].value.value == "False")
        return False


@dataclass(frozen=True)
class Condition:
    """The test of an `if` as the conjuncts it asserts (their code) and the names it reads."""
    codes: frozenset
    names: frozenset


@dataclass(frozen=True)
class _Guard:
    region: Region  # the `.eval()` under `if <condition>:`
    condition: Condition


def conjuncts(test: cst.BaseExpression) -> Optional[Condition]:
    """`do_aff and mode == Mode.TPS` -> its conjuncts, where each reads only names, attributes of
    names and literals (`not x`, comparisons of those): no call, no subscript, so the same code
    gives the same value for as long as its names are not rebound.  None otherwise."""
    parts: list[cst.BaseExpression] = []
    pending = [test]
    while pending:
        current = pending.pop()
        if type(current) is cst.BooleanOperation and type(current.operator) is cst.And:  # type: ignore[attr-defined]
            pending += [current.left, current.right]  # type: ignore[attr-defined]
        else:
            parts.append(current)
    names: set[str] = set()
    for part in parts:
        if not _plain_test(part, names):
            return None
    return Condition(frozenset("".join(cst.Module([]).code_for_node(p).split()) for p in parts), frozenset(names))


def _plain_test(expr: cst.BaseExpression, names: set) -> bool:
    kind = type(expr)
    if kind is cst.Name:
        names.add(expr.value)  # type: ignore[attr-defined]
        return True
    if kind is cst.Attribute:
        return _plain_test(expr.value, names)  # type: ignore[attr-defined]
    if kind in (cst.Integer, cst.Float, cst.SimpleString):
        return True
    if kind is cst.UnaryOperation and type(expr.operator) is cst.Not:  # type: ignore[attr-defined]
        return _plain_test(expr.expression, names)  # type: ignore[attr-defined]
    if kind is cst.Comparison:
        return _plain_test(expr.left, names) and all(_plain_test(c.comparator, names) for c in expr.comparisons)  # type: ignore[attr-defined]
    return False


def _rebinds_afresh(statement: cst.CSTNode, receiver: str) -> bool:
    """Is `statement` `receiver = <value not reading receiver>` (a plain name rebound to another object)?"""
    if type(statement) is not cst.SimpleStatementLine or not receiver.isidentifier():
        return False
    for small in statement.body:  # type: ignore[attr-defined]
        if type(small) is cst.Assign and any(type(t.target) is cst.Name and t.target.value == receiver for t in small.targets):  # type: ignore[attr-defined]
            value = small.value  # type: ignore[attr-defined]
            return not any(type(n) is cst.Name and n.value == receiver for n in (value, *code_descendants(value)))  # type: ignore[attr-defined]
    return False


def _names_touched(statement: cst.CSTNode) -> frozenset[str]:
    """The names whose state `statement` may change without rebinding them: a method called on one
    (`state.reset()`), or an attribute or item of one written (`state.ready = False`).  A guard whose
    test reads such a name may no longer hold after it."""
    touched: set[str] = set()
    for node in (statement, *code_descendants(statement, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda))):
        kind = type(node)
        if kind is cst.Call and type(node.func) is cst.Attribute:  # type: ignore[attr-defined]
            root = _root_name(node.func.value)  # type: ignore[attr-defined]
        elif kind in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.Del) and type(node.target) in (cst.Attribute, cst.Subscript):  # type: ignore[attr-defined]
            root = _root_name(node.target)  # type: ignore[attr-defined]
        else:
            continue
        if root is not None:
            touched.add(root)
    return frozenset(touched)


def _root_name(expr: cst.BaseExpression) -> Optional[str]:
    """`state` of `state.flags.ready` / `state[0]` / `state.get().x`; None for another root."""
    while type(expr) in (cst.Attribute, cst.Subscript, cst.Call):
        expr = expr.func if type(expr) is cst.Call else expr.value  # type: ignore[attr-defined]
    return expr.value if type(expr) is cst.Name else None  # type: ignore[attr-defined]


def implies(test: cst.BaseExpression, condition: Condition) -> bool:
    """Does `test` assert every conjunct of `condition` (`do_aff and do_tps` implies `do_aff`)?"""
    found = conjuncts(test)
    return found is not None and condition.codes <= found.codes


def _carries_run(value: cst.BaseExpression, outputs: set, region: Region, ctx: "Context") -> bool:
    """Does `value` run the region's model (`runs_evaluated_model`) or read a name in `outputs`?"""
    for inner in (value, *code_descendants(value)):
        if type(inner) is cst.Name and inner.value in outputs:  # type: ignore[attr-defined]
            return True
        if type(inner) is not cst.Call:
            continue
        # (a region with a receiver asks for that model; a loop over evaluation data, for any model)
        named = region.kind in ("eval-call", "module-eval", "mode-branch")
        if (named or is_model_call(inner, ctx)) and runs_evaluated_model(inner, region, ctx):  # type: ignore[arg-type]
            return True
    return False


def _assigned_names(assign: cst.Assign) -> list[str]:
    """The plain names an `=` binds (`loss = ...`, `soft, _ = ...`), not `self.x[i] = ...`."""
    found = []
    for target in assign.targets:
        inner = target.target
        elements = [e.value for e in inner.elements] if type(inner) in (cst.Tuple, cst.List) else [inner]  # type: ignore[attr-defined]
        found.extend(e.value for e in elements if type(e) is cst.Name)  # type: ignore[attr-defined]
    return found


def _eval_context(statement: cst.CSTNode, ctx: "Context") -> Optional[tuple[cst.Call, str]]:
    """(the call, the code of what it puts in eval mode) for `with X(model):` where X is a class of
    the project whose `__enter__` puts models in eval mode (the project pass's `eval_contexts`:
    pytorch_sac's `utils.eval_mode`, whose `__enter__` calls `model.train(False)` for each model it
    was built with), handed one model; else None."""
    known = ctx.project.eval_contexts
    if not known or type(statement) is not cst.With or not isinstance(statement.body, cst.IndentedBlock):  # type: ignore[attr-defined]
        return None
    for item in statement.items:  # type: ignore[attr-defined]
        call = item.item
        if type(call) is not cst.Call or dotted_name(call.func) not in known:
            continue
        arguments = [a for a in call.args if a.keyword is None and not a.star]  # type: ignore[attr-defined]
        if len(arguments) == 1 and len(call.args) == 1 and type(arguments[0].value) in (cst.Name, cst.Attribute):  # type: ignore[attr-defined]
            return call, _code(ctx, arguments[0].value)  # type: ignore[return-value]
    return None


def module_eval_region(ctx: "Context", function: cst.FunctionDef) -> Optional[Region]:
    """A module-level `model.eval()` and a module-level function of the file that runs that global
    model (SSD's `detect.py`: the model loaded and put in eval mode at import, `detect()` runs it):
    the whole function is in the region of that `.eval()`, when nothing can have put the model back
    in training mode or replaced it by the time the function runs: the `.eval()` is a statement of
    the module's own (not behind an `if`), the function binds no local of that name, calls no
    `.train()`, is not called by the module before the `.eval()` nor handed to other code as a
    value (captum's attribution takes gradients through it); nothing in the file calls
    `model.train()` or rebinds `model` after the `.eval()` (no `global model` anywhere)."""
    found = ctx.memo(_MODULE_EVALS, lambda: _module_evals(ctx))
    if not found or function not in ctx.module.body:
        return None
    if function.name.value in ctx.memo(_HANDED_ON, lambda: _handed_on(ctx.module)):  # type: ignore[operator]
        return None  # handed to other code (captum's `LayerIntegratedGradients(forward_func, ...)` takes gradients through it)
    for statement, receiver, position in found:  # type: ignore[attr-defined]
        if _runs_global(function, receiver) and not _called_before(ctx.module, function.name.value, position):
            code = ctx.module.code_for_node(statement.body[0]).strip()  # type: ignore[attr-defined]
            # (the function is the region's node: reported once per function, apart from the
            # module's own calls after the `.eval()`, which are that statement's region)
            return Region(function, "module-eval", f"after `{code}` at module level", block=tuple(function.body.body) if isinstance(function.body, cst.IndentedBlock) else (), receiver=receiver)
    return None


_MODULE_EVALS = "evaluation.module-evals"
_HANDED_ON = "evaluation.handed-on"


def _handed_on(module: cst.Module) -> frozenset[str]:
    """Names of the module's functions that the file uses as values (an argument, a binding, an
    element), not only calls: who calls them then, and with which grad mode, the file does not say."""
    functions = {s.name.value for s in module.body if type(s) is cst.FunctionDef}  # type: ignore[attr-defined]
    found = set()
    for node, parents in code_with_parents(module, nearest=1):
        if type(node) is not cst.Name or node.value not in functions:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if type(parent) is cst.Call and parent.func is node:  # type: ignore[attr-defined]
            continue
        if type(parent) is cst.FunctionDef and parent.name is node:  # type: ignore[attr-defined]
            continue
        if type(parent) is cst.Attribute and parent.attr is node:  # type: ignore[attr-defined]
            continue
        found.add(node.value)  # type: ignore[attr-defined]
    return frozenset(found)


def _module_evals(ctx: "Context") -> list[tuple[cst.SimpleStatementLine, str, int]]:
    """The module's own `X.eval()` statements on a plain name X that nothing in the file puts back
    in training mode or rebinds afterwards: (statement, "X", its index in the module's body)."""
    module = ctx.module
    if not _module_statement_mentions_eval(ctx):
        return []  # (most files: no module-level `.eval()` at all)
    found = []
    for position, statement in enumerate(module.body):
        call = eval_call_shape(statement)
        receiver = eval_receiver(call, statement) if call is not None else None
        if type(receiver) is not cst.Name:
            continue
        name = receiver.value  # type: ignore[union-attr]
        # A model by evidence (named like one, or called and given a module's method in the file),
        # not by the valuation at whichever point of the file asks first.
        if not (tables.MODEL_NAME.match(name) or ctx.model.module_evidence(name)):
            continue
        made = ctx.model.constructed(module).get(name, ())
        if made and all(_parameter_free(m, ctx) for m in made):
            continue
        later = module.body[position + 1 :]
        if any(binds(s, name, module_level=True) for s in later) or _trains_or_globals(module, name):
            continue
        found.append((statement, name, position))
    return found


def _module_statement_mentions_eval(ctx: "Context") -> bool:
    """Does the code of a simple statement of the module's own hold `.eval(` (a call, a string, a
    comment)?  Read off the file's text where it can be: a statement's code is a part of the text,
    so with no `.eval(` in the text there is none; and where every `.eval(` of the text is printed
    by a call `x.eval(` of the tree (as many such calls as occurrences), a statement holds one
    exactly when it holds such a call.  Else each simple statement is printed back and searched."""
    module, text = ctx.module, ctx.text
    if text is not None:
        occurrences = text.count(".eval(")
        if not occurrences:
            return False
        calls = [_printed_eval_calls(statement) for statement in module.body]
        if sum(calls) == occurrences:
            return any(count for statement, count in zip(module.body, calls) if type(statement) is cst.SimpleStatementLine)
    return any(type(s) is cst.SimpleStatementLine and ".eval(" in module.code_for_node(s) for s in module.body)


def _printed_eval_calls(statement: cst.CSTNode) -> int:
    """How many calls under `statement` print as `.eval(` (no space after the dot or before the
    bracket, no bracket closing the callee: `x.eval()`, not `x. eval ()` or `(x.eval)()`)."""
    count = 0
    for node in code_descendants(statement):
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is not cst.Attribute or func.attr.value != "eval" or func.rpar:
            continue
        after_dot, after_func = func.dot.whitespace_after, node.whitespace_after_func  # type: ignore[attr-defined]
        if type(after_dot) is cst.SimpleWhitespace and not after_dot.value and type(after_func) is cst.SimpleWhitespace and not after_func.value:
            count += 1
    return count


def _trains_or_globals(module: cst.Module, name: str) -> bool:
    """Does any code of the file call `name.train()` (not `train(False)`) or declare `global name`?"""
    for node in code_descendants(module):
        if _is_train_call(node) and dotted_name(_module_of_chain(node.func.value)) == name:  # type: ignore[attr-defined]
            return True
        if type(node) is cst.Global and any(item.name.value == name for item in node.names):  # type: ignore[attr-defined]
            return True
    return False


def _runs_global(function: cst.FunctionDef, name: str) -> bool:
    """Does the function use the module's `name` (it mentions the name and binds no local of that
    name) and stay out of training mode (no `.train()` call of its own)?"""
    if binds(function, name):
        return False
    mentions = False
    for node in code_descendants(function.body):
        if _is_train_call(node):
            return False
        mentions = mentions or (type(node) is cst.Name and node.value == name)  # type: ignore[attr-defined]
    return mentions


def _called_before(module: cst.Module, function: str, position: int) -> bool:
    """Is `function` called by a module-level statement before the one at `position`?"""
    return any(
        type(node) is cst.Call and type(node.func) is cst.Name and node.func.value == function  # type: ignore[attr-defined]
        for statement in module.body[:position]
        for node in code_descendants(statement)
    )


def _shape_check(function: cst.FunctionDef, ctx: "Context") -> bool:
    """`def test(): net = ResNet18(); y = net(torch.randn(1, 3, 32, 32)); print(y.size())`: a
    function that takes nothing, builds the model it runs, loads no weights and loops over nothing
    runs an untrained model once, to see that it runs (a shape check), whatever its name says:
    there is no evaluation in it."""
    params = function.params
    if params.params or params.posonly_params or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg:
        return False
    built = ctx.model.constructed(function)  # names bound only to what a capitalised callee builds
    built = {*built, *_factory_built(function, ctx)}  # or a model factory of the file (`densenet_cifar()`)
    runs_built = False
    for node in code_descendants(function.body):
        kind = type(node)
        if kind in _REPEATS:
            return False
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if _final(func) in _LOADS_WEIGHTS:
                return False
            runs_built = runs_built or (type(func) is cst.Name and func.value in built)
    return runs_built


def _factory_built(function: cst.FunctionDef, ctx: "Context") -> frozenset[str]:
    """Names the function binds, every time, to the result of a module-level function of the file
    each of whose returns builds an instance of a capitalised class (`net = densenet_cifar()` with
    `def densenet_cifar(**kw): return DenseNet(Bottleneck, [6, 12, 24, 16], **kw)`): a fresh model."""
    factories = {
        statement.name.value: statement for statement in ctx.module.body if type(statement) is cst.FunctionDef
    }
    bound: dict[str, bool] = {}
    for node in code_descendants(function.body):
        if type(node) is not cst.Assign or len(node.targets) != 1 or type(node.targets[0].target) is not cst.Name:  # type: ignore[attr-defined]
            continue
        name = node.targets[0].target.value  # type: ignore[attr-defined]
        value = node.value  # type: ignore[attr-defined]
        callee = value.func.value if type(value) is cst.Call and type(value.func) is cst.Name else None
        bound[name] = bound.get(name, True) and callee in factories and _builds_a_class(factories[callee])
    return frozenset(name for name, fresh in bound.items() if fresh)


def _builds_a_class(factory: cst.FunctionDef) -> bool:
    returns = [node for node in code_descendants(factory.body) if type(node) is cst.Return]
    return bool(returns) and all(
        type(r.value) is cst.Call and type(r.value.func) is cst.Name and r.value.func.value[:1].isupper()  # type: ignore[union-attr]
        for r in returns
    )


# A loop or a comprehension: the function goes over data.  Calls that give a model trained weights.
_REPEATS = frozenset({cst.For, cst.While, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp})
_LOADS_WEIGHTS = frozenset({"load_state_dict", "load", "from_pretrained", "load_from_checkpoint", "load_checkpoint"})


def _final(func: cst.BaseExpression) -> Optional[str]:
    if type(func) is cst.Attribute:
        return func.attr.value  # type: ignore[attr-defined]
    return func.value if type(func) is cst.Name else None  # type: ignore[attr-defined]


def _code(ctx: "Context", node: cst.CSTNode) -> str:
    return "".join(ctx.module.code_for_node(node).split())


def runs_evaluated_model(call: cst.Call, region: Region, ctx: "Context") -> bool:
    """In a region opened by `X.eval()`: does `call` run X (`X(x)`, `X.encoder(x)`), or a method of X
    that takes an input (`X.get_action(obs)`, `X.get_last_selfattention(img)`: X is certainly a
    module, and a method fed data runs it)?  A call on something else (a fresh layer in a later
    notebook cell, a DataFrame) is not X's evaluation.  `self.eval()` covers any of self's models."""
    if region.kind not in ("eval-call", "module-eval", "mode-branch"):
        return True
    receiver = region.receiver
    func = call.func
    text = _code(ctx, func)
    if receiver == "self":
        # `self(x)`, `self.encoder(x)`; or a method of the module whose body runs its layers
        # (pytorch-wavenet's `generate_fast`: `self.eval()`, then `self.wavenet(input, ...)`, the
        # body of its forward, per generated sample)
        if is_model_call(call, ctx):
            return True
        return ctx.in_module_class and (self_layers_helper_runs(call, ctx) or _runs_submodule_method(call, ctx))
    if text == receiver:
        return True
    ran = module_run_by_function(call, ctx)
    if ran is not None and _code(ctx, ran) == receiver:
        return True  # `netG.eval()`, then `nn.parallel.data_parallel(netG, inputs, gpus)`
    if helper_runs(call, receiver, ctx):
        # (a helper whose own body is in the region of the module's `.eval()` is reported there)
        return not (type(func) is cst.Name and _module_evaluated(func.value, ctx))  # `G.eval()`, then `get_sample_image(G, n)` whose body runs `G(z)`; `self._process_one_batch(x)` runs `self.model`
    if type(func) is cst.Name and helper_runs_through_methods(call, receiver, ctx, lambda c, held: _runs_held_method(c, held, ctx)):
        # `model.eval()`, then `greedy_decode(model, src, ...)` whose body runs `model.encode(src, mask)`
        return not _module_evaluated(func.value, ctx)
    aliased = _alias_of(func.value, ctx) if type(func) is cst.Name else ()
    if aliased and all(_alias_runs(value, call, receiver, ctx) for value in aliased):
        # `encoder = self.net.encoder` after `self.net_mode(train=False)`, then `encoder(x)`; at module
        # level `encode = trainer.gen_a.encode if a2b else trainer.gen_b.encode` after `trainer.eval()`
        return True
    if type(func) is cst.Name and any(_is_data(arg.value) for arg in call.args if arg.keyword is None) and wraps_model(func.value, receiver, ctx):
        return True  # `elbo = SVI(model, ...)`, then `-elbo(x)` after `model.eval()`
    if not text.startswith(receiver + "."):
        return False
    if is_model_call(call, ctx):
        return True  # `model.encoder(x)`, `model.forward(x)`
    return runs_method_of(call, (receiver,), ctx)


def _runs_held_method(call: cst.Call, held: str, ctx: "Context") -> bool:
    """In a helper's body: does `call` run the model the helper knows as `held` through one of its
    methods, fed data (`model.encode(src, mask)`, `model.forward(x)`: `runs_method_of`)?"""
    func = call.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Name or func.value.value != held:
        return False
    if func.attr.value == "forward":
        return _fed_data(call)
    return runs_method_of(call, (held,), ctx)


def _alias_runs(value: cst.Attribute, call: cst.Call, receiver: str, ctx: "Context") -> bool:
    """Does `call`, a call of a name bound to `value` (`encoder = model.encoder`, `encode =
    trainer.gen_a.encode`), run `receiver`, the module put in eval mode?  An attribute of it, unless
    the direct call `value(...)` is known to run no model: a method that never does (`params =
    model.parameters`, `save = model.body.state_dict`), one whose every body runs under its own
    no_grad (`grad_free_methods`), a loss the model's class holds, a method of an attribute valued
    something other than a module."""
    if not _code(ctx, value).startswith(receiver + "."):
        return False
    name = value.attr.value
    if never_runs_module(name) or name in ctx.project.grad_free_methods:
        return False
    held = held_layer(value, ctx)
    if held is not None and (held.kind or "").endswith("Loss"):
        return False
    holder = value.value
    return _code(ctx, holder) == receiver or values.evaluate(holder, ctx).kind in (Kind.MODULE, Kind.UNKNOWN)


def _runs_submodule_method(call: cst.Call, ctx: "Context") -> bool:
    """After `self.eval()` in an nn.Module: is `call` a method fed data, named as running a module
    (`method_runs_module`), of a submodule of self (`self.gen_a.encode(x)`)?  `self.eval()` puts every
    submodule in eval mode too.  A submodule by evidence: the attribute is valued a module, or the
    class (or a base of it in the file) gives it a method only a module has (`self.gen_a.parameters()`:
    `_class_holds_parameters`); a tokenizer's `self.tokenizer.encode(text)` is neither.  Not a method
    that some project method so named may compute gradients in (the project pass's
    `gradient_methods`: a PGD attack's `perturb`, a Langevin `sample`): that is no evaluation."""
    func = call.func
    if type(func) is not cst.Attribute or type(func.value) is not cst.Attribute or not _is_self(func.value.value):  # type: ignore[attr-defined]
        return False
    if func.attr.value in ctx.project.gradient_methods:
        return False
    held = func.value
    if not _class_holds_parameters(held.attr.value, ctx):  # type: ignore[attr-defined]
        value = values.evaluate(held, ctx)
        if value.kind is not Kind.MODULE or value.is_loss:
            return False
    return runs_method_of(call, (_code(ctx, held),), ctx)


def _class_holds_parameters(attr: str, ctx: "Context") -> bool:
    """Does the class whose method is being read (or a base of it the file defines) call a method
    only an nn.Module has on `self.<attr>` (`self.gen_a.parameters()`: evidence.ENTRY_MODULE_METHODS)?
    Per class: another class's `self.clf.parameters()` says nothing of this one's `self.clf`."""
    frame = next((f for f in reversed(ctx.frames) if f.kind == "class"), None)
    if frame is None or type(frame.node) is not cst.ClassDef:
        return False
    return attr in ctx.memo(("class-parameter-holders", id(frame.node)), lambda: _parameter_holders(frame.node, ctx))  # type: ignore[operator]


def _parameter_holders(node: cst.ClassDef, ctx: "Context") -> frozenset[str]:
    defined = {s.name.value: s for s in ctx.module.body if type(s) is cst.ClassDef}  # type: ignore[attr-defined]
    found: set[str] = set()
    seen: set[int] = set()
    pending = [node]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        for base in current.bases:
            if type(base.value) is cst.Name and base.value.value in defined:
                pending.append(defined[base.value.value])
        for inner in code_descendants(current.body):
            if type(inner) is not cst.Call or type(inner.func) is not cst.Attribute or inner.func.attr.value not in evidence.ENTRY_MODULE_METHODS:  # type: ignore[attr-defined]
                continue
            held = inner.func.value  # type: ignore[attr-defined]
            if type(held) is cst.Attribute and _is_self(held.value):
                found.add(held.attr.value)
    return frozenset(found)


def runs_method_of(call: cst.Call, receivers: tuple, ctx: "Context") -> bool:
    """Is `call` a method of one of `receivers` (the code of modules put in eval mode) that runs it
    on data (`lm_model.log_prob(word_t)`, `policy.get_action(obs)`)?"""
    func = call.func
    if not (type(func) is cst.Attribute and _code(ctx, func.value) in receivers):
        return False
    if not method_runs_module(func.attr.value, ctx.project.model_methods) or not _fed_data(call):
        return False
    if func.attr.value in ctx.project.grad_free_methods:
        return False  # (curl's `agent.sample_action(obs)` runs its actor under its own `no_grad`)
    if func.attr.value in _grad_off_methods(ctx):
        # a method of the file so named runs under its own `@torch.no_grad()`, and which class's
        # method the receiver reaches is not known (UvA-DL's `get_attention_maps`, decorated in the
        # predictor, not in the encoder it calls): silence
        return False
    held = held_layer(func, ctx)  # (`model._criterion(a, b)`: a loss the class assigns runs no model)
    return held is None or not (held.kind or "").endswith("Loss")


def _grad_off_methods(ctx: "Context") -> frozenset[str]:
    """The names of the methods of the file's classes decorated to run without gradients
    (`@torch.no_grad()`, `@torch.inference_mode()`), memoised per file."""
    def find() -> frozenset[str]:
        found = set()
        for statement in ctx.module.body:
            if type(statement) is not cst.ClassDef or not isinstance(statement.body, cst.IndentedBlock):
                continue
            for method in statement.body.body:
                if type(method) is cst.FunctionDef and any(_turns_grad_off(d.decorator, ctx) for d in method.decorators):
                    found.add(method.name.value)
        return frozenset(found)
    return ctx.memo(("grad-off-methods", id(ctx.module)), find)  # type: ignore[return-value]


def _turns_grad_off(decorator: cst.BaseExpression, ctx: "Context") -> bool:
    target = decorator.func if type(decorator) is cst.Call else decorator  # type: ignore[attr-defined]
    return ctx.resolve(target) in tables.NO_GRAD_CONTEXTS


def runs_model_method(call: cst.Call, ctx: "Context") -> bool:
    """Is `call` a method fed data (`method_runs_module`) of a receiver that is a model, though no
    `.eval()` named it: valued a module, or, where the valuation cannot tell, named like a model or
    one by evidence (`discriminator.feature_extraction(images)` in a loop over `test_loader`)?"""
    func = call.func
    if type(func) is not cst.Attribute:
        return False
    receiver = func.value
    if type(receiver) not in (cst.Name, cst.Attribute) or _is_self(receiver) or ctx.resolve(receiver) is not None:
        return False
    if not method_runs_module(func.attr.value, ctx.project.model_methods) or not _fed_data(call):
        return False
    if func.attr.value in ctx.project.grad_free_methods:
        return False
    value = values.evaluate(receiver, ctx)
    if value.kind is Kind.MODULE:
        return not value.is_loss
    if value.kind is not Kind.UNKNOWN:
        return False
    name = receiver.value if type(receiver) is cst.Name else receiver.attr.value  # type: ignore[union-attr]
    return bool(tables.MODEL_NAME.match(name)) or ctx.model.module_evidence(dotted_name(receiver))


def _module_evaluated(name: str, ctx: "Context") -> bool:
    definition = top_function(ctx, name)
    return definition is not None and module_eval_region(ctx, definition) is not None


def _alias_of(name: str, ctx: "Context") -> tuple[cst.Attribute, ...]:
    """Each thing `name` may be bound to in the function (or, in the module's own code,
    the module), where its one binding is a plain `name = a.b.c` of its body (`encoder =
    self.net.encoder`) or a conditional expression of such attributes (`encode = trainer.gen_a.encode
    if a2b else trainer.gen_b.encode`: either); () otherwise."""
    function = ctx.function_node
    if function is None:
        body = ctx.module.body
    elif isinstance(function.body, cst.IndentedBlock):
        body = function.body.body
    else:
        return ()
    # asked for every call of a bare name in an evaluation region: one reading of the body per name
    return ctx.memo(("alias-of", id(function or ctx.module), name), lambda: _plain_alias(body, name, ctx, function is None))  # type: ignore[return-value]


def _plain_alias(body: Sequence[cst.CSTNode], name: str, ctx: "Context", module_level: bool) -> tuple[cst.Attribute, ...]:
    bound: tuple[cst.Attribute, ...] = ()
    for statement in body:
        if not binds(statement, name, module_level):  # (a method `encode` of a module-level class binds no global)
            continue
        if bound or type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
            return ()
        small = statement.body[0]
        if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
            return ()
        values_bound = alternatives(small.value)
        if not all(type(value) is cst.Attribute for value in values_bound):
            return ()
        bound = tuple(values_bound)  # type: ignore[arg-type]
    return bound


def _fed_data(call: cst.Call) -> bool:
    """Is the call handed something that can be a batch, by position or by keyword
    (`model.incremental_forward(test_inputs=x, c=c)`: wavenet_vocoder's tests)?  A keyword that
    names where or how to run (`device=device`, `tqdm=tqdm`) hands no data."""
    return any(
        _is_data(arg.value) and (arg.keyword is None or arg.keyword.value not in _OPTION_KEYWORDS)
        for arg in call.args
    )  # fmt: skip


_OPTION_KEYWORDS = frozenset({"device", "dtype", "non_blocking", "tqdm", "verbose", "progress", "callback", "logger", "config"})


def _is_data(expr: cst.BaseExpression) -> bool:
    """An argument that can be a batch: a name, attribute, subscript or call result (not a literal)."""
    return type(expr) in (cst.Name, cst.Attribute, cst.Subscript, cst.Call, cst.StarredElement) and not (
        type(expr) is cst.Name and expr.value in ("True", "False", "None")
    )


def _in_module_like_class(ctx: "Context") -> bool:
    """In a method of an nn.Module subclass, or of a class that looks like one though its base is
    imported from elsewhere (it defines `forward`, or is named `...Model` / `...ForSegmentation`)."""
    if ctx.in_module_class:
        return True
    frame = next((f for f in reversed(ctx.frames) if f.kind == "class"), None)
    if frame is None or not isinstance(frame.node, cst.ClassDef):
        return False
    node = frame.node
    if not (_MODULE_LIKE_CLASS.search(node.name.value) or any(isinstance(s, cst.FunctionDef) and s.name.value == "forward" for s in node.body.body)):
        return False
    # (a class that switches the mode of a model it holds, `self.network.eval()`, drives that model:
    # a trainer or estimator, not one of its layers: tabnet's `TabModel(BaseEstimator)`)
    return not ctx.memo(("switches-held-model", id(node)), lambda: _switches_held_model(node))


def _switches_held_model(node: cst.ClassDef) -> bool:
    """Does a method of the class call `self.<attr>.eval()` or `self.<attr>.train()` (no arguments)?"""
    for found in code_descendants(node.body):
        if type(found) is not cst.Call or found.args or type(found.func) is not cst.Attribute:
            continue
        func = found.func
        if func.attr.value in ("eval", "train") and type(func.value) is cst.Attribute and _is_self_name(func.value.value):  # type: ignore[attr-defined]
            return True
    return False


def _is_self_name(expr: cst.BaseExpression) -> bool:
    return type(expr) is cst.Name and expr.value == "self"  # type: ignore[attr-defined]


_MODULE_LIKE_CLASS = re.compile(r"(?:Model|Module|Net|Network|Head|Encoder|Decoder)$|For[A-Z]")


def _eval_mode_call(statement: cst.CSTNode, ctx: "Context", scope: Scope) -> Optional[cst.Call]:
    """`model.eval()` / `self.eval()` / `model.train(False)` as a statement of its own (also
    `model = model.eval()`), on a receiver that is a model."""
    call = eval_call_shape(statement)
    if call is None:
        call = mode_helper_call(statement, ctx)  # `self.net_mode(train=False)`: a method of the class that calls `self.net.eval()`
        if call is None or call.func.attr.value != "eval":  # type: ignore[attr-defined]
            return _wrapper_eval_call(statement, ctx, scope)
    receiver = eval_receiver(call, statement)  # `model.cuda().eval()`: `model`; `model = Net().eval()`: `model`
    if isinstance(receiver, cst.Name) and receiver.value == "self":
        return call if ctx.in_module_class else None
    if ctx.resolve(receiver) is not None:
        return None
    made = ctx.model.constructed(scope).get(receiver.value, ()) if type(receiver) is cst.Name else ()
    if made and all(_parameter_free(m, ctx) for m in made):
        return None  # `bn = nn.BatchNorm1d(2, affine=False)`: no parameters, so its output has no history
    value = values.evaluate(receiver, ctx)
    if value.kind is Kind.MODULE:
        return call
    if value.kind is Kind.UNKNOWN and made and all(_builds_module(m, ctx) for m in made):
        return call  # `G = Generator()` in this scope, maybe below the point the traversal is at
    name = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value if isinstance(receiver, cst.Attribute) else ""
    if value.kind is not Kind.UNKNOWN:
        return None
    return call if tables.MODEL_NAME.match(name) or ctx.model.module_evidence(dotted_name(receiver)) else None


def _wrapper_eval_call(statement: cst.CSTNode, ctx: "Context", scope: Scope) -> Optional[cst.Call]:
    """`model.val_start()`, a method every project method so named of which only puts the models
    its object holds in eval mode (mode_wrappers), on a receiver that is a model by the evidence
    `X.eval()` asks (a module by the valuation, a model's name, the file's module evidence), in a
    scope that calls no method that may backpropagate or step (`calls_backprop_method`)."""
    call = wrapper_eval_call(statement, ctx)
    if call is None or calls_backprop_method(scope, ctx):
        return None
    receiver = call.func.value  # type: ignore[attr-defined]
    if ctx.resolve(receiver) is not None:
        return None
    kind = values.evaluate(receiver, ctx).kind
    if kind is Kind.MODULE:
        return call
    if kind is not Kind.UNKNOWN:
        return None
    # the same evidence `X.eval()` asks of its receiver (`memory.reset()` is not `model.val_start()`)
    name = receiver.value if isinstance(receiver, cst.Name) else receiver.attr.value if isinstance(receiver, cst.Attribute) else ""
    return call if tables.MODEL_NAME.match(name) or ctx.model.module_evidence(dotted_name(receiver)) else None


def _left_in_eval_mode(statement: cst.CSTNode, ctx: "Context", scope: Scope) -> Optional[tuple[cst.Call, cst.CSTNode]]:
    """The `.eval()` call a loop leaves its model in: the last statement of the loop's own body that
    sets a mode (`for epoch in ...: model.train(); ...; model.eval(); <validate>`) puts it in eval
    mode, unconditionally, and nothing in the body after it calls `.train()` (mrdbourke's notebooks:
    a one-off prediction in the cell after the training loop runs in eval mode, with gradients on)."""
    if not isinstance(statement, (cst.For, cst.While)) or statement.orelse is not None or not isinstance(statement.body, cst.IndentedBlock):
        return None
    body = list(statement.body.body)
    for position in range(len(body) - 1, -1, -1):
        current = body[position]
        if _train_mode_call(current) or wrapper_trains(current, ctx):
            return None
        call = _eval_mode_call(current, ctx, scope)
        if call is not None:
            later = body[position + 1 :]
            # (with its statement: `model = Net().eval()` leaves `model` in eval mode)
            return None if any(_is_train_call(n) for s in later for n in code_descendants(s)) or any(wrapper_trains(s, ctx) for s in later) else (call, current)
    return None


def _module_of_chain(expr: cst.BaseExpression) -> cst.BaseExpression:
    """`model.cuda()` -> `model`: what a chain of module methods that return the module starts from."""
    while type(expr) is cst.Call and type(expr.func) is cst.Attribute and expr.func.attr.value in KEEPS_THE_MODULE:  # type: ignore[attr-defined]
        expr = expr.func.value  # type: ignore[attr-defined]
    return expr


def eval_receiver(call: cst.Call, statement: Optional[cst.CSTNode] = None) -> cst.BaseExpression:
    """What an `.eval()` call found by `_eval_mode_call` puts in eval mode (`model` of
    `model.cuda().eval()`).  Where the chain starts from a call (a model built or loaded there) and
    `statement` binds its result to one name or attribute, that target: `model =
    Generator(4).eval()` (also `Generator(4).cuda().eval()`) puts `model` in eval mode as a
    separate `model.eval()` would; the built object has no other name to run it by."""
    receiver = _module_of_chain(call.func.value)  # type: ignore[attr-defined]
    if type(receiver) is not cst.Call or type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:  # type: ignore[attr-defined]
        return receiver
    small = statement.body[0]  # type: ignore[attr-defined]
    if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) not in (cst.Name, cst.Attribute):
        return receiver
    value = small.value  # (eval_call_shape: the call is on the chain of the statement's value)
    while type(value) is cst.Call and value is not call and type(value.func) is cst.Attribute:  # type: ignore[attr-defined]
        value = value.func.value  # type: ignore[attr-defined]
    return small.targets[0].target if value is call else receiver


def _builds_module(made: cst.Call, ctx: "Context") -> bool:
    """Does `made` call a class of this file (or, by the project pass, of this file seen with its
    bases elsewhere, or one it imports from another file of the project) that is an nn.Module, or a class the function is handed as a parameter
    annotated `nn.Module` (cleanrl's `evaluate(..., Model: torch.nn.Module)`: `agent = Model(envs)`)?"""
    func = made.func
    if type(func) is not cst.Name:
        return False
    if func.value in ctx.module_classes or func.value in ctx.project.module_classes or func.value in ctx.project.imported_modules:
        return True
    name = func.value
    return ctx.is_param(name) and ctx.lookup_value(name).kind is Kind.MODULE and values.names_a_module_class(name, ctx)


def _parameter_free(made: cst.Call, ctx: "Context") -> bool:
    """Does `made` build a torch.nn layer without parameters (`nn.Dropout()`, `nn.BatchNorm1d(2,
    affine=False)`)?  Running it records no autograd history: there is nothing to evaluate."""
    qualified = ctx.resolve(made.func) or ""
    if not qualified.startswith("torch.nn."):
        return False
    if qualified.rpartition(".")[2] in PARAMETER_FREE:
        return True
    return any(
        arg.keyword is not None and arg.keyword.value in ("affine", "elementwise_affine")
        and type(arg.value) is cst.Name and arg.value.value == "False"
        for arg in made.args
    )  # fmt: skip


def _is_train_call(node: cst.CSTNode) -> bool:
    if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "train"):
        return False
    return not (len(node.args) == 1 and isinstance(node.args[0].value, cst.Name) and node.args[0].value.value == "False")


def _mode_switch(statement: cst.CSTNode, ctx: "Context", scope: Scope) -> Optional[tuple[cst.Call, str]]:
    """`if T: X.train()` / `else: X.eval()` (pytorch-GAT's `main_loop(phase)`): the `.eval()` call
    and the code of T, the test that selects training; X must be a model as for `X.eval()`."""
    if type(statement) is not cst.If or type(statement.orelse) is not cst.Else:  # type: ignore[attr-defined]
        return None
    body, orelse = statement.body, statement.orelse.body  # type: ignore[attr-defined]
    if not (isinstance(body, cst.IndentedBlock) and isinstance(orelse, cst.IndentedBlock)):
        return None
    # (the training branch may do more before it, `if scheduler: scheduler.step()`: its last
    # statement is the switch; either branch may also note which step counter the phase uses,
    # `step = global_test_step`, wavenet_vocoder's `__train_step`: plain assignments beside it)
    train = train_call_shape(body.body[-1]) or _mode_beside_assignments(body.body, train_call_shape)
    if len(orelse.body) == 1:
        call = _eval_mode_call(orelse.body[0], ctx, scope)
    else:
        found = _mode_beside_assignments(orelse.body, eval_call_shape)
        call = _eval_mode_call(_statement_of(orelse.body, found), ctx, scope) if found is not None else None
    if train is None or call is None or _code(ctx, _module_of_chain(train.func.value)) != _code(ctx, eval_receiver(call)):  # type: ignore[attr-defined]
        return None
    return call, _test_key(ctx, statement.test)  # type: ignore[attr-defined]


def _test_key(ctx: "Context", test: cst.BaseExpression) -> str:
    """A switch's test as it compares: `phase == C` keyed by C's value (`'train'` and `"train"` are
    one test), any other test by its code without spaces."""
    if type(test) is cst.Comparison and len(test.comparisons) == 1 and type(test.comparisons[0].operator) is cst.Equal:
        left, right = test.left, test.comparisons[0].comparator
        if type(left) is cst.Name and _constant(right):
            return f"{left.value}=={constant_key(right)}"
    return _code(ctx, test)


def _mode_beside_assignments(statements, shape) -> Optional[cst.Call]:
    """The one mode call (`shape`: `X.train()` or `X.eval()`) among statements that are otherwise
    plain assignments of names (`step = global_step`); None for anything else."""
    found = None
    for statement in statements:
        call = shape(statement)
        if call is not None:
            if found is not None:
                return None
            found = call
            continue
        if not _plain_bookkeeping(statement):
            return None
    return found


def _plain_bookkeeping(statement: cst.CSTNode) -> bool:
    """A statement beside a mode call that runs nothing: plain assignments of names from values
    without calls (`step = global_step`, `net = self.net.module`, also under an `if` with no `else`:
    CenterNet's `if len(opt.gpus) > 1: model_with_loss = self.model_with_loss.module`), or
    `torch.cuda.empty_cache()`."""
    if type(statement) is cst.If and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock):  # type: ignore[attr-defined]
        return bool(statement.body.body) and all(type(s) is cst.SimpleStatementLine and _plain_bookkeeping(s) for s in statement.body.body)  # type: ignore[attr-defined]
    if type(statement) is not cst.SimpleStatementLine:
        return False
    only = statement.body[0].value if len(statement.body) == 1 and type(statement.body[0]) is cst.Expr else None  # type: ignore[attr-defined]
    if type(only) is cst.Call and not only.args and dotted_name(only.func) == "torch.cuda.empty_cache":  # type: ignore[attr-defined]
        return True
    return all(
        type(small) is cst.Assign and all(type(t.target) is cst.Name for t in small.targets)
        and not any(type(n) is cst.Call for n in code_descendants(small.value))
        for small in statement.body  # type: ignore[attr-defined]
    )  # fmt: skip


def _statement_of(statements, call: cst.Call) -> cst.CSTNode:
    return next(s for s in statements if any(n is call for n in code_descendants(s)))


def _evaluated_with_grad(function: cst.FunctionDef, training: cst.BaseExpression, ctx: "Context") -> Optional[tuple]:
    """Does the file call the function so that its mode switch chooses eval, with gradients on?  The
    switch's test must compare a parameter with a constant (`phase == LoopPhase.TRAIN`) or be the
    parameter itself (`if train:`); a call passing another constant (`main_loop(phase=LoopPhase.TEST)`,
    `run(loader, False)`) outside any `with` that turns gradients off chooses eval.  Each use of the
    function's name must be such a call (or its factory's `return`, below): handed to other code as
    a value, it may run anywhere.  A closure its factory returns (`def get_main_loop(...): def
    main_loop(phase): ...; return main_loop`) is called through the names bound to the factory's
    result (`main_loop = get_main_loop(...)`).  A method is called on `self` by the methods of its
    class (CenterNet's `val()` running `self.run_epoch('val', epoch, loader)`): each use of
    `self.<name>` there must be such a call.  The calls that choose eval come back (None where none
    does): the engine drops the finding where every one of them runs without gradients (the grad
    mode the Context saw at the call, `CallSite.grad`, or a caller that only ever runs so)."""
    selector = _phase_selector(training, function)
    if selector is None:
        return None
    parameter, training_value = selector
    # (both once per function and parameter: each walks the function or its class, and a function
    # may switch modes in more than one statement; the grad mode of a call is read through the
    # module's imports seen so far, so they key that answer too)
    if ctx.memo(("evaluation.context-follows", id(function), parameter), lambda: _context_follows(function, parameter)):
        return None
    owner = _owning_class(function, ctx)
    if owner is not None:
        key = ("evaluation.method-evaluated-with-grad", id(function), parameter, training_value, ctx.module_imports)
        return ctx.memo(key, lambda: _method_evaluated_with_grad(function, owner, parameter, training_value, ctx))  # type: ignore[return-value]
    names = {function.name.value}
    factory = factory_of(function, ctx)
    if factory is not None:
        names |= {
            t.target.value  # type: ignore[attr-defined]
            for node in code_descendants(ctx.module)
            if type(node) is cst.Assign and type(node.value) is cst.Call and _code(ctx, node.value.func) == factory.name.value  # type: ignore[attr-defined]
            for t in node.targets  # type: ignore[attr-defined]
            if type(t.target) is cst.Name
        }  # fmt: skip
    callers: list = []
    found = False
    for node, parents in code_with_parents(ctx.module):
        if type(node) is not cst.Name or node.value not in names:  # type: ignore[attr-defined]
            continue
        parent = parents[-1]
        if parent is function or (factory is not None and type(parent) is cst.Return and parent in code_descendants(factory)):
            continue
        if type(parent) is cst.Attribute and parent.attr is node:  # type: ignore[attr-defined]
            continue  # (`optimizer.step()` is no use of a function named `step`)
        if type(parent) is cst.AssignTarget and len(parents) > 1 and type(parents[-2]) is cst.Assign and type(parents[-2].value) is cst.Call:  # type: ignore[attr-defined]
            if factory is not None and _code(ctx, parents[-2].value.func) == factory.name.value:  # type: ignore[attr-defined]
                continue
        if not (type(parent) is cst.Call and parent.func is node):  # type: ignore[attr-defined]
            return None  # handed to other code as a value
        if _under_grad_off(parents, ctx):
            continue
        argument = argument_for(parent, function, parameter)  # type: ignore[arg-type]
        if argument is None:
            continue
        # (`for phase, loader in data_loaders.items(): __train_step(..., phase, ...)`)
        if (_constant(argument) and constant_key(argument) != training_value) or _iterates_phases(argument, parents, training_value, ctx):
            found = True
            callers.append(parent)
    return tuple(callers) if found else None


def _context_follows(function: cst.FunctionDef, parameter: str) -> bool:
    """Does a `with` of the function take a manager that depends on the phase parameter (`with
    torch.no_grad() if phase != 'train' else nullcontext():`, or `with ctx:` where `ctx = ...` reads
    `phase`)?  Its eval branch may well run without gradients: the switch decides nothing then."""
    names = {parameter}
    nodes = list(code_descendants(function.body, skip=(cst.FunctionDef, cst.ClassDef, cst.Lambda)))
    for _ in range(3):  # (names bound from names bound from the parameter)
        for node in nodes:
            if type(node) is cst.Assign and any(type(n) is cst.Name and n.value in names for n in code_descendants(node.value)):  # type: ignore[attr-defined]
                names |= {t.target.value for t in node.targets if type(t.target) is cst.Name}  # type: ignore[attr-defined]
    return any(
        type(node) is cst.With and any(type(n) is cst.Name and n.value in names for item in node.items for n in (item.item, *code_descendants(item.item)))  # type: ignore[attr-defined]
        for node in nodes
    )  # fmt: skip


def _under_grad_off(parents, ctx: "Context") -> bool:
    """Is the code inside a `with` that may turn gradients off (`torch.no_grad()`,
    `torch.set_grad_enabled(phase == "train")`)?  The Context's answer for a `with` item
    (`grad_mode_set_by`), read through the module's imports: these calls are anywhere in the file."""
    return any(
        type(p) is cst.With and any(grad_mode_set_by(i.item, ctx.resolve_at_module_level) in _MAY_BE_OFF for i in p.items)  # type: ignore[attr-defined]
        for p in parents
    )


_MAY_BE_OFF = (GradMode.DISABLED, GradMode.UNKNOWN)


def _owning_class(function: cst.FunctionDef, ctx: "Context") -> Optional[cst.ClassDef]:
    """The class whose method the function is (None for any other function)."""
    frames = ctx.frames
    for index, frame in enumerate(frames):
        if frame.node is function:
            outer = frames[index - 1] if index else None
            return outer.node if outer is not None and outer.kind == "class" and type(outer.node) is cst.ClassDef else None  # type: ignore[return-value]
    return None


def _method_evaluated_with_grad(function: cst.FunctionDef, owner: cst.ClassDef, parameter: str, training_value: str, ctx: "Context") -> Optional[tuple]:
    """`_evaluated_with_grad` for a method: its class's own calls `self.<name>(...)` (not in a
    `with` that turns gradients off) choosing eval by a constant for the parameter; any other use
    of `self.<name>` (handed on as a value) may run it anywhere.  The calls come back: a `val()`
    decorated `@torch.no_grad()`, or only ever called under `no_grad`, evaluates without gradients."""
    params = function.params.params
    if function.decorators or not params or params[0].name.value != "self":
        return None  # (a static or class method: its calls are not `self.<name>(...)`)
    name = function.name.value
    callers: list = []
    for node, parents in code_with_parents(owner):
        if type(node) is not cst.Attribute or node.attr.value != name or type(node.value) is not cst.Name or node.value.value != "self":  # type: ignore[attr-defined]
            continue
        parent = parents[-1] if parents else None
        if not (type(parent) is cst.Call and parent.func is node):  # type: ignore[attr-defined]
            return None  # handed to other code as a value
        if _under_grad_off(parents, ctx):
            continue
        argument = argument_for(parent, function, parameter, skipped=1)  # type: ignore[arg-type]
        if argument is None or not _constant(argument) or constant_key(argument) == training_value:
            continue
        callers.append(parent)
    return tuple(callers) if callers else None


def _iterates_phases(argument: cst.BaseExpression, parents, training_value: str, ctx: "Context") -> bool:
    """Is the argument the variable of a loop around the call that goes over the phases, one of
    them not the training one?  The loop's iterable is a literal of constants (`for phase in
    ["train", "val"]:`), or a collection keyed by phase (`for phase, loader in loaders.items():`,
    `for phase in loaders:`) in a file that names its phases in such a literal, the training one
    among them with another (wavenet_vocoder's `get_data_loaders` builds its dict over `for phase
    in ["train_no_dev", "dev"]:`, and `train_loop` hands each key to `__train_step`)."""
    if type(argument) is not cst.Name:
        return False
    for parent in reversed(parents):
        if type(parent) is not cst.For:
            continue
        target, phases = parent.target, parent.iter  # type: ignore[attr-defined]
        keyed = type(phases) is cst.Call and type(phases.func) is cst.Attribute and phases.func.attr.value == "items" and not phases.args  # type: ignore[attr-defined]
        if keyed and type(target) is cst.Tuple and target.elements:
            target = target.elements[0].value  # type: ignore[attr-defined]
        if type(target) is not cst.Name or target.value != argument.value:  # type: ignore[attr-defined]
            continue
        if type(phases) in (cst.List, cst.Tuple):
            return _names_other_phase([e.value for e in phases.elements], training_value)  # type: ignore[attr-defined]
        if not (keyed or type(phases) in (cst.Name, cst.Attribute)):
            return False
        literals = ctx.memo(_PHASE_LITERALS, lambda: _phase_literals(ctx.module))
        return any(_names_other_phase(literal, training_value) for literal in literals)  # type: ignore[union-attr]
    return False


_PHASE_LITERALS = "evaluation.phase-literals"


def _phase_literals(module: cst.Module) -> list:
    """The constants of each literal the file names its phases in: the iterable of a loop or a
    comprehension (`for phase in ["train_no_dev", "dev"]:`) and the keys of a dict literal
    (`{"train": train_loader, "val": val_loader}`).  A list of strings elsewhere (argparse's
    `choices=["train", "test"]`) says nothing about which phases run."""
    literals = []
    for node in code_descendants(module):
        kind = type(node)
        if kind in (cst.For, cst.CompFor) and type(node.iter) in (cst.List, cst.Tuple):  # type: ignore[attr-defined]
            literals.append([e.value for e in node.iter.elements])  # type: ignore[attr-defined]
        elif kind is cst.Dict:
            elements = node.elements  # type: ignore[attr-defined]
            if all(type(e) is cst.DictElement for e in elements):
                literals.append([e.key for e in elements])
    return [values for values in literals if len(values) > 1 and all(type(v) is cst.SimpleString for v in values)]


def _names_other_phase(values: Sequence[cst.BaseExpression], training_value: str) -> bool:
    """Do the constants of a literal hold the training value and another one?"""
    if not values or not all(_constant(v) for v in values):
        return False
    keys = {constant_key(v) for v in values}
    return training_value in keys and len(keys) > 1


def _loop_selects_eval(switch: cst.If, function: cst.FunctionDef) -> bool:
    """Is the mode switch's test `phase == "train"` with `phase` the target of a `for` over literal
    phases whose body holds the switch (`for phase in ["train", "val"]:`, the tutorials' epoch
    loop), one of them another constant than the one that trains?  Then the eval branch runs in
    that loop, with whatever grad mode the code around it sets (the fine-tuning tutorial's
    `torch.set_grad_enabled(phase == "train")` turns it off)."""
    test = switch.test
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return False
    left, right = test.left, test.comparisons[0].comparator
    if type(left) is not cst.Name or not _constant(right):
        return False
    for node in code_descendants(function):
        if type(node) is not cst.For or not isinstance(node.body, cst.IndentedBlock) or switch not in node.body.body:
            continue
        phases = node.iter
        if type(node.target) is not cst.Name or node.target.value != left.value or type(phases) not in (cst.List, cst.Tuple):
            return False
        # (the switch's own constant joins the loop's: a loop that never trains still runs the eval branch)
        return _names_other_phase([*(e.value for e in phases.elements), right], constant_key(right))  # type: ignore[attr-defined]
    return False


def constant_key(expr: cst.BaseExpression) -> str:
    """What a constant compares by: a string's value (`'train'` and `"train"` are one phase), any
    other constant's code without spaces (`LoopPhase.TRAIN`, `True`)."""
    if type(expr) is cst.SimpleString:
        try:
            return repr(expr.evaluated_value)
        except Exception:  # (a string libcst cannot evaluate: compare its code)
            pass
    return _code_alone(expr)


def _code_alone(expr: cst.BaseExpression) -> str:
    return "".join(cst.Module(body=[]).code_for_node(expr).split())


def _phase_selector(test: cst.BaseExpression, function: cst.FunctionDef) -> Optional[tuple[str, str]]:
    """(parameter, the code of the value that selects training) of `phase == LoopPhase.TRAIN` or
    `train` (True), for a parameter of the function."""
    # (a parameter the body binds again, `if self.finetune: phase = 'train'`, is not what the caller passed)
    params = {p.name.value for p in function.params.params if not binds_in_body(function, p.name.value)}
    if type(test) is cst.Name and test.value in params:
        return test.value, "True"
    if type(test) is cst.Name:
        # `train = (phase == "train_no_dev")`, bound once in the function's own body, then `if train:`
        bound = _bound_once(function, test.value)
        if bound is None:
            return None
        test = bound
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:
        return None
    left, right = test.left, test.comparisons[0].comparator
    if type(left) is not cst.Name or left.value not in params or not _constant(right):
        return None
    return left.value, constant_key(right)


def _bound_once(function: cst.FunctionDef, name: str) -> Optional[cst.BaseExpression]:
    """The value of `name = <value>` where that is the only binding of `name` in the function (a
    statement of its own body, not a parameter); None otherwise."""
    if not isinstance(function.body, cst.IndentedBlock):
        return None
    found = None
    for statement in function.body.body:
        if not binds(statement, name):
            continue
        if found is not None or type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1:
            return None
        small = statement.body[0]
        if type(small) is not cst.Assign or len(small.targets) != 1 or type(small.targets[0].target) is not cst.Name:
            return None
        found = small.value
    if found is None or any(type(p) is cst.Param and p.name.value == name for p in code_descendants(function.params)):
        return None
    return found


def _constant(expr: cst.BaseExpression) -> bool:
    """A literal or a dotted name in capitals or of an enum-like class (`LoopPhase.TEST`, `"val"`, `False`)."""
    if type(expr) in (cst.SimpleString, cst.Integer) or (type(expr) is cst.Name and expr.value in ("True", "False")):
        return True
    return type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value[:1].isupper()


def factory_of(function: cst.FunctionDef, ctx: "Context") -> Optional[cst.FunctionDef]:
    """The function around `function` that returns it by name (a step-function factory), if any."""
    functions = [frame.node for frame in ctx.frames if frame.kind == "function"]
    if len(functions) < 2 or functions[-1] is not function or not isinstance(functions[-2], cst.FunctionDef):
        return None
    outer = functions[-2]
    name = function.name.value
    returns = any(type(n) is cst.Return and type(n.value) is cst.Name and n.value.value == name for n in code_descendants(outer.body))  # type: ignore[attr-defined]
    return outer if returns else None


def _outside_training(node: cst.CSTNode, training: str, ctx: "Context") -> list:
    """`node`, less the bodies of `if <training>:` inside it (their `else` / `elif` stay): the code
    that runs when the mode switch chose eval.  Compound statements are opened into their parts."""
    if type(node) is cst.If and _trains_only(node.test, training, ctx):  # type: ignore[attr-defined]
        return [part for branch in _branches_after(node) for part in _outside_training(branch, training, ctx)]
    if type(node) is cst.If and _selects_other_phase(node.test, training, ctx):  # type: ignore[attr-defined]
        # `if phase == 'val': ... else: ...`: the `else` may be the training phase's (Person_reID's
        # `else: outputs = model(inputs)` after `with torch.no_grad()` for 'val'): only the body is
        # eval, and each `elif phase == 'test':` of the chain, another eval phase (whose backward
        # makes the region no evaluation)
        parts = _outside_training(node.body, training, ctx)  # type: ignore[attr-defined]
        orelse = node.orelse  # type: ignore[attr-defined]
        if type(orelse) is cst.If and _selects_other_phase(orelse.test, training, ctx):
            parts += _outside_training(orelse, training, ctx)
        return parts
    inner = [n for n in code_descendants(node) if type(n) is cst.If and (_trains_only(n.test, training, ctx) or _selects_other_phase(n.test, training, ctx))]  # type: ignore[attr-defined]
    if not inner:
        return [node]
    return [part for child in code_children(node) for part in _outside_training(child, training, ctx)]


def _trains_only(test: cst.BaseExpression, training: str, ctx: "Context") -> bool:
    """Does `test` hold only when the switch chose training: the switch's own test, or a
    conjunction with it (`if train and step > 0:`, wavenet_vocoder's checkpointing)?"""
    if _test_key(ctx, test) == training:
        return True
    if type(test) is cst.BooleanOperation and type(test.operator) is cst.And:
        return _trains_only(test.left, training, ctx) or _trains_only(test.right, training, ctx)
    return False


def _hands_model_away(node: cst.CSTNode, receiver: str, ctx: "Context") -> bool:
    """Does `node` give the evaluated model itself to a function it cannot see into (not torch's):
    an adversarial attack or a saliency map of another file computes gradients through it
    (Person_reID's val phase runs `inputs_adv = ODFA(model, inputs)`, whose loop backpropagates)."""
    return _hands_away(node, receiver, ctx, set())


def _hands_away(node: cst.CSTNode, receiver: str, ctx: "Context", seen: set) -> bool:
    for inner in code_descendants(node):
        if type(inner) is not cst.Call:
            continue
        given = next((i for i, a in enumerate(inner.args) if _code(ctx, a.value) == receiver), None)  # type: ignore[attr-defined]
        if given is None:
            continue
        func = inner.func  # type: ignore[attr-defined]
        if type(func) is cst.Name and func.value in _INSPECTING_BUILTINS:
            continue  # (`print(model)`)
        qualified = ctx.resolve(func)
        if qualified is not None and qualified.startswith("torch"):
            continue
        if not _own_helper_keeps_grad_off(inner, given, ctx, seen):  # type: ignore[arg-type]
            return True
    return False


def _own_helper_keeps_grad_off(call: cst.Call, given: int, ctx: "Context", seen: set) -> bool:
    """Is the callee a module-level function of this file (defined once) that computes no gradients
    and hands the model it is given on only to torch or to such functions of the file?  Its code is
    in view: wavenet_vocoder's `data_parallel_workaround(model, inputs)` replicates and applies it,
    `save_checkpoint(device, model, ...)` saves it."""
    func = call.func
    argument = call.args[given]
    if type(func) is not cst.Name or argument.star or values.own_definition(func, ctx) != "function":
        return False
    definition = top_function(ctx, func.value)
    if definition is None or definition.decorators:
        return False
    params = [p.name.value for p in definition.params.params]
    if argument.keyword is not None:
        parameter = argument.keyword.value
    elif given < len(params) and not any(a.keyword is not None for a in call.args[:given]):
        parameter = params[given]
    else:
        return False
    if parameter not in params or id(definition) in seen:
        return id(definition) in seen and parameter in params  # (recursion: already being checked)
    seen.add(id(definition))
    return not computes_gradients(definition, ctx) and not _hands_away(definition.body, parameter, ctx, seen)


_INSPECTING_BUILTINS = frozenset({"print", "len", "type", "id", "str", "repr", "isinstance", "hasattr", "getattr"})


def _selects_other_phase(test: cst.BaseExpression, training: str, ctx: "Context") -> bool:
    """Is `test` `phase == C` for the selector of the switch's test `training` (`phase=='train'`,
    keyed by `_test_key`) and another constant C?"""
    if type(test) is not cst.Comparison or len(test.comparisons) != 1 or type(test.comparisons[0].operator) is not cst.Equal:  # type: ignore[attr-defined]
        return False
    left, right = test.left, test.comparisons[0].comparator  # type: ignore[attr-defined]
    if type(left) is not cst.Name or not _constant(right):
        return False
    selector, equals, chosen = training.partition("==")
    return bool(equals) and selector == left.value and constant_key(right) != chosen  # type: ignore[attr-defined]


def _branches_after(node: cst.If) -> list:
    """What an `if` runs when its test is false: its `elif` / `else` (nothing without one)."""
    orelse = node.orelse
    if orelse is None:
        return []
    return [orelse] if type(orelse) is cst.If else [orelse.body]


def _mode_helper_trains(statement: cst.CSTNode, ctx: "Context") -> bool:
    """`self.net_mode(train=True)`: a method of the class that calls `self.net.train()` for this argument."""
    call = mode_helper_call(statement, ctx)
    return call is not None and train_call_shape(statement) is None and call.func.attr.value == "train"  # type: ignore[attr-defined]


def _train_mode_call(statement: cst.CSTNode) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    return any(_is_train_call(n) for n in code_descendants(statement))
