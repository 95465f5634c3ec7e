"""`[tool.memlint]` configuration: discovery, validation (unknown keys and wrong types are errors
that name the file and the key) and the resolved settings a run uses."""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping, Optional, Sequence

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

from memlint.pipeline.registry import rule_options
from memlint.rule import boolean
from memlint.units import parse_size

DEFAULT_EXCLUDE = (
    ".bzr", ".direnv", ".eggs", ".git", ".hg", ".ipynb_checkpoints", ".memlint_cache", ".mypy_cache",
    ".nox", ".pytest_cache", ".ruff_cache", ".svn", ".tox", ".venv", "__pycache__", "__pypackages__",
    "_build", "build", "dist", "node_modules", "site-packages", "venv", "*.egg-info",
)  # fmt: skip


DEFAULT_MAX_FILE_SIZE = 2 * 2**20  # "2MiB"


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


# ---------------------------------------------------------------------------- the schema


def _string_list(value: Any) -> list[str]:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise ValueError("expected a list of strings")


def _per_file_ignores(value: Any) -> dict[str, list[str]]:
    if isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(c, str) for c in v) for k, v in value.items()
    ):
        return value
    raise ValueError('expected a table of glob = ["CODE", ...]')


_string_list.json_schema = {"type": "array", "items": {"type": "string"}}  # type: ignore[attr-defined]
_per_file_ignores.json_schema = {  # type: ignore[attr-defined]
    "type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}
}


# key -> (validator, default).  The options rules read come from their meta.py files (below), so
# that a typo in one is an error too.
SCHEMA: dict[str, tuple[Callable[[Any], Any], Any]] = {
    "select": (_string_list, None),
    "extend-select": (_string_list, []),
    "ignore": (_string_list, []),
    "exclude": (_string_list, None),
    "extend-exclude": (_string_list, []),
    "per-file-ignores": (_per_file_ignores, {}),
    "unsafe-fixes": (boolean, False),
    # Larger files are not analysed (an ML900 finding says so): libcst's tree takes 0.3-0.8 GB of
    # memory per MB of source.  The largest file of torch, transformers and timm is 1.4 MB.
    "max-file-size": (parse_size, DEFAULT_MAX_FILE_SIZE),
    # Summaries of the rest of the project for the project pass, not only of the files linted.
    "project-context": (boolean, False),
    # Skip what git ignores when walking directories (.gitignore files, .git/info/exclude), as Ruff does.
    "respect-gitignore": (boolean, True),
}
# Keys that are rule options (passed to rules as `self.options[key]`), from the rules' metas.
RULE_OPTIONS = tuple(option.key for option in rule_options())
SCHEMA.update((option.key, (option.check, option.default)) for option in rule_options())


