"""Framework semantics that decide how long a value lives: what a training framework keeps of the
code it calls.

PyTorch Lightning 1.x keeps every batch's return value of a step hook when the module overrides the
matching epoch-end hook (tables.EPOCH_END_KEEPS): `validation_step` returning `{"logits": logits}`
next to `validation_epoch_end(self, outputs)` holds every batch's logits until the epoch ends, just as
a list appended to in a loop over the validation loader would.
"""

from __future__ import annotations

from typing import Iterator, Mapping

import libcst as cst

from memlint.analysis.tables import EPOCH_END_KEEPS


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
