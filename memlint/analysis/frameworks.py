"""Framework semantics that decide how long a value lives: what a training framework keeps of the
code it calls.

PyTorch Lightning 1.x keeps every batch's return value of a step hook when the module overrides the
matching epoch-end hook (tables.EPOCH_END_KEEPS): `validation_step` returning `{"logits": logits}`
next to `validation_epoch_end(self, outputs)` holds every batch's logits until the epoch ends, just as
a list appended to in a loop over the validation loader would.

A Lightning `Trainer` runs the training loop inside `trainer.fit(module, ...)`: every batch goes
through the module's `training_step`, its backward and its optimizer step, in the precision the
Trainer's `precision=` sets (32 bits when it is not given) on the accelerator its `gpus=` /
`accelerator=` choose (`lightning_fit`).

torchnet's `Engine` (`from torchnet.engine import Engine`, `tnt.engine.Engine()`) runs whole loops
for the code handed to it (`torchnet_engine_run`): `engine.train(network, iterator, maxepoch,
optimizer)` calls `network(sample)` for each sample (it returns the loss and the output), the loss's
`backward()` and `optimizer.step(closure)`, maxepoch times over the iterator: a training loop, in the
precision the network computes in. `engine.test(network, iterator)` calls `network(sample)` over the
iterator with nothing around it: no `no_grad`, so a network whose parameters are trained (the one
handed to `engine.train`) builds an autograd graph for every test batch. Known only where the engine
is certainly torchnet's: a name bound to nothing but `Engine()` resolved to torchnet in its scope or
an enclosing one (protonets' own `Engine` is another class).

pytorch-ignite's `Engine(process_function)` (`from ignite.engine import Engine`) calls
`process_function(engine, batch)` once per batch inside `engine.run(data, max_epochs=...)`
(`ignite_engine_run`): the function is a per-batch step, a training step where it backpropagates and
steps an optimizer, and `run` is the loop over the batches. Projects build the engine in a factory
of their own (`trainer = create_supervised_trainer(model, optimizer, loss_fn)` whose `return
Engine(_update)` hands over a closure): followed through a function of the file whose every return is
such an engine of one function. Anything else (an engine handed in, a lambda, a factory of another
file, ignite's own `create_supervised_trainer`, an `async def` factory, a name a `global` rebinds)
cannot be read, and stays silent. Whether the step trains on every call (`trains_unconditionally`):
its `backward` and optimizer `step` stand in its body, not under a condition (`if optimizer is not
None:` in a step shared with an evaluation engine) nor after an early `return`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import libcst as cst

from memlint.analysis.bindings import bound_by, target_names
from memlint.analysis.step_calls import is_parameter_step
from memlint.analysis.tables import EPOCH_END_KEEPS, IGNITE_ENGINES, LIGHTNING_TRAINERS, TORCHNET_ENGINES
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Trainer arguments that may set the precision some other way (a precision plugin, DeepSpeed's
# config, the 1.x AMP switches): where one is given, the Trainer's precision cannot be read.
_PRECISION_ELSEWHERE = frozenset({"precision", "plugins", "amp_backend", "amp_level", "strategy", "accelerator_connector"})
# Trainer arguments that put the loop on an accelerator unless they say "cpu" / 0 / None.
_ACCELERATOR_ARGUMENTS = frozenset({"gpus", "accelerator", "tpu_cores"})


def kept_step_returns(module: cst.Module) -> Mapping[int, str]:
    """id of each step hook whose returns the Trainer keeps -> the epoch-end hook that receives them."""
    found: dict[int, str] = {}
    for node in _classes(module.body):
        methods = {s.name.value: s for s in node.body.body if isinstance(s, cst.FunctionDef)}
        for step, epoch_end in EPOCH_END_KEEPS.items():
            if step in methods and epoch_end in methods and _uses_outputs(methods[epoch_end]):
                found[id(methods[step])] = epoch_end
    return found


def _classes(statements) -> Iterator[cst.ClassDef]:
    """The classes of a module, nested ones and those under `if` / `try` included."""
    for statement in statements:
        if isinstance(statement, cst.ClassDef):
            yield statement
            yield from _classes(statement.body.body)
        elif isinstance(statement, (cst.If, cst.Try)) and isinstance(statement.body, cst.IndentedBlock):
            yield from _classes(statement.body.body)


def _uses_outputs(epoch_end: cst.FunctionDef) -> bool:
    """`def validation_epoch_end(self, outputs)`: the hook takes the kept values (a 1.x hook;
    `on_validation_epoch_end(self)` of 2.x takes none)."""
    return len(epoch_end.params.params) >= 2


def lightning_fit(call: cst.Call, ctx: "Context") -> Optional[cst.Call]:
    """The Trainer construction behind `trainer.fit(module, ...)` when it trains in 32-bit precision
    on an accelerator, by its own arguments: a Lightning `Trainer(...)` (the name bound to nothing
    else in its scope, or the call itself: `pl.Trainer(...).fit(model)`) with an accelerator
    argument that is not "cpu" / 0 (`gpus=1`, `gpus=args.gpus`, `accelerator="gpu"`) and no
    `precision=` nor anything else that may set one (`plugins=`, `strategy=`, `**kwargs`, positional
    arguments).  None otherwise: a Trainer built from a config or the command line
    (`Trainer.from_argparse_args(args)`, `LightningCLI`) cannot be read, and stays silent."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "fit":
        return None
    receiver = func.value
    if type(receiver) is cst.Call:
        trainer = receiver
    elif type(receiver) is cst.Name:
        scope = ctx.function_node if ctx.function_node is not None and not ctx.binds_at_module_level(receiver.value) else ctx.module
        built = ctx.model.constructed(scope).get(receiver.value, ())
        if len(built) != 1:
            return None
        trainer = built[0]
    else:
        return None
    if ctx.resolve(trainer.func) not in LIGHTNING_TRAINERS or not _trains_on_accelerator_in_32_bits(trainer):
        return None
    return trainer