def validate(raw: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Checked values for the keys present in `raw`; ConfigError names the first bad key."""
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{source}: expected a table of settings, got {type(raw).__name__} {raw!r}")
    result: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in SCHEMA:
            hint = difflib.get_close_matches(key, SCHEMA, n=1)
            suggestion = f" (did you mean '{hint[0]}'?)" if hint else ""
            raise ConfigError(f"{source}: unknown key '{key}'{suggestion}")
        validator, _ = SCHEMA[key]
        try:
            result[key] = validator(value)
        except ValueError as error:
            raise ConfigError(f"{source}: invalid value for '{key}': {error}") from None
    return result


# ---------------------------------------------------------------------------- discovery


@dataclass(frozen=True)
class ConfigFile:
    path: Optional[Path]
    values: dict[str, Any]

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from None


def _tool_memlint(data: dict[str, Any], path: Path) -> Any:
    """The [tool.memlint] value of a parsed pyproject (None when absent), whatever `tool` holds."""
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise ConfigError(f"{path}: invalid value for 'tool': expected a table, got {type(tool).__name__}")
    return tool.get("memlint")


def load_config_file(path: Path) -> ConfigFile:
    """A config given with --config: `memlint.toml` (top-level keys) or a pyproject with [tool.memlint]."""
    data = _read_toml(path)
    if path.name == "pyproject.toml" or "tool" in data:
        table = _tool_memlint(data, path)
        return ConfigFile(path, validate({} if table is None else table, f"{path} [tool.memlint]"))
    return ConfigFile(path, validate(data, str(path)))


def discover(start: Path) -> ConfigFile:
    """The nearest memlint.toml, or pyproject.toml with a [tool.memlint] table, from `start` upward."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        toml = candidate / "memlint.toml"
        if toml.is_file():
            return load_config_file(toml)
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            data = _read_toml(pyproject)
            table = _tool_memlint(data, pyproject)
            if table is not None:
                return ConfigFile(pyproject, validate(table, f"{pyproject} [tool.memlint]"))
    return ConfigFile(None, {})


# ---------------------------------------------------------------------------- rule selection


@dataclass(frozen=True)
class Selection:
    """One layer of select / extend-select / ignore (the config file, then the command line)."""

    select: Optional[Sequence[str]] = None
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()


def _matches(selector: str, code: str, default_enabled: bool) -> bool:
    selector = selector.strip().upper()
    if selector == "ALL":
        return default_enabled
    if selector == code:
        return True
    # Rules that are off by default are only turned on by their exact code.
    return default_enabled and code.startswith(selector)


def check_selectors(selectors: Sequence[str], where: str) -> None:
    from memlint.pipeline.registry import RESERVED_CODES, rule_entries

    codes = [rule.code for rule in rule_entries()] + sorted(RESERVED_CODES)
    for selector in selectors:
        upper = selector.strip().upper()
        if upper != "ALL" and not any(code.startswith(upper) for code in codes):
            raise ConfigError(f"{where}: unknown rule selector '{selector}'")


def resolve_selection(layers: Sequence[Selection]) -> frozenset[str]:
    from memlint.pipeline.registry import rule_entries

    rules = rule_entries()
    enabled = {rule.code for rule in rules if rule.default_enabled}
    for layer in layers:
        if layer.select is not None:
            enabled = {r.code for r in rules if any(_matches(s, r.code, r.default_enabled) for s in layer.select)}
        enabled |= {r.code for r in rules if any(_matches(s, r.code, r.default_enabled) for s in layer.extend_select)}
        # Ignoring by prefix also covers rules that are off by default.
        enabled -= {r.code for r in rules if any(_matches(s, r.code, True) for s in layer.ignore)}
    return frozenset(enabled)


# ---------------------------------------------------------------------------- settings


def _glob_matches(pattern: str, relative: PurePosixPath) -> bool:
    """Ruff-style: a pattern without "/" matches any path component; otherwise the relative path."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in relative.parts)
    pattern = pattern.removeprefix("./")
    return fnmatch.fnmatchcase(str(relative), pattern) or fnmatch.fnmatchcase(str(relative), pattern + "/*")


@dataclass(frozen=True)
class Settings:
    """Everything that decides what a run reports; picklable for worker processes."""

    enabled: frozenset[str]
    root: Path = field(default_factory=Path.cwd)
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    per_file_ignores: tuple[tuple[str, frozenset[str]], ...] = ()
    unsafe_fixes: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)
    config_path: Optional[Path] = None
    max_file_size: Optional[int] = DEFAULT_MAX_FILE_SIZE  # characters of source; None: no limit
    # Summarise every Python file under `root` for the project pass, not only those linted
    # (docs/architecture.md, "The project pass").  Not in the fingerprint: what it changes reaches
    # the findings through the project facts, which their cache keys include.
    project_context: bool = False
    # Walks skip what git ignores (memlint/pipeline/gitignore.py).  Not in the fingerprint: it decides
    # which files are linted, not what a file's findings are.
    respect_gitignore: bool = True

    def relative(self, path: Path) -> PurePosixPath:
        try:
            return PurePosixPath(Path(os.path.abspath(path)).relative_to(self.root.resolve()).as_posix())
        except ValueError:
            return PurePosixPath(Path(path).as_posix())

    def is_excluded(self, path: Path, patterns: Optional[Sequence[str]] = None) -> bool:
        relative = self.relative(path)
        return any(_glob_matches(pattern, relative) for pattern in (self.exclude if patterns is None else patterns))

    def excludes_below(self, directory: Path) -> tuple[str, ...]:
        """The exclude patterns that apply inside a directory named on the command line.

        Naming a directory explicitly overrides the patterns that exclude the directory itself
        (`memlint build/gen` lints it even though `build` is excluded by default).
        """
        relative = self.relative(directory)
        return tuple(p for p in self.exclude if not _glob_matches(p, relative))

    def ignored_codes(self, filename: str) -> frozenset[str]:
        relative = self.relative(Path(filename))
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if _glob_matches(pattern, relative) or fnmatch.fnmatchcase(relative.name, pattern):
                ignored |= codes
        return frozenset(ignored)

    def codes_for(self, filename: str) -> frozenset[str]:
        """The codes of the rules that run on `filename` (enabled, not ignored for it)."""
        if not self.per_file_ignores:
            return self.enabled
        ignored = self.ignored_codes(filename)
        return frozenset(code for code in self.enabled if not any(code.startswith(prefix) for prefix in ignored))

    def rules_for(self, filename: str) -> list:
        from memlint.pipeline.registry import all_rules

        codes = self.codes_for(filename)
        return [rule for rule in all_rules() if rule.code in codes]

    def describe(self, filename: Optional[str] = None) -> dict[str, Any]:
        """The effective settings as plain data (`--show-settings`): for `filename` when given, with
        the rules that run on it after per-file-ignores."""
        described: dict[str, Any] = {
            "configuration": str(self.config_path) if self.config_path else None,
            "root": str(self.root),
            "enabled": sorted(self.enabled),
            "exclude": list(self.exclude),
            "per-file-ignores": {pattern: sorted(codes) for pattern, codes in self.per_file_ignores},
            "unsafe-fixes": self.unsafe_fixes,
            "max-file-size": self.max_file_size,
            "project-context": self.project_context,
            "respect-gitignore": self.respect_gitignore,
            "options": {key: self.options[key] for key in sorted(self.options)},
        }
        if filename is not None:
            described["file"] = filename
            described["rules for the file"] = sorted(self.codes_for(filename))
        return described

    def fingerprint(self) -> str:
        """Stable digest of everything that changes findings (for the cache)."""
        from memlint import __version__

        payload = {
            "version": __version__,
            "enabled": sorted(self.enabled),
            "per_file_ignores": [[p, sorted(c)] for p, c in self.per_file_ignores],
            "options": {k: self.options[k] for k in sorted(self.options)},
            "max_file_size": self.max_file_size,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def build_settings(config: ConfigFile, cli: Selection, *, unsafe_fixes: Optional[bool] = None) -> Settings:
    values = config.values
    where = str(config.path) if config.path else "configuration"
    file_layer = Selection(values.get("select"), values.get("extend-select", []), values.get("ignore", []))
    for layer, origin in ((file_layer, where), (cli, "command line")):
        check_selectors([*(layer.select or ()), *layer.extend_select, *layer.ignore], origin)
    per_file = values.get("per-file-ignores", {})
    for pattern, codes in per_file.items():
        check_selectors(codes, f"{where}: per-file-ignores '{pattern}'")
    exclude = tuple(values.get("exclude") or DEFAULT_EXCLUDE) + tuple(values.get("extend-exclude", []))
    options = {key: values.get(key, SCHEMA[key][1]) for key in RULE_OPTIONS}
    return Settings(
        enabled=resolve_selection([file_layer, cli]),
        root=config.root,
        exclude=exclude,
        per_file_ignores=tuple((p, frozenset(c.upper() for c in codes)) for p, codes in per_file.items()),
        unsafe_fixes=values.get("unsafe-fixes", False) if unsafe_fixes is None else unsafe_fixes,
        options=options,
        config_path=config.path,
        max_file_size=values.get("max-file-size", DEFAULT_MAX_FILE_SIZE),
        project_context=values.get("project-context", False),
        respect_gitignore=values.get("respect-gitignore", True),
    )
