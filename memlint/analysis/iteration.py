"""How often code runs: on every iteration of a loop, and whether that loop is a training or
evaluation loop (one that runs a model step per iteration) rather than an epoch loop, a loop over
models in a benchmark, or a loop over files.

"Every iteration" means: in the loop body (or in a function that the loop calls in the same file,
see `step_loop_called_functions`), not behind an `if` that makes it periodic or opt-in (a modulo
counter, a config flag), and not in an exception handler (an out-of-memory fallback).  An `if` that
only asks whether an accelerator exists (`if torch.cuda.is_available():`) does not make code
periodic, nor does one that chooses among the run's configured alternatives (`if args.loss ==
"hinge":`, its `elif` and `else`): the configuration does not change between iterations.  Everything here is syntactic and cheap; it is only run on nodes a rule already suspects.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Collection, Iterator, Optional, Sequence, Union

import libcst as cst

from memlint.analysis import tables
from memlint.analysis.cli_defaults import flag_on_by_default
from memlint.analysis.flag_attributes import opt_in_attribute
from memlint.analysis.naming import BATCH_SOURCE, BATCH_STRIDE, BATCH_TARGET, DRAWS_DATA, GENERIC_ITERATOR, LOADERS_BY_KEY, SAMPLE_COUNT, SPLIT_KEY
from memlint.analysis.naming import named_like_model, steps_each_optimizer
from memlint.analysis.random_branches import branch_taken_at_random
from memlint.analysis.shared_branches import done_in_every_branch, shared_statements
from memlint.analysis.step_calls import is_optimizer_step
from memlint.analysis.bindings import target_names
from memlint.pipeline.tree import code_children, code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context, FileFacts, FunctionKey

Loop = Union[cst.For, cst.While]

# Conditions that only ask whether an accelerator is there: they hold on every iteration or never.
_DEVICE_CHECK_CALLS = frozenset({"is_available", "device_count"})


def condition_is_device_check(test: cst.BaseExpression) -> bool:
    """`torch.cuda.is_available()`, `device.type == "cuda"`, `x.is_cuda`, `if self.cuda:`, `if use_gpu:`,
    `if self.device_id is not None:` (`device_ids_given`): not periodic, not opt-in."""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute):
        return test.func.attr.value in _DEVICE_CHECK_CALLS
    if isinstance(test, cst.Attribute):
        return test.attr.value in tables.DEVICE_FLAGS  # set once per run: behind them, every iteration of a run on the device
    if isinstance(test, cst.Name):
        return test.value in tables.DEVICE_FLAGS
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        other = test.comparisons[0].comparator
        if isinstance(other, cst.SimpleString) and other.evaluated_value in ("cuda", "mps", "xpu"):
            return True
        return device_ids_given(test) is not None
    if isinstance(test, cst.BooleanOperation):
        return condition_is_device_check(test.left) and condition_is_device_check(test.right)
    return False


def device_ids_given(test: cst.Comparison) -> Optional[bool]:
    """`self.device_id is not None` / `args.gpu != None` (True), `self.device_id is None` / `== None`
    (False): does the test hold where the run was given accelerators (`tables.DEVICE_IDS`, `None` on
    the host, kept by a run's setting: `_run_setting`)?  None for any other test (`batch.device_id`)."""
    if len(test.comparisons) != 1:
        return None
    target = test.comparisons[0]
    sides = (test.left, target.comparator)
    if not any(type(side) is cst.Name and side.value == "None" for side in sides):
        return None
    named = [side for side in sides if not (type(side) is cst.Name and side.value == "None")]
    if len(named) != 1 or _last_name(named[0]) not in tables.DEVICE_IDS or not _run_setting(named[0]):
        return None
    operator = target.operator
    if isinstance(operator, (cst.IsNot, cst.NotEqual)):
        return True
    return False if isinstance(operator, (cst.Is, cst.Equal)) else None


def holds_on_accelerator(test: cst.BaseExpression) -> Optional[bool]:
    """Which way a device check goes in a run on the accelerator: True for `x.is_cuda`,
    `torch.cuda.is_available()`, `device.type == "cuda"`, `use_gpu and x.is_cuda`, `self.device_id is
    not None`; False for `not x.is_cuda` and `device.type != "cuda"`; None where the test is no
    device check or its polarity is not plain (`a or b`, `x.is_cuda is False`, `args.gpu is None`:
    a run given no id may still run on every GPU)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = holds_on_accelerator(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        if not isinstance(test.operator, cst.And):
            return None
        return True if holds_on_accelerator(test.left) is True and holds_on_accelerator(test.right) is True else None
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1 or not condition_is_device_check(test):
            return None
        given = device_ids_given(test)
        if given is not None:  # no ids (`args.gpu is None`) may still be a run on every accelerator (a `DataParallel`): no polarity
            return True if given else None
        operator = test.comparisons[0].operator
        return True if isinstance(operator, cst.Equal) else False if isinstance(operator, cst.NotEqual) else None
    return True if condition_is_device_check(test) else None


def accelerator_branch(statement: cst.If) -> Optional[cst.BaseSuite]:
    """The branch of `if <device check>: ... else: ...` (or of one without `else`) that a run on the
    accelerator takes: the body where the test holds there (`if x.is_cuda:`), the `else` where it
    does not (`if not features.is_cuda: <CPU kernel> else: <GPU kernel>`, yolo2-pytorch's RoI
    pooling); None for other tests, and for a negated test whose other branch is an `elif` or
    missing (a positive test's body is returned whatever follows it)."""
    holds = holds_on_accelerator(statement.test)
    if holds is True:
        return statement.body
    if holds is False and isinstance(statement.orelse, cst.Else):
        return statement.orelse.body
    return None


# Names that hold the run's configuration (`args.loss`, `opt.mode`, `self.args.padding`): fixed for the run.
_CONFIGURATION_ROOTS = tables.CONFIGURATION_ROOTS
_CHOICE_OPERATORS = (cst.Equal, cst.NotEqual, cst.In, cst.NotIn, cst.Is, cst.IsNot)
_CHOICE_LITERALS = (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)


def condition_is_configured_choice(test: cst.BaseExpression) -> bool:
    """`args.loss == "hinge"`, `self.args.padding == 0`, `cfg.mode in ("a", "b")`, `hyp["loss_ota"] == 1`
    or `"loss_ota" not in hyp` (an entry of a configuration dict, or whether it has one): a choice among the
    run's configured alternatives.  The configuration does not change while the run goes on, so the
    branch it selects (an `elif` or `else` of the chain included) runs on every iteration of that run,
    where a flag (`if args.log_images:`) opts in to extra work and a counter (`if step % 10 == 0:`)
    makes it periodic.  (`configured_choices.configured_choice` asks it of CPython's AST, for the
    project pass's calls.)"""
    if isinstance(test, cst.BooleanOperation):
        return condition_is_configured_choice(test.left) and condition_is_configured_choice(test.right)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, _CHOICE_OPERATORS):
        return False
    sides = (test.left, target.comparator)
    if isinstance(target.operator, (cst.In, cst.NotIn)) and isinstance(test.left, _CHOICE_LITERALS) and _configuration_root(target.comparator):
        return True  # `"loss_ota" not in hyp`: whether the configuration has the key, fixed for the run
    return any(configuration_value(side) or _configuration_entry(side) for side in sides) and any(_literal_choice(side) for side in sides)


def _configuration_root(expr: cst.BaseExpression) -> bool:
    """`hyp`, `cfg`, `self.cfg`, `args.train`: the run's configuration itself (a dict of it, say)."""
    if isinstance(expr, cst.Name):
        return expr.value in _CONFIGURATION_ROOTS
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == "self":
        return expr.attr.value in _CONFIGURATION_ROOTS
    return configuration_value(expr)


def _configuration_entry(expr: cst.BaseExpression) -> bool:
    """`hyp["loss_ota"]`, `self.cfg["mode"]`: an entry, by a string key, of the run's configuration."""
    if not isinstance(expr, cst.Subscript) or len(expr.slice) != 1:
        return False
    key = expr.slice[0].slice
    return isinstance(key, cst.Index) and isinstance(key.value, (cst.SimpleString, cst.ConcatenatedString)) and _configuration_root(expr.value)


def configuration_value(expr: cst.BaseExpression) -> bool:
    """`args.loss`, `self.opt.gan_mode`: an attribute of the run's configuration."""
    names = []
    while isinstance(expr, cst.Attribute):
        names.append(expr.attr.value)
        expr = expr.value
    if not names or not isinstance(expr, cst.Name):
        return False
    root = expr.value if expr.value != "self" else names[-1]
    return root in _CONFIGURATION_ROOTS and (expr.value != "self" or len(names) > 1)


def _literal_choice(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return bool(expr.elements) and all(isinstance(e.value, _CHOICE_LITERALS) for e in expr.elements)
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Minus):
        expr = expr.expression
    return isinstance(expr, _CHOICE_LITERALS) or (isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"))


def opt_in_parameter(test: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> Optional[str]:
    """`if init:` / `if init is True:` in `def forward(self, x, init=False)`: a flag the caller sets
    for a special call (a data-dependent initialisation), off on every ordinary call: the flag's
    name, else None.  (A parameter defaulting to None, `if mask is None:`, is the ordinary call's
    branch, and does not count.)  Whether every caller turns it on is the project pass's
    `FileView.flag_on` (memlint.analysis.flag_arguments)."""
    if function is None:
        return None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not (isinstance(target.operator, (cst.Is, cst.Equal)) and isinstance(target.comparator, cst.Name) and target.comparator.value == "True"):
            return None
        test = test.left
    if not isinstance(test, cst.Name):
        return None
    params = function.params
    for param in (*params.params, *params.kwonly_params):
        if param.name.value == test.value:
            default = param.default
            return test.value if isinstance(default, cst.Name) and default.value == "False" else None
    return None


def condition_is_mode_parameter(test: cst.BaseExpression, function: Optional[cst.FunctionDef]) -> bool:
    """`if distance == 'l_inf':` ... `elif distance == 'l_2':` in `def trades_loss(..., distance='l_inf')`:
    a parameter whose default is a string, compared with strings, picks one of the function's modes.
    A caller passes the mode its run is configured with (a loss's distance, a sampler's method), so
    the branch runs on every call of that run, as a configured choice (`args.loss == "hinge"`) does;
    a flag defaulting to False is the opt-in call's instead (`opt_in_parameter`)."""
    if function is None:
        return False
    if isinstance(test, cst.BooleanOperation):
        return condition_is_mode_parameter(test.left, function) and condition_is_mode_parameter(test.right, function)
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)):
        return False
    sides = (test.left, target.comparator)
    names = [side.value for side in sides if isinstance(side, cst.Name)]
    strings = [side for side in sides if _string_choice(side)]
    if len(names) != 1 or len(strings) != 1:
        return False
    params = function.params
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.name.value == names[0]:
            return isinstance(param.default, (cst.SimpleString, cst.ConcatenatedString))
    return False


def _string_choice(expr: cst.BaseExpression) -> bool:
    """`'l_2'`, `("gumbel", "sample")`: a string or a literal collection of strings."""
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return bool(expr.elements) and all(isinstance(e.value, (cst.SimpleString, cst.ConcatenatedString)) for e in expr.elements)
    return isinstance(expr, (cst.SimpleString, cst.ConcatenatedString))


def runs_whenever_reached(test: cst.BaseExpression) -> bool:
    """A condition that holds on every iteration of a run or on none of them: a device check or a
    configured choice."""
    return condition_is_device_check(test) or condition_is_configured_choice(test)


def every_iteration(ctx: "Context", configured: Callable[[cst.CSTNode], bool] = lambda node: False, at: Sequence[cst.CSTNode] = ()) -> bool:
    """Does the code being visited run on every iteration of its innermost loop?

    Outside any loop, "iteration" means every call of the enclosing function: the question is then
    whether the code runs unconditionally in that function.  `configured` says which other `if`
    statements run whenever reached (`configured_overrides`, found where their block is seen).
    `at`: the nodes being judged; an `if` whose every branch runs an equal copy of the statement
    holding each of them (`shared_branches.done_in_every_branch`) does not make them conditional.
    """
    frame = ctx.frame
    if frame.handlers:
        return False
    depth = len(frame.loops)
    return all(runs_whenever_reached(node.test) or configured(node) or _shared(node, at, ctx) for node, d in frame.conditions if d == depth)


def _shared(condition: cst.CSTNode, at: Sequence[cst.CSTNode], ctx: "Context") -> bool:
    """Does every branch of `condition`'s chain run the statements holding `at` (all of them), after
    the same statements?  Each chain's shared statements are found once per file (`ctx.memo`)."""
    if not at or type(condition) is not cst.If:
        return False
    shared = ctx.memo(("shared-branches", id(condition)), lambda: (condition, shared_statements(condition)))  # type: ignore[arg-type]
    if shared[0] is not condition:  # type: ignore[index]
        return False
    return all(done_in_every_branch(condition, node, shared[1]) for node in at)  # type: ignore[index]



def every_call(ctx: "Context", configured: Callable[[cst.CSTNode], bool] = lambda node: False, at: Sequence[cst.CSTNode] = ()) -> bool:
    """Does the code being visited run on every call of its function: no `if` around it, at any
    depth of loops, but device checks, configured choices, `configured` overrides and chains whose
    every branch runs the statements holding `at` (`every_iteration`'s), and not in an exception
    handler?  (`every_iteration` asks it of the innermost loop only.)"""
    frame = ctx.frame
    return not frame.handlers and all(runs_whenever_reached(node.test) or configured(node) or _shared(node, at, ctx) for node, _ in frame.conditions)


def configured_branch(node: cst.CSTNode, ctx: "Context", overrides: Collection[int]) -> bool:
    """An `if` that runs whenever reached in a run: it picks the run's value (`configured_overrides`,
    whose ids the caller collected in `overrides` where it saw their block), tests a command-line
    flag the script declares on by default (`cli_defaults.flag_on_by_default`), picks the
    function's mode by a parameter with a string default (`condition_is_mode_parameter`), or tests
    a flag parameter every call turns on (`flag_turned_on`)."""
    if id(node) in overrides:
        return True
    return type(node) is cst.If and (
        flag_on_by_default(node.test, ctx) or condition_is_mode_parameter(node.test, ctx.function_node) or flag_turned_on(node.test, ctx)
    )


def flag_turned_on(test: cst.BaseExpression, ctx: "Context") -> bool:
    """`if cuda:` of `def sinc(band, t, cuda=False)` where every call of the function in the project
    turns the flag on (`sinc(..., cuda)`, `gumbel_softmax(x, hard=True)`: the project pass's
    `FileView.flag_on`, memlint.analysis.flag_arguments): the branch runs on every call."""
    flag = opt_in_parameter(test, ctx.function_node)
    return flag is not None and ctx.function_key is not None and ctx.project.flag_on(ctx.function_key, flag)

def attribute_flag_off(test: cst.BaseExpression, ctx: "Context") -> bool:
    """`if self.lu_factorize:` where the class keeps a constructor parameter defaulting to False
    (`flag_attributes.opt_in_attribute`) that some construction of the class in the project leaves
    off (the project pass's `flag_left_off` of its `__init__`: `Glow(width, depth)`): the branch is
    an opt-in instance's.  Where the pass sees no construction (`norm_layer = ActNorm` handed on),
    nothing says how the instances are built."""
    flag = opt_in_attribute(test, ctx)
    key = ctx.function_key
    return flag is not None and key is not None and ctx.project.flag_left_off(("method", key[1], "__init__"), flag)


def configured_overrides(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.If]:
    """The `if` statements of a block that pick a value by the run's configuration: `ff = A` then
    `if opt.PCB: ff = B` (a flag of the configuration, `configuration_value`; no `else`; a body
    that only rebinds names the statement right before bound).  The configuration does not change
    between iterations, so the branch runs on every iteration of a run that sets the flag, as the
    value before it does in the others (`condition_is_configured_choice`'s case, written as a flag)."""
    for before, statement in zip(statements, statements[1:]):
        if type(statement) is not cst.If or statement.orelse is not None or not configuration_value(statement.test):
            continue
        bound = _names_assigned(before)
        body = statement.body.body if type(statement.body) is cst.IndentedBlock else ()
        if bound and body and all(_names_assigned(inner) and _names_assigned(inner) <= bound for inner in body):
            yield statement


def _names_assigned(statement: cst.CSTNode) -> frozenset[str]:
    """`a = ...` / `a = b = ...` on a line of its own: {"a", "b"}; anything else: empty."""
    if type(statement) is not cst.SimpleStatementLine or len(statement.body) != 1 or type(statement.body[0]) is not cst.Assign:
        return frozenset()
    targets = [t.target for t in statement.body[0].targets]
    if not all(type(t) is cst.Name for t in targets):
        return frozenset()
    return frozenset(t.value for t in targets)  # type: ignore[attr-defined]


def every_training_step(ctx: "Context", configured: Callable[[cst.CSTNode], bool] = lambda node: False, at: Sequence[cst.CSTNode] = ()) -> bool:
    """Does the code being visited run with every training step its innermost loop takes?  As
    `every_iteration`, and also behind an `if` (with no `else`) whose own body trains
    (`branch_trains`): `if step % n_critic == 0:` around a generator's update runs one training
    step each time it is taken, so its code runs once per step of that update, not once in a while
    as a logging branch (`if step % 100 == 0:`, no backward) does.  `configured` says which other
    `if` statements run whenever reached (`configured_overrides`, found where the block is seen);
    `at`, as `every_iteration`'s, the nodes judged, which a chain running them in every branch does
    not make conditional."""
    frame = ctx.frame
    if frame.handlers:
        return False
    depth = len(frame.loops)
    loop = ctx.loop
    return all(
        runs_whenever_reached(node.test) or _shared(node, at, ctx) or branch_trains(node) or configured(node)
        or branch_taken_at_random(node.test, loop, ctx, _steady)  # last: the dearest question, asked of every `elif` a shared statement passes
        for node, d in frame.conditions
        if d == depth
    )


def _steady(test: cst.BaseExpression) -> bool:
    """Holds on every iteration of a run or on none: a device check, a configured choice, or a
    configured number against a literal (`args.beta > 0`)."""
    if runs_whenever_reached(test):
        return True
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if not isinstance(target.operator, (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)):
        return False
    return condition_is_configured_choice(cst.Comparison(left=test.left, comparisons=[target.with_changes(operator=cst.Equal())]))


def branch_trains(node: cst.CSTNode) -> bool:
    """An `if` with no `else` whose own body (not a nested loop or function) calls backward or steps
    an optimizer: the branch is a training step itself (`steps_itself`'s evidence)."""
    if type(node) is not cst.If or node.orelse is not None:  # type: ignore[attr-defined]
        return False
    for child in _own_nodes(node.body):  # type: ignore[attr-defined]
        if isinstance(child, cst.Call) and isinstance(child.func, cst.Attribute):
            name = child.func.attr.value
            if name in tables.BACKWARD_METHODS or is_optimizer_step(child):
                return True
    return False


def _own_nodes(block: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Nodes under `block`, not descending into nested loops, functions or classes."""
    stack: list[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(child for child in code_children(node) if type(child) not in _OWN_SCOPE_ENDS)


def own_statements(loop: Loop) -> Iterator[cst.CSTNode]:
    """Nodes of the loop's body and iterable, not descending into nested loops, functions or classes
    (nor into whitespace, comments, operators and brackets)."""
    stack: list[cst.CSTNode] = [loop.body]
    if isinstance(loop, cst.For):
        stack.append(loop.iter)
    else:
        stack.append(loop.test)
    while stack:
        node = stack.pop()
        yield node
        for child in code_children(node):
            if type(child) in _OWN_SCOPE_ENDS:
                continue
            stack.append(child)


_OWN_SCOPE_ENDS = frozenset({cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _callee_name(call: cst.Call) -> Optional[str]:
    func = call.func
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def names_in(node: cst.CSTNode) -> Iterator[str]:
    """The names of every `Name` node in `node` (itself included), in no set order."""
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            yield current.value
        stack.extend(code_children(current))


def plain_loop(loop: cst.CSTNode, name: str) -> bool:
    """Is a `for` or `while` loop one whose turns a forward reading of `name` can follow: no `else`,
    an indented body, a header (target, iterable, test) that does not name it, and no `break` or
    `continue` in the body (a turn would end before the body's last statement)?  Asked by
    list_tails.py and producers.py before they join what the turns leave."""
    if loop.orelse is not None or type(loop.body) is not cst.IndentedBlock:  # type: ignore[attr-defined]
        return False
    header = (loop.target, loop.iter) if type(loop) is cst.For else (loop.test,)  # type: ignore[attr-defined]
    if any(name in names_in(part) for part in header):
        return False
    return not any(type(n) in (cst.Break, cst.Continue) for n in code_descendants(loop.body))  # type: ignore[attr-defined]


def is_step_loop(loop: Loop) -> bool:
    """Does every iteration of this loop run a training or evaluation step on a batch?

    Evidence in the loop's own body (not in a nested loop): a backward call, an optimizer step, a
    call of something named like a model or a loss (`model(x)`, `self.net(x)`, `criterion(...)`), or
    iterating over something named like a data loader.  A loop that hands a data loader to a call
    (`train_encoder(train_loader, model)`, a per-epoch function whose name happens to look like a
    model's) runs a whole pass per iteration, not a step, unless it also steps itself.
    """
    if iterates_batches(loop):
        return True
    return runs_model(loop) and not (hands_loader_to_call(loop) and not steps_itself(loop))


def iterates_batches(loop: Loop) -> bool:
    """`for x, y in val_loader`, `for i, batch in enumerate(tqdm(test_dataloader))`: a pass over a
    data split, one batch per iteration (not a decoding loop inside a model, not a loop over layers).
    Also `for i in range(0, len(graphs), batch_size)`: a split walked by index in batches."""
    if isinstance(loop, cst.While):
        return fills_to_sample_count(loop)
    if not isinstance(loop, cst.For):
        return False
    return (
        any(BATCH_SOURCE.search(name) for name in names_in(loop.iter))
        or strides_by_batch(loop.iter)
        or _loader_by_key(loop.iter)
        or _batches_from_iterator(loop)
    )


def _batches_from_iterator(loop: cst.For) -> bool:
    """`for i, batch in enumerate(iterator)`: an iterator named only as one (`naming.GENERIC_ITERATOR`)
    that the loop takes batches from, by the name it binds (`naming.BATCH_TARGET`)."""
    iterable = loop.iter
    while isinstance(iterable, cst.Call) and _callee_name(iterable) in ("tqdm", "enumerate") and iterable.args:
        iterable = iterable.args[0].value
    if not GENERIC_ITERATOR.match(_last_name(iterable) or ""):
        return False
    return any(BATCH_TARGET.match(name) for name in target_names(loop.target))


def _loader_by_key(iterable: cst.BaseExpression) -> bool:
    """`dataloaders[phase]`, `enumerate(tqdm(loaders["val"]))`: the loader of one split, taken by key
    from a collection of loaders (`naming.LOADERS_BY_KEY`), or taken from a collection named `data`
    by a key that names the split (`self.data[phase]`, `naming.SPLIT_KEY`).  A split key alone is
    no proof: `transforms[phase]`, `history[split]` hold no loaders."""
    while isinstance(iterable, cst.Call) and _callee_name(iterable) in ("tqdm", "enumerate", "trange") and iterable.args:
        iterable = iterable.args[0].value
    if not isinstance(iterable, cst.Subscript):
        return False
    if LOADERS_BY_KEY.search(_last_name(iterable.value) or "") is not None:
        return True
    if (_last_name(iterable.value) or "").lower() != "data":
        return False
    key = iterable.slice[0].slice if len(iterable.slice) == 1 else None
    return isinstance(key, cst.Index) and SPLIT_KEY.match(_last_name(key.value) or "") is not None


def fills_to_sample_count(loop: cst.While) -> bool:
    """`while (torch.cat(logits).shape[0] if logits else 0) < num_inception_images:` /
    `while len(feats) < n_samples:`: the loop runs until a collection its own body grows holds a
    number of samples (the bound is named like a count of samples, images or examples,
    `naming.SAMPLE_COUNT`), drawing a batch per iteration: a pass over data as long as that count,
    whatever draws the batches (`sample()`, `next(it)`).  A bound named like a sequence length
    (`while len(tokens) < max_length`) is a decoding loop: not this."""
    comparisons = [n for n in (loop.test, *code_descendants(loop.test)) if isinstance(n, cst.Comparison)]
    if not any(
        isinstance(target.operator, (cst.LessThan, cst.LessThanEqual)) and SAMPLE_COUNT.search(_last_name(target.comparator) or "")
        for comparison in comparisons
        for target in comparison.comparisons
    ):
        return False
    sized = set(names_in(loop.test))
    for node in code_descendants(loop.body):
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and node.target.value in sized:
            return True
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("append", "extend")
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value in sized
        ):
            return True
    return False


def _run_setting(expr: cst.BaseExpression) -> bool:
    """Is `expr` where a run keeps its settings: a plain name, `self.device_id`, or an attribute
    of the run's configuration (`args.gpu`, `self.opt.gpu_ids`)?  Not the attribute of any other
    value (`batch.device_id`, a record's own field, which changes from item to item)."""
    if type(expr) is cst.Name:
        return True
    receiver = expr.value  # type: ignore[attr-defined]
    if type(receiver) is cst.Attribute and type(receiver.value) is cst.Name and receiver.value.value == "self":  # type: ignore[attr-defined]
        return receiver.attr.value in _CONFIGURATION_ROOTS  # type: ignore[attr-defined]  # `self.opt.gpu_ids`
    return (type(receiver) is cst.Name and receiver.value in ("self", *_CONFIGURATION_ROOTS)) or configuration_value(receiver)


def _last_name(expr: cst.BaseExpression) -> Optional[str]:
    """`num_images` / `self.num_images` / `args.n_samples`: the name a bound is read by."""
    if isinstance(expr, cst.Name):
        return expr.value
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return None


def strides_by_batch(iterable: cst.BaseExpression) -> bool:
    """`range(start, len(X), batch_size)` (also in `tqdm(...)` / `enumerate(...)`): the step is named
    like a batch size (`naming.BATCH_STRIDE`: `batch_size`, `self.batch_size`, `bs`) and the stop
    counts a collection.  A stop that is a batch's size or a tensor's length (`range(0, batch_size,
    vae_batch_size)`, `range(0, latents.shape[0], bs)`) may chunk one batch already on the device,
    whose outputs are the result (a VAE decoding a generated batch in parts): not a pass over data."""
    while isinstance(iterable, cst.Call) and _callee_name(iterable) in ("tqdm", "enumerate", "trange") and iterable.args:
        iterable = iterable.args[0].value
    if not (isinstance(iterable, cst.Call) and _callee_name(iterable) == "range" and len(iterable.args) == 3):
        return False
    stop = iterable.args[1].value
    if not (isinstance(stop, cst.Call) and isinstance(stop.func, cst.Name) and stop.func.value == "len"):
        return False
    return named_like_batch_size(iterable.args[2].value)


def named_like_batch_size(expr: cst.BaseExpression) -> bool:
    """A name or attribute that says it holds a batch size: `batch_size`, `self.batch_size`, `bs`
    (`naming.BATCH_STRIDE`)."""
    name = _last_name(expr)
    return name is not None and BATCH_STRIDE.match(name) is not None


def slices_counted_split(loop: Loop) -> bool:
    """A batch-size stride loop (`strides_by_batch`) whose body slices the collection it counts
    (`for i in range(0, len(X), bs): model(X[i:i + bs])`): `X` is one tensor or array, which may sit
    on the device whole (SentEval's splits are `.cuda()`d before the loop), so what the loop keeps of
    its outputs may grow no more than its inputs already there.  A split of examples indexed one by
    one (`[graphs[j] for j in idx[i:i + bs]]`) builds each batch on the host."""
    if not isinstance(loop, cst.For) or not strides_by_batch(loop.iter):
        return False
    iterable = loop.iter
    while _callee_name(iterable) != "range":  # type: ignore[arg-type]
        iterable = iterable.args[0].value  # type: ignore[attr-defined]
    counted = iterable.args[1].value.args  # type: ignore[attr-defined]
    if len(counted) != 1:
        return True
    split = counted[0].value
    for node in code_descendants(loop.body):
        if (
            isinstance(node, cst.Subscript)
            and node.value.deep_equals(split)
            and any(isinstance(element.slice, cst.Slice) for element in node.slice)
        ):
            return True
    return False


def iterates_layers(loop: Loop) -> bool:
    """`for block in self.blocks: x = block(x)`: the loop variable (or what it indexes) is called,
    so the loop runs a model's layers, not training or evaluation steps."""
    if not isinstance(loop, cst.For):
        return False
    targets = {n.value for n in (loop.target, *code_descendants(loop.target)) if isinstance(n, cst.Name)}
    for node in code_descendants(loop.body):
        if isinstance(node, cst.Call):
            func = node.func
            if isinstance(func, cst.Subscript):
                func = func.slice[0].slice.value if func.slice and isinstance(func.slice[0].slice, cst.Index) else func
            if isinstance(func, cst.Name) and func.value in targets:
                return True
    return False


def runs_model(loop: Loop) -> bool:
    """Does the loop's own body call backward, an optimizer step, or something named like a model?"""
    return any(isinstance(node, cst.Call) and is_step_call(node) for node in own_statements(loop))


def function_runs_model(function: cst.FunctionDef, holds_module: Callable[[Optional[str]], bool]) -> bool:
    """Does the function's own body, outside its loops (a loop of its own is a pass, not one run),
    call backward, an optimizer step, or a value the file shows is a model (`self.net_g(self.lq)`
    where `holds_module("self.net_g")`: SemanticModel.module_evidence)?  Direct evidence only: a
    call merely named like a model may be a tokenizer (`self.encoder(text)`) or build one
    (`torchvision.models.resnet50()`)."""
    for node in _own_nodes(function.body):
        if type(node) is not cst.Call:
            continue
        func = node.func  # type: ignore[attr-defined]
        if type(func) is cst.Attribute and (func.attr.value in tables.BACKWARD_METHODS or is_optimizer_step(node)):  # type: ignore[attr-defined,arg-type]
            return True
        if _callee_name(node) in _STEP_METHODS:  # type: ignore[arg-type]
            return True
        if holds_module(_self_or_name(func)):
            return True
    return False


def _self_or_name(expr: cst.BaseExpression) -> Optional[str]:
    """`model` -> "model", `self.net_g` -> "self.net_g"; None for anything else."""
    if type(expr) is cst.Name:
        return expr.value  # type: ignore[attr-defined]
    if type(expr) is cst.Attribute and type(expr.value) is cst.Name and expr.value.value == "self":  # type: ignore[attr-defined]
        return f"self.{expr.attr.value}"  # type: ignore[attr-defined]
    return None


_STEP_METHODS = frozenset({"training_step", "train_step", "validation_step", "eval_step", "test_step", "predict_step"})


def is_step_call(node: cst.Call) -> bool:
    """A call that is evidence of a training or evaluation step (`runs_model`)."""
    name = _callee_name(node)
    if name is None:
        return False
    if name in tables.BACKWARD_METHODS and isinstance(node.func, cst.Attribute):
        return True
    if is_optimizer_step(node):
        return True
    if name in _STEP_METHODS:
        return True
    if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name) and node.func.value.value in (
        "torch", "F", "np", "math",
    ):
        return False
    return bool(named_like_model(name) or tables.LOSS_NAME.match(name))


def is_epoch_loop(loop: Loop) -> bool:
    """`for epoch in range(n)`, or a loop whose body hands a data loader to a call
    (`train_one_epoch(model, train_loader)`) instead of iterating it: each iteration runs a whole
    pass over the data, so code in its own body runs once per pass, not once per batch."""
    if not isinstance(loop, cst.For) or iterates_batches(loop):
        return False
    if any("epoch" in name.lower() for name in names_in(loop.target)):
        return True
    return hands_loader_to_call(loop)


def hands_loader_to_call(loop: Loop) -> bool:
    """Does the loop's own body pass a data loader to a call (`train_encoder(train_loader, model)`)
    rather than iterate it?  Then each iteration runs a whole pass inside that call."""
    if not isinstance(loop, cst.For) or iterates_batches(loop):
        return False
    for node in own_statements(loop):
        if (
            isinstance(node, cst.Call)
            and _callee_name(node) not in _BATCH_READERS
            and any(not arg.star and any(BATCH_SOURCE.search(n) for n in _plain_names(arg.value)) for arg in node.args)
        ):
            return True
    return False


def hands_built_loader(loop: Loop) -> bool:
    """Does the loop's own body build a data loader and pass it to a call (`support_loader =
    DataLoader(task.support); inner_train(model, support_loader)`, or `inner_train(model,
    DataLoader(...))`)?  Each iteration then runs a whole pass over that loader inside the call
    (a task of meta-learning), whatever else the loop walks: no step, whatever it is named."""
    if not isinstance(loop, cst.For):
        return False
    built: set[str] = set()  # names the loop's own statements bind to a loader they build
    calls: list[cst.Call] = []
    for node in own_statements(loop):
        if type(node) is cst.Assign and _builds_loader(node.value) and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:  # type: ignore[attr-defined]
            built.add(node.targets[0].target.value)  # type: ignore[attr-defined]
        elif type(node) is cst.Call:
            calls.append(node)  # type: ignore[arg-type]
    for call in calls:
        if _builds_loader(call) or _callee_name(call) in _BATCH_READERS:
            continue
        for arg in call.args:
            value = arg.value
            if _builds_loader(value) or (type(value) is cst.Name and value.value in built):  # type: ignore[attr-defined]
                return True
    return False


def _builds_loader(expr: cst.BaseExpression) -> bool:
    """`DataLoader(...)`, `torch.utils.data.DataLoader(...)`, `build_dataloader(...)`."""
    if type(expr) is not cst.Call:
        return False
    name = _callee_name(expr)  # type: ignore[arg-type]
    return name is not None and "loader" in name.lower()


def steps_itself(loop: Loop) -> bool:
    """Does the loop's own body call backward or an optimizer's step (not through a helper)?"""
    for node in own_statements(loop):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
            name = node.func.attr.value
            if name in tables.BACKWARD_METHODS or is_optimizer_step(node):
                return True
    return False


def optimizer_loop_target(loop: Loop) -> Optional[str]:
    """`for optimizer in optimizers:` / `for o in self.optims:` / `for opt in opt_list:`: the name each
    optimizer is bound to, when the loop iterates a collection named like optimizers or binds each
    element to a name like one optimizer's (`opt`, `optimizer`: naming.OPTIMIZER_ONLY_NAME; the
    askers only use it for that name's own `.step()`).  Such a loop steps the optimizers of one
    training step: its `o.step()` is an optimizer step of the loop (or the function) around it, not
    a loop of its own (a training loop that steps an encoder's and a decoder's optimizer, or a
    trainer's `step(opt_list)` helper)."""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
        return None
    iterable = loop.iter
    collection = iterable.value if isinstance(iterable, cst.Name) else iterable.attr.value if isinstance(iterable, cst.Attribute) else None
    return loop.target.value if steps_each_optimizer(loop.target.value, collection) else None


# Calls that take one batch from a loader (or wrap it for iteration): not a pass over it.
_BATCH_READERS = frozenset({"iter", "next", "enumerate", "zip", "tqdm", "cycle", "islice", "len", "list"})


def _plain_names(expr: cst.BaseExpression) -> list[str]:
    """`train_loader` -> ["train_loader"], `self.val_loader` -> ["val_loader"]; other shapes -> []."""
    if isinstance(expr, cst.Name):
        return [expr.value]
    if isinstance(expr, cst.Attribute):
        return [expr.attr.value]
    return []


def runs_own_pass(function: cst.FunctionDef) -> bool:
    """Does this function run a training or evaluation pass itself (a loop over a data loader, or one
    that runs a model step per iteration, in its own body)?  Code of it outside that loop runs once
    per pass, however often the function is called.  A `while` loop that runs a model but steps no
    optimizer and calls no backward is a decoding loop over one input (beam search in a
    `translate(sentence)` called once per test batch), not a pass: the function's other code runs
    with every call."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
            continue
        if (kind is cst.For or kind is cst.While) and is_step_loop(node) and not is_epoch_loop(node):  # type: ignore[arg-type]
            if not refines_one_input(node) if kind is cst.For else steps_itself(node):  # type: ignore[arg-type]
                return True
        stack.extend(code_children(node))
    return False


def refines_one_input(loop: Loop) -> bool:
    """`for _ in range(num_steps):` around an attack's or a sampler's model calls: a loop over a
    count whose body never reads its counter and draws no data (no loader, no `next(...)`, no call
    named like a batch's or data's source): every iteration works on the same input, refining it
    (PGD's perturbation steps), so it is no pass over the data, and the function around it runs its
    other code on every call (`perturb(model, x)` called per training batch).  A loop that reads its
    counter may index data with it: not this.  (summaries' `_refines_one_input` is the same fact on
    CPython's tree.)"""
    if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name) or iterates_batches(loop):
        return False
    iterable = loop.iter
    if not (isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name) and iterable.func.value in ("range", "trange")):
        return False
    if any(BATCH_SOURCE.search(name) for name in names_in(iterable)):  # `range(len(train_loader))`: one step per batch
        return False
    counter = loop.target.value
    rebound = _bound_names(loop.body)  # `for _ in range(iters):` inside binds the name again: no read of the counter
    for node in code_descendants(loop.body):
        if type(node) is cst.Name and (node.value == counter and id(node) not in rebound or BATCH_SOURCE.search(node.value)):
            return False
        if type(node) is cst.Call and DRAWS_DATA.search(_callee_name(node) or ""):
            return False
    return True


def _bound_names(block: cst.CSTNode) -> set[int]:
    """The ids of the names `block` binds as a target of `for`, a comprehension, `=` or `as` (an
    element of an unpacking too): bindings, not reads."""
    found: set[int] = set()
    for node in code_descendants(block):
        kind = type(node)
        if kind in (cst.For, cst.CompFor, cst.AssignTarget):
            target = node.target  # type: ignore[attr-defined]
        elif kind is cst.AsName:
            target = node.name  # type: ignore[attr-defined]
        else:
            continue
        pending = [target]
        while pending:
            current = pending.pop()
            if type(current) is cst.Name:
                found.add(id(current))
            elif type(current) in (cst.Tuple, cst.List):
                pending.extend(e.value for e in current.elements)  # type: ignore[attr-defined]
            elif type(current) is cst.StarredElement:
                pending.append(current.value)  # type: ignore[attr-defined]
    return found


def step_loop_called_functions(facts: "FileFacts", is_step: Callable[[Loop], bool]) -> set["FunctionKey"]:
    """Functions of this file called on every iteration of a training/evaluation loop, directly or
    through other such functions (each call unconditional where it is made; a function defined
    inside another counts only through the calls that see its definition: `FileFacts.reaches`).  `is_step` says which
    loops run once per step: the semantic model's `loop_scope(loop).kind == "step"` for a rule."""
    result: set = set()
    changed = True
    while changed:
        changed = False
        for key in facts.defined - result:
            for site in facts.call_sites.get(key, ()):
                if site.conditional or not facts.reaches(site):  # a namesake of a function nested elsewhere
                    continue
                direct = site.loop is not None and is_step(site.loop)
                via_helper = site.loop is None and bool(site.callers) and site.callers[-1] in result
                if direct or via_helper:
                    result.add(key)
                    changed = True
                    break
    return result
