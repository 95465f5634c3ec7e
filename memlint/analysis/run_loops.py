"""Loops over runs, on CPython's AST: a `for` whose target is an attribute of the run's configuration.

`for opt.weights in opt.weights: run(**vars(opt))` (YOLOv5's `export.py` / `val.py` `main`) sets the
configuration anew for each item and hands it to a function that does a whole run with it: loads
the weights, builds its inputs, exports or evaluates.  Each iteration is one run, not one step of
a run, however much the function called runs a model; code it runs before its own loops runs once
per run.  Evidence: the loop's target alone (`args.seed`, `self.opt.weights`: `tables.CONFIGURATION_ROOTS`).
The project pass's summaries ask it here; `roles.reconfigures_run` is the same fact on libcst's tree
(the semantic model's loop scope).  A loop that binds a plain name is not judged here.
"""

from __future__ import annotations

import ast

from memlint.analysis.configured_choices import configuration_value


def reconfigures_run(loop: ast.AST) -> bool:
    """Does the `for` loop bind an attribute of the run's configuration (`for opt.weights in ...`)?"""
    return isinstance(loop, (ast.For, ast.AsyncFor)) and type(loop.target) is ast.Attribute and configuration_value(loop.target)
