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
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Mapping, Optional

import libcst as cst

from memlint.analysis.tables import EPOCH_END_KEEPS, LIGHTNING_TRAINERS

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
