"""Finding the rules: every module of the built-in `memlint.rules` package, plus third-party rules
registered under the `memlint.rules` entry-point group (an entry point names a Rule subclass or a
module that defines some)."""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from importlib.metadata import entry_points
from types import ModuleType
from typing import Iterable

from memlint.rule import CODE_PATTERN, Rule

# Codes reserved for findings that are not rules.
SYNTAX_ERROR = ("ML000", "invalid-syntax")
INTERNAL_ERROR = ("ML900", "internal-error")
RESERVED_CODES = {SYNTAX_ERROR[0], INTERNAL_ERROR[0]}


class RegistryError(Exception):
    pass


def _rules_in(module: ModuleType) -> Iterable[type[Rule]]:
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
            yield obj


@functools.lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every known rule class, sorted by code."""
    import memlint.rules as package

    found: dict[str, type[Rule]] = {}

    def add(rule: type[Rule], origin: str) -> None:
        code = getattr(rule, "code", None)
        if not isinstance(code, str) or not CODE_PATTERN.match(code) or code in RESERVED_CODES:
            raise RegistryError(f"{origin}: rule {rule.__name__} has an invalid code {code!r}")
        if code in found and found[code] is not rule:
            raise RegistryError(f"{origin}: rule code {code} is defined twice")
        found[code] = rule

    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for rule in _rules_in(module):
            add(rule, module.__name__)
    for entry in entry_points(group="memlint.rules"):
        loaded = entry.load()
        if inspect.isclass(loaded) and issubclass(loaded, Rule):
            add(loaded, f"entry point {entry.name}")
        elif inspect.ismodule(loaded):
            for rule in _rules_in(loaded):
                add(rule, f"entry point {entry.name}")
    return tuple(found[code] for code in sorted(found))


def rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


def find_rule(key: str) -> type[Rule] | None:
    """A rule by code (`ML001`, case-insensitive) or name (`accumulated-graph`)."""
    key_upper = key.upper()
    for rule in all_rules():
        if rule.code == key_upper or rule.name == key.lower():
            return rule
    return None