def _trains_on_accelerator_in_32_bits(trainer: cst.Call) -> bool:
    on_accelerator = False
    for argument in trainer.args:
        if argument.keyword is None:
            return False  # positional or `**kwargs`: cannot tell what is set
        name = argument.keyword.value
        if name in _PRECISION_ELSEWHERE:
            return False
        if name in _ACCELERATOR_ARGUMENTS:
            if _names_host(argument.value):
                return False
            on_accelerator = True
    return on_accelerator


def _names_host(value: cst.BaseExpression) -> bool:
    """`"cpu"`, `0`, `None`, `False`: an accelerator argument that keeps the loop on the host."""
    kind = type(value)
    if kind is cst.SimpleString:
        return value.evaluated_value == "cpu"  # type: ignore[attr-defined]
    if kind is cst.Integer:
        return value.value == "0"  # type: ignore[attr-defined]
    return kind is cst.Name and value.value in ("None", "False")  # type: ignore[attr-defined]


def torchnet_engine_run(call: cst.Call, ctx: "Context") -> Optional[tuple[str, cst.BaseExpression]]:
    """("train", network) for `engine.train(network, iterator, maxepoch, optimizer)` and ("test",
    network) for `engine.test(network, iterator)` when `engine` is a torchnet `Engine`: a name that
    its scope, or the nearest enclosing one that binds it (a hook nested in `main` reading `main`'s
    engine), binds only to `Engine()` of torchnet (or the call itself: `Engine().train(...)`).
    None otherwise, and where the network is not given first (`**kwargs`)."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value not in ("train", "test"):
        return None
    network = _first_argument(call, "network")
    if network is None:
        return None
    receiver = func.value
    if type(receiver) is cst.Name:
        built = _bound_to(receiver.value, ctx)
        if built is None or len(built) != 1:
            return None
        receiver = built[0]
    if type(receiver) is not cst.Call or ctx.resolve(receiver.func) not in TORCHNET_ENGINES:
        return None
    return func.attr.value, network


def _first_argument(call: cst.Call, keyword: str) -> Optional[cst.BaseExpression]:
    if any(argument.star for argument in call.args):
        return None
    for index, argument in enumerate(call.args):
        if (argument.keyword is None and index == 0) or (argument.keyword is not None and argument.keyword.value == keyword):
            return argument.value
    return None


def _bound_to(name: str, ctx: "Context") -> Optional[tuple[cst.Call, ...]]:
    """The constructions `name` is bound to, in the innermost scope around the traversal that binds
    it (classes' bodies are not seen from their methods); None where that scope binds it some
    other way (a parameter, a lower-case call) or where no scope binds it."""
    for frame in reversed(ctx.frames):
        if frame.kind == "class":
            continue
        if name in frame.params:
            return None
        built = ctx.model.constructed(frame.node).get(name)
        if built:
            return built
        if name in frame.names:
            return None
    return None


def ignite_engine_run(call: cst.Call, ctx: "Context") -> Optional[tuple[cst.FunctionDef, cst.Call]]:
    """The process function of the ignite `Engine` whose `engine.run(data, ...)` `call` is, with the
    call that builds that engine (one per engine: two `run`s of it share it): the def
    handed to `Engine(step)` where `engine` is bound, once and only in its scope, to that construction
    or to a call of a function of the file (`create_supervised_trainer(...)`) every `return` of which
    gives such an engine (`return Engine(_update)`, or a name it binds once to one) of the same def.
    `Engine` must be ignite's, bound by the module's imports; a name declared `global` or `nonlocal`
    anywhere in the file is rebound unseen, and an `async def` gives a coroutine, not an engine.
    None otherwise."""
    func = call.func
    if type(func) is not cst.Attribute or func.attr.value != "run" or not call.args or call.args[0].keyword is not None:
        return None
    receiver = func.value
    if type(receiver) not in (cst.Name, cst.Call) or not _imports_ignite(ctx):
        return None  # (most `.run(...)` calls are subprocess's or a session's: no scope walked for them)
    stack = [frame.node for frame in ctx.frames]
    if type(receiver) is cst.Name:
        bound = _sole_call(stack, receiver.value, ctx)
        if bound is None:
            return None
        receiver, stack = bound
    if type(receiver) is not cst.Call:
        return None
    engine = receiver
    step = _ignite_step(receiver, stack, ctx)
    if step is not None:
        return step, engine
    factory = _sole_function(stack, receiver.func.value, ctx) if type(receiver.func) is cst.Name else None  # type: ignore[attr-defined]
    if factory is None or factory.asynchronous is not None:
        return None
    scope = _binding_scope(stack, receiver.func.value, ctx)  # type: ignore[attr-defined]
    inner = [*_down_to(stack, scope), factory]
    steps: set[int] = set()
    found: Optional[cst.FunctionDef] = None
    for node in _scope_nodes(factory):
        if type(node) is not cst.Return:
            continue
        value = node.value  # type: ignore[attr-defined]
        if type(value) is cst.Name:
            built = _sole_call(inner, value.value, ctx)
            value = built[0] if built is not None and built[1][-1] is factory else None
        found = _ignite_step(value, inner, ctx) if type(value) is cst.Call else None
        if found is None:
            return None  # a return of anything else: the factory may build another engine
        steps.add(id(found))
    return (found, engine) if found is not None and len(steps) == 1 else None


def trains_unconditionally(step: cst.FunctionDef) -> bool:
    """Does every call of `step` backpropagate and step an optimizer: a `.backward(...)` call and a
    `.step(...)` call (not a scheduler's) stand as statements of its own body (or of a `with` block
    in it), with no `return` or `raise` before them. A step that backpropagates only under a
    condition (`if optimizer is not None:`, `if is_train:`, `if engine.state.training:`) may serve an
    evaluation engine built from the same factory: not known to train."""
    seen: set[str] = set()
    pending = list(reversed(step.body.body)) if type(step.body) is cst.IndentedBlock else []
    while pending and seen != {"backward", "step"}:
        statement = pending.pop()
        kind = type(statement)
        if kind is cst.With:
            body = statement.body  # type: ignore[attr-defined]
            pending.extend(reversed(body.body) if type(body) is cst.IndentedBlock else ())
            continue
        if kind is cst.SimpleStatementLine:
            for small in statement.body:  # type: ignore[attr-defined]
                if type(small) in (cst.Return, cst.Raise):
                    return False
                call = small.value if type(small) is cst.Expr else None  # type: ignore[attr-defined]
                if type(call) is cst.Call and type(call.func) is cst.Attribute:
                    method = call.func.attr.value
                    if method == "backward" or (method == "step" and is_parameter_step(call)):
                        seen.add(method)
            continue
        if any(type(node) in (cst.Return, cst.Raise) for node in code_descendants(statement, skip=_SCOPES)):
            return False  # an early exit under a condition may skip what follows
    return seen == {"backward", "step"}


def _imports_ignite(ctx: "Context") -> bool:
    """Does the module bind a name of ignite's by its imports (seen so far: imports come first)?
    Asked again only once another module-level import has been seen."""
    return ctx.memo(  # type: ignore[return-value]
        ("imports-ignite", ctx.module_imports),
        lambda: any((binding.qualified or "").startswith("ignite") for binding in ctx.frames[0].names.values()),
    )


def _sole_call(stack: list[cst.CSTNode], name: str, ctx: "Context") -> Optional[tuple[cst.Call, list[cst.CSTNode]]]:
    """The call `name` is bound to where `stack` reads it (its scope binds it by one plain
    assignment, `name = f(...)`, and nothing else, and no `global` / `nonlocal` of the file names
    it), with the scopes down to that one."""
    scope = _binding_scope(stack, name, ctx)
    if scope is None or name in _declared_elsewhere(ctx):
        return None
    bound = _memo_bindings(scope, ctx).get(name, ())
    if len(bound) != 1 or type(bound[0]) is not cst.Assign:
        return None
    assign = bound[0]
    if len(assign.targets) != 1 or type(assign.targets[0].target) is not cst.Name or type(assign.value) is not cst.Call:  # type: ignore[attr-defined]
        return None
    return assign.value, _down_to(stack, scope)  # type: ignore[attr-defined]


def _declared_elsewhere(ctx: "Context") -> frozenset[str]:
    """The names any `global` or `nonlocal` statement of the file declares: a function may rebind
    them in a scope that is not theirs (`global trainer; trainer = Engine(infer)`)."""

    def build() -> frozenset[str]:
        names: set[str] = set()
        for node in code_descendants(ctx.module):
            if type(node) in (cst.Global, cst.Nonlocal):
                names.update(item.name.value for item in node.names)  # type: ignore[attr-defined]
        return frozenset(names)

    return ctx.memo(("declared-global", id(ctx.module)), build)  # type: ignore[return-value]


def _ignite_step(construction: cst.Call, stack: list[cst.CSTNode], ctx: "Context") -> Optional[cst.FunctionDef]:
    """`Engine(step)` of ignite, `step` a def that `stack`'s scopes bind by that `def` alone."""
    func = construction.func
    if type(func) is cst.Name:
        binding = ctx.module_binding(func.value) if _binding_scope(stack, func.value, ctx) is stack[0] else None
        qualified = binding.qualified if binding is not None else None
    else:
        qualified = ctx.resolve(func)
    if qualified not in IGNITE_ENGINES:
        return None
    step = _first_argument(construction, "process_function")
    if type(step) is not cst.Name or step.value in _declared_elsewhere(ctx):  # type: ignore[attr-defined]
        return None
    return _sole_function(stack, step.value, ctx)  # type: ignore[attr-defined]


def _down_to(stack: list[cst.CSTNode], scope: Optional[cst.CSTNode]) -> list[cst.CSTNode]:
    """The scopes of `stack` from the module down to `scope` (compared by identity)."""
    index = next(i for i, node in enumerate(stack) if node is scope)
    return stack[: index + 1]


def _memo_bindings(scope: cst.CSTNode, ctx: "Context") -> dict[str, list[cst.CSTNode]]:
    return ctx.memo(("scope-bindings", id(scope)), lambda: _bindings(scope))  # type: ignore[return-value]


# The calls that set a grad mode, by their last name (`torch.no_grad()`, `autograd.set_grad_enabled(x)`):
# read on the syntax tree, so a comment or a string naming one does not count.
_GRAD_SWITCHES = frozenset({"no_grad", "inference_mode", "set_grad_enabled", "enable_grad"})
_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def torchnet_test_builds_graph(call: cst.Call, ctx: "Context") -> bool:
    """Does `engine.test(h, ...)` of a torchnet Engine run `h` with its autograd graph recorded: `h`
    resolves (by Python's scope rules, here and at the train call) to the very function of the file
    handed to that same engine's `train` (so the parameters it runs require grad: it is what the
    optimizer steps), and neither that function nor any function of the file it calls sets a grad
    mode (`with torch.set_grad_enabled(sample[2]):` in a helper decides by the sample's flag) or is
    decorated. Anything else (a parameter, a lambda, an attribute, a network only tested, another
    scope's `h`) cannot be read, and is False."""
    network = _first_argument(call, "network")
    receiver = call.func.value if type(call.func) is cst.Attribute else None  # type: ignore[attr-defined]
    if type(network) is not cst.Name or type(receiver) is not cst.Name:
        return False
    stack = [frame.node for frame in ctx.frames]
    name, engine = network.value, receiver.value  # type: ignore[attr-defined]
    function = _sole_function(stack, name, ctx)
    engine_scope = _binding_scope(stack, engine, ctx)
    if function is None or engine_scope is None or len(_memo_bindings(engine_scope, ctx).get(engine, ())) != 1:
        return False
    trained = any(
        type(train.func.value) is cst.Name and train.func.value.value == engine  # type: ignore[attr-defined]
        and _binding_scope(scopes, engine, ctx) is engine_scope
        and type(handed := _first_argument(train, "network")) is cst.Name
        and _sole_function(scopes, handed.value, ctx) is function  # type: ignore[attr-defined]
        for train, scopes in _train_calls(ctx)
    )  # fmt: skip
    return trained and not _switches_grad(function, ctx)


def _train_calls(ctx: "Context") -> list[tuple[cst.Call, list[cst.CSTNode]]]:
    """Every `x.train(...)` call of the file, with the scopes around it (module first)."""

    def build() -> list:
        found: list = []
        pending: list[tuple[cst.CSTNode, list[cst.CSTNode]]] = [(ctx.module, [ctx.module])]
        while pending:
            scope, stack = pending.pop()
            for node in _scope_nodes(scope):
                if type(node) in (cst.FunctionDef, cst.ClassDef):
                    pending.append((node, [*stack, node]))
                elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value == "train":  # type: ignore[attr-defined]
                    found.append((node, stack))
        return found

    return ctx.memo(("torchnet-train-calls", id(ctx.module)), build)  # type: ignore[return-value]


def _scope_nodes(scope: cst.CSTNode):
    """The nodes of `scope`'s own body (nested functions and classes yielded, not entered)."""
    body = scope if type(scope) is cst.Module else scope.body  # type: ignore[attr-defined]
    return code_descendants(body, skip=_SCOPES)


def _bindings(scope: cst.CSTNode) -> dict[str, list[cst.CSTNode]]:
    """What binds each name in `scope` itself: a `def` (the FunctionDef), or any other binding (a
    parameter, an assignment, a loop or `with` target, an import, a class, `del`, a `match` capture,
    `global` / `nonlocal`: the node that binds it, `bindings.bound_by`)."""
    bound: dict[str, list[cst.CSTNode]] = {}
    if type(scope) is cst.FunctionDef:
        params = scope.params  # type: ignore[attr-defined]
        for param in (*params.posonly_params, *params.params, *params.kwonly_params, params.star_arg, params.star_kwarg):
            if isinstance(param, cst.Param):
                bound.setdefault(param.name.value, []).append(param)
    for node in _scope_nodes(scope):
        for target in bound_by(node, declarations=True):
            for bound_name in target_names(target):
                bound.setdefault(bound_name, []).append(node)
    return bound


def _binding_scope(stack: list[cst.CSTNode], name: str, ctx: "Context") -> Optional[cst.CSTNode]:
    """The scope a read of `name` inside `stack` (module first) finds it bound in, by Python's rules:
    the innermost function (or the module) that binds it, a class body seen only from itself."""
    for index in range(len(stack) - 1, -1, -1):
        scope = stack[index]
        if type(scope) is cst.ClassDef and index != len(stack) - 1:
            continue
        if name in _memo_bindings(scope, ctx):
            return scope
    return None


def _sole_function(stack: list[cst.CSTNode], name: str, ctx: "Context") -> Optional[cst.FunctionDef]:
    """The function `name` names inside `stack`: its scope binds it by one `def` and nothing else."""
    scope = _binding_scope(stack, name, ctx)
    if scope is None:
        return None
    bound = _memo_bindings(scope, ctx)[name]
    return bound[0] if len(bound) == 1 and type(bound[0]) is cst.FunctionDef else None  # type: ignore[return-value]


def _switches_grad(function: cst.FunctionDef, ctx: "Context") -> bool:
    """Does `function`, or a function of the file it calls (by its name, any of that name, and so on),
    set a grad mode or carry a decorator (which may)?"""
    by_name: dict[str, list[cst.FunctionDef]] = {}
    for node in code_descendants(ctx.module):
        if type(node) is cst.FunctionDef:
            by_name.setdefault(node.name.value, []).append(node)  # type: ignore[attr-defined]
    seen: set[int] = set()
    pending = [function]
    while pending:
        current = pending.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        if current.decorators:
            return True
        for node in code_descendants(current.body):
            if type(node) is not cst.Call:
                continue
            func = node.func  # type: ignore[attr-defined]
            called = func.value if type(func) is cst.Name else func.attr.value if type(func) is cst.Attribute else None  # type: ignore[attr-defined]
            if called in _GRAD_SWITCHES:
                return True
            pending.extend(by_name.get(called, ()))  # type: ignore[arg-type]
    return False
