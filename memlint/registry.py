"""Finding the rules: the built-in ones listed in `memlint.rules.CATALOGUE` (one module each), plus
third-party rules registered under the `memlint.rules` entry-point group (an entry point names a
Rule subclass or a module that defines some).

`rule_entries()` answers "which rules exist, and which are on by default" without importing the
built-in rule modules (and with them libcst); `all_rules()` imports the rule classes.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Iterable

from memlint.rule import CODE_PATTERN, Rule

# Codes reserved for findings that are not rules.
SYNTAX_ERROR = ("ML000", "invalid-syntax")
INTERNAL_ERROR = ("ML900", "internal-error")
RESERVED_CODES = {SYNTAX_ERROR[0], INTERNAL_ERROR[0]}


class RegistryError(Exception):
    pass


@dataclass(frozen=True)
class RuleEntry:
    code: str
    name: str
    default_enabled: bool


def _rules_in(module: ModuleType) -> Iterable[type[Rule]]:
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if issubclass(obj, Rule) and obj is not Rule and obj.__module__ == module.__name__:
            yield obj


def _may_have_plugins() -> bool:
    """Does any installed distribution declare a `memlint.rules` entry point?  Reading the
    entry-point files on sys.path costs a few milliseconds; importing importlib.metadata and
    scanning every distribution with it costs 30-50 ms of each `memlint check`'s start-up.  A path
    entry that is not a directory (a zipped egg) is left to importlib.metadata."""
    for entry in sys.path:
        directory = entry or "."
        if not os.path.isdir(directory):
            if os.path.exists(directory):
                return True
            continue
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if name.endswith((".dist-info", ".egg-info")):
                try:
                    with open(os.path.join(directory, name, "entry_points.txt"), encoding="utf-8", errors="replace") as file:
                        if "memlint.rules" in file.read():
                            return True
                except OSError:
                    continue
    return False


@functools.lru_cache(maxsize=1)
def third_party_rules() -> tuple[type[Rule], ...]:
    """The rule classes named by `memlint.rules` entry points, in entry-point order."""
    if not _may_have_plugins():
        return ()
    from importlib.metadata import entry_points

    found: list[type[Rule]] = []
    for entry in entry_points(group="memlint.rules"):
        loaded = entry.load()
        if inspect.isclass(loaded) and issubclass(loaded, Rule):
            found.append(loaded)
        elif inspect.ismodule(loaded):
            found.extend(_rules_in(loaded))
    return tuple(found)


@functools.lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    """Every known rule class, sorted by code."""
    from memlint.rules import CATALOGUE

    found: dict[str, type[Rule]] = {}

    def add(rule: type[Rule], origin: str) -> None:
        code = getattr(rule, "code", None)
        if not isinstance(code, str) or not CODE_PATTERN.match(code) or code in RESERVED_CODES:
            raise RegistryError(f"{origin}: rule {rule.__name__} has an invalid code {code!r}")
        if code in found and found[code] is not rule:
            raise RegistryError(f"{origin}: rule code {code} is defined twice")
        found[code] = rule

    for _, _, _, module_name in CATALOGUE:
        module = importlib.import_module(f"memlint.rules.{module_name}.rule")
        for rule in _rules_in(module):
            add(rule, module.__name__)
    for rule in third_party_rules():
        add(rule, f"entry point rule {rule.__module__}.{rule.__name__}")
    return tuple(found[code] for code in sorted(found))


@functools.lru_cache(maxsize=1)
def rule_entries() -> tuple[RuleEntry, ...]:
    """Code, name and default of every rule, sorted by code; built-in rules are not imported."""
    from memlint.rules import CATALOGUE

    if third_party_rules():  # already imported (libcst with them): all_rules() also validates them
        return tuple(RuleEntry(r.code, r.name, r.default_enabled) for r in all_rules())
    entries = {code: RuleEntry(code, name, enabled) for code, name, enabled, _ in CATALOGUE}
    return tuple(entries[code] for code in sorted(entries))


def rules_by_code() -> dict[str, type[Rule]]:
    return {rule.code: rule for rule in all_rules()}


def find_rule(key: str) -> type[Rule] | None:
    """A rule by code (`ML001`, case-insensitive) or name (`accumulated-graph`)."""
    key_upper = key.upper()
    for rule in all_rules():
        if rule.code == key_upper or rule.name == key.lower():
            return rule
    return None
