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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import re

import libcst as cst

from memlint.analysis.tables import EPOCH_END_KEEPS, LIGHTNING_TRAINERS, TORCHNET_ENGINES
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


_GRAD_SWITCH_WORDS = re.compile(r"no_grad|inference_mode|set_grad_enabled|enable_grad")


def torchnet_test_builds_graph(network: cst.BaseExpression, ctx: "Context") -> bool:
    """Does `engine.test(network, ...)` of a torchnet Engine run `network` with its autograd graph
    recorded: `network` names a function of the file that the file also hands to a torchnet
    Engine's `train` (so the parameters it runs require grad: it is what the optimizer steps) and
    that switches grad mode nowhere in its body (`with torch.set_grad_enabled(sample[2]):` would
    decide by the sample's training flag). Anything else (a lambda, an attribute, a network only
    tested) cannot be read, and is False."""
    if type(network) is not cst.Name:
        return False
    name = network.value  # type: ignore[attr-defined]
    if name not in _trained_networks(ctx):
        return False
    functions = [n for n in code_descendants(ctx.module) if type(n) is cst.FunctionDef and n.name.value == name]  # type: ignore[attr-defined]
    return bool(functions) and not any(
        _GRAD_SWITCH_WORDS.search(ctx.module.code_for_node(f)) for f in functions
    ) and not any(f.decorators for f in functions)  # type: ignore[attr-defined]


def _trained_networks(ctx: "Context") -> frozenset[str]:
    """The names the file hands as the network to a torchnet Engine's `train` (any scope's name bound
    only to torchnet's `Engine()`, or `Engine().train(...)` itself)."""

    def build() -> frozenset[str]:
        nodes = list(code_descendants(ctx.module))
        scopes = [ctx.module, *(n for n in nodes if type(n) is cst.FunctionDef)]
        engines = {
            name for scope in scopes for name, built in ctx.model.constructed(scope).items()
            if len(built) == 1 and ctx.resolve(built[0].func) in TORCHNET_ENGINES
        }  # fmt: skip
        found = set()
        for node in nodes:
            if type(node) is not cst.Call or type(node.func) is not cst.Attribute or node.func.attr.value != "train":  # type: ignore[attr-defined]
                continue
            receiver = node.func.value  # type: ignore[attr-defined]
            if type(receiver) is cst.Name and receiver.value in engines or (
                type(receiver) is cst.Call and ctx.resolve(receiver.func) in TORCHNET_ENGINES
            ):
                network = _first_argument(node, "network")  # type: ignore[arg-type]
                if type(network) is cst.Name:
                    found.add(network.value)  # type: ignore[attr-defined]
        return frozenset(found)

    return ctx.memo(("torchnet-trained-networks", id(ctx.module)), build)  # type: ignore[return-value]
