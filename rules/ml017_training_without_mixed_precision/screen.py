"""ML017's screen: a necessary condition of the rule reporting (see rule.py).

The text mentions a backward and an optimizer's `step` (or a `.step(...)` handed a callable, an
optimizer closure that backpropagates: memlint.analysis.closures), or the file calls a function of another
file that does part of a training step (`FileView.update_calls` from the project pass: an epoch
loop calling `train_epoch(model, optimizer, ...)` of train/train_epoch.py mentions neither), or it
fits with a Lightning Trainer (`trainer.fit(model)`: the loop, its backward and its step are
Lightning's: memlint.analysis.frameworks.lightning_fit), or trains with torchnet's Engine
(`engine.train(network, iterator, maxepoch, optimizer)`: frameworks.torchnet_engine_run; loosened:
the text names `Engine` or `torchnet`, and `train`). An ignite `Engine`'s `run` is reported only
where the process function of the file backpropagates and steps an optimizer itself, so the text
then names both (frameworks.ignite_engine_run): the last condition keeps it.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from memlint.analysis.tables import BACKWARD_METHODS
from memlint.prescreen.source import Source

_BACKWARD = tuple(sorted(BACKWARD_METHODS))
_STEP_WITH_CLOSURE = re.compile(r"\.step\(\s*(?:closure\s*=\s*)?[A-Za-z_]")


def screen(source: Source, options: Mapping[str, Any]) -> bool:
    project = source.project
    if project is not None and project.steps_elsewhere:
        return True
    if source.mentions("Trainer") and source.mentions("fit"):
        return True
    if source.mentions("Engine", "torchnet") and source.mentions("train"):
        return True
    # (a loop may backpropagate through an optimizer closure, a callable the file hands to
    # `optimizer.step(closure)`: memlint.analysis.closures; the text then has `.step(` with an argument)
    return source.mentions("step") and (source.mentions(*_BACKWARD) or _STEP_WITH_CLOSURE.search(source.text) is not None)
