"""Whether a module's own names are its own: a fact of the semantic model.

A module's code outside its functions and classes (a script's training loop) binds globals.  A rule
that trusts such a name's value to be read only where the file reads it (ML003: `scores = x @ w`,
then `probs = F.relu(scores)`, in place only where nothing reads `scores` after) must know that no
other code reads it: another file that imports the module (`from data import scores`), or the
file itself by reflection (`globals()["scores"]`, `vars()`, `sys.modules[__name__].__dict__`).

Evidence: the project pass finds no file of the project importing the module, by path or by name
(`FileView.unimported`; a file linted alone is a project of its own), and the file never names
`globals`, `locals`, `vars`, `__import__`, `sys.modules` or `importlib.import_module`, nor the
`__dict__` of anything but `self` or a name bound only to what a call returns (`module =
nn.Module()`: that object's attributes).  Anything else (a dynamic import the pass cannot
see) is not known: the module is then taken to be a script, as a file nobody imports is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from memlint.analysis.bindings import bound_targets
from memlint.analysis.walk import code_descendants

if TYPE_CHECKING:
    from memlint.analysis.context import Context

# Names through which code reads a module's globals by their names, or reaches a module object.
_REFLECTION = frozenset({"globals", "locals", "vars", "__import__"})
_MODULE_LOOKUPS = frozenset({"modules", "import_module"})  # `sys.modules[__name__]`, `importlib.import_module(...)`


def module_names_private(ctx: "Context") -> bool:
    """Does only this file's own code, by name, read the names its module-level code binds?"""
    if not ctx.project.unimported:
        return False
    return ctx.memo("module-names-private", lambda: not _reflects(ctx.module))  # type: ignore[return-value]


def _reflects(module: cst.Module) -> bool:
    dicts: list[cst.BaseExpression] = []
    for node in code_descendants(module):
        kind = type(node)
        if kind is cst.Name and node.value in _REFLECTION:  # type: ignore[attr-defined]
            return True
        if kind is cst.Attribute and node.attr.value in _MODULE_LOOKUPS:  # type: ignore[attr-defined]
            return True
        if kind is cst.Attribute and node.attr.value == "__dict__":  # type: ignore[attr-defined]
            dicts.append(node.value)  # type: ignore[attr-defined]
    if not dicts:
        return False
    # `module.__dict__` of an object the file builds (`module = nn.Module()`, `self.__dict__`) holds
    # that object's attributes, not the module's globals; any other receiver may be the module.
    made = _names_bound_to_calls(module)
    return any(not (type(d) is cst.Name and (d.value == "self" or d.value in made)) for d in dicts)  # type: ignore[attr-defined]


def _names_bound_to_calls(module: cst.Module) -> set[str]:
    """Names every binding of which in the file is a plain `name = <call>`."""
    calls: set[str] = set()
    other: set[str] = set()
    for target, value in bound_targets(module, nested=True):
        if type(target) is cst.Name:
            (calls if type(value) is cst.Call else other).add(target.value)  # type: ignore[attr-defined]
    return calls - other
