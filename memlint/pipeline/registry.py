"""Finding the rules: the built-in ones, one folder each in the `memlint.rules` package, plus
third-party rules registered under the `memlint.rules` entry-point group (an entry point names a
Rule subclass or a module that defines some).

A rule folder (`rules/ml001_accumulated_graph/`) holds `meta.py` (its `META`: code, name, default,
options, trigger words), an optional `screen.py` and `rule.py` (the Rule class).  `builtin_rules()`
finds the folders and reads their metas, so `rule_entries()` and `rule_options()` answer "which
rules exist, which are on by default, which options do they read" without importing the rule
modules (and with them libcst); `all_rules()` imports the rule classes.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pkgutil
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Iterable

from memlint.diagnostics import Severity
from memlint.rule import CODE_PATTERN, Meta, Option, Rule

# Codes reserved for findings that are not rules: about the file rather than its code.  ML000: it is
# not Python; ML900: memlint itself failed on it (a bug: exit 2); ML901: valid Python that memlint did
# not analyse, wholly or in part (too large, too deep or too dense for its parser: a finding, exit 1,
# as Ruff's E902 is for a file it cannot read).
SYNTAX_ERROR = ("ML000", "invalid-syntax")
INTERNAL_ERROR = ("ML900", "internal-error")
NOT_ANALYSED = ("ML901", "not-analysed")
RESERVED = (SYNTAX_ERROR, INTERNAL_ERROR, NOT_ANALYSED)
RESERVED_CODES = {code for code, _ in RESERVED}


def reserved_severity(code: str) -> Severity:
    """A file left out is a warning about the run, not an error in the code (ML000) or in memlint (ML900)."""
    return Severity.WARNING if code == NOT_ANALYSED[0] else Severity.ERROR


class RegistryError(Exception):
    pass


@dataclass(frozen=True)
class RuleEntry:
    code: str
    name: str
    default_enabled: bool  # as the rule declares it: whether a prefix (`ML0`, `ACME`) selects it
    third_party: bool = False  # from a `memlint.rules` entry point: never in the default set nor ALL

    @property
    def on_by_default(self) -> bool:
        """In the rules memlint runs when nothing is selected.  A plugin's rules are not: installing
        a package (perhaps as some other package's dependency) must not change what a check
        reports; selecting their code or prefix turns them on."""
        return self.default_enabled and not self.third_party


@dataclass(frozen=True)
class BuiltinRule:
    folder: str  # the subpackage of memlint.rules: "ml001_accumulated_graph"
    meta: Meta


@functools.lru_cache(maxsize=1)
def builtin_rules() -> tuple[BuiltinRule, ...]:
    """Every rule folder of `memlint.rules` with its meta, sorted by code; imports only the metas."""
    import memlint.rules

    found: dict[str, BuiltinRule] = {}
    for info in pkgutil.iter_modules(memlint.rules.__path__):
        if not info.ispkg:
            continue
        origin = f"memlint.rules.{info.name}.meta"
        try:
            module = importlib.import_module(origin)
        except ModuleNotFoundError as error:
            if error.name != origin:
                raise
            raise RegistryError(f"rule folder {info.name} has no meta.py") from None
        meta = getattr(module, "META", None)
        if not isinstance(meta, Meta):
            raise RegistryError(f"{origin}: META is not a memlint.rule.Meta")
        if not CODE_PATTERN.match(meta.code) or meta.code in RESERVED_CODES:
            raise RegistryError(f"{origin}: invalid code {meta.code!r}")
        if meta.code in found:
            raise RegistryError(f"{origin}: rule code {meta.code} is defined twice")
        found[meta.code] = BuiltinRule(info.name, meta)
    return tuple(found[code] for code in sorted(found))


@functools.lru_cache(maxsize=1)
def rule_options() -> tuple[Option, ...]:
    """The options the built-in rules read, in code order; a key belongs to one rule only."""
    options: dict[str, Option] = {}
    for builtin in builtin_rules():
        for option in builtin.meta.options:
            if option.key in options:
                raise RegistryError(f"{builtin.meta.code}: option '{option.key}' is declared by another rule")
            options[option.key] = option
    return tuple(options.values())


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
    found: dict[str, type[Rule]] = {}

    def add(rule: type[Rule], origin: str) -> None:
        code = getattr(rule, "code", None)
        if not isinstance(code, str) or not CODE_PATTERN.match(code) or code in RESERVED_CODES:
            raise RegistryError(f"{origin}: rule {rule.__name__} has an invalid code {code!r}")
        if code in found and found[code] is not rule:
            raise RegistryError(f"{origin}: rule code {code} is defined twice")
        found[code] = rule

    for builtin in builtin_rules():
        module = importlib.import_module(f"memlint.rules.{builtin.folder}.rule")
        rules = list(_rules_in(module))
        if not any(rule.meta is builtin.meta for rule in rules):
            raise RegistryError(f"{module.__name__}: no rule class names its folder's META (`meta = META`)")
        for rule in rules:
            add(rule, module.__name__)
    for rule in third_party_rules():
        add(rule, f"entry point rule {rule.__module__}.{rule.__name__}")
    return tuple(found[code] for code in sorted(found))


@functools.lru_cache(maxsize=1)
def rule_entries() -> tuple[RuleEntry, ...]:
    """Code, name and default of every rule, sorted by code; built-in rules are not imported."""
    plugins = third_party_rules()
    if plugins:  # already imported (libcst with them): all_rules() also validates them
        return tuple(RuleEntry(r.code, r.name, r.default_enabled, r in plugins) for r in all_rules())
    return tuple(RuleEntry(b.meta.code, b.meta.name, b.meta.default_enabled) for b in builtin_rules())


def on_by_default(rule: type[Rule]) -> bool:
    """Whether a rule class runs when nothing selects it (RuleEntry.on_by_default)."""
    return rule.default_enabled and rule not in third_party_rules()


def find_rule(key: str) -> type[Rule] | None:
    """A rule by code (`ML001`, case-insensitive) or name (`accumulated-graph`)."""
    key_upper = key.upper()
    for rule in all_rules():
        if rule.code == key_upper or rule.name == key.lower():
            return rule
    return None
