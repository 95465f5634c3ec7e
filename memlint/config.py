"""`[tool.memlint]` configuration: discovery, validation (unknown keys and wrong types are errors
that name the file and the key) and the resolved settings a run uses."""

from __future__ import annotations

import difflib
import fnmatch
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Mapping, Optional, Sequence, Union

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on older interpreters only
    import tomli as tomllib

from memlint.pipeline.reading import CONFIG_LIMIT, read_regular
from memlint.pipeline.registry import RuleEntry, rule_options
from memlint.rule import SELECTED_BY_CODE, boolean
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


def _path_string(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value
    raise ValueError("expected the path of a configuration file")


_path_string.json_schema = {"type": "string", "minLength": 1}  # type: ignore[attr-defined]
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
    # Only a guard against pathological inputs (generated files of tens of MB): larger files are not
    # analysed (an ML901 finding says so).  Below it, time and memory grow in proportion to the size
    # (libcst's tree: 0.3 GB per MB of hand-written code, at most about 2.5 GB per MB of anything,
    # pipeline/masking.py).  The largest file of torch, transformers and timm is 1.4 MB.
    "max-file-size": (parse_size, DEFAULT_MAX_FILE_SIZE),
    # Summaries of the rest of the project for the project pass, not only of the files linted.
    "project-context": (boolean, False),
    # Skip what git ignores when walking directories (.gitignore files, .git/info/exclude), as Ruff does.
    "respect-gitignore": (boolean, True),
    # Fixes: which rules' fixes `--fix` may apply (selectors as in `select`; ALL by default).
    "fixable": (_string_list, None),
    "extend-fixable": (_string_list, []),
    "unfixable": (_string_list, []),
    # Another configuration file whose settings this one starts from (relative to this file).
    "extend": (_path_string, None),
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
    values: dict[str, Any]  # the settings of this file over those of the files it extends
    # Each file's own settings, the file `extend` names first, this file last: their rule selections
    # apply in that order, as Ruff layers them.
    chain: tuple[dict[str, Any], ...] = ()

    @property
    def root(self) -> Path:
        return self.path.parent if self.path else Path.cwd()


# tomllib's time grows with the square of the number of parts of one dotted key or table name (each
# part checks every prefix): 0.8 s for 8,000 parts, 26 s for 32,000 (docs/reliability.md), so hours
# for one that fills CONFIG_LIMIT. No real configuration comes near this many parts.
MAX_KEY_PARTS = 256
_LONG_DOTTED_KEY = re.compile(
    r"""(?:^|[\[{,])\s*(?:(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')\s*\.\s*){%d}""" % MAX_KEY_PARTS
)


def _has_long_dotted_key(text: str) -> bool:
    """Does a line start a key (or table name) of more than MAX_KEY_PARTS parts?  Only lines with that
    many dots are searched, so an ordinary file costs one count per line."""
    return any(line.count(".") >= MAX_KEY_PARTS and _LONG_DOTTED_KEY.search(line) for line in text.splitlines())


def _read_toml(path: Path) -> dict[str, Any]:
    """A configuration file's TOML: only a regular file, of at most CONFIG_LIMIT bytes, is read (a
    FIFO would block forever, /dev/zero would fill memory), and nothing that would take tomllib
    minutes (MAX_KEY_PARTS) or exhaust its recursion is parsed."""
    try:
        text = read_regular(path, CONFIG_LIMIT, what="a configuration file").decode("utf-8")
        if _has_long_dotted_key(text):
            raise ConfigError(f"{path}: invalid TOML: a dotted key or table name of more than {MAX_KEY_PARTS} parts")
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{path}: invalid TOML: {error}") from None
    except RecursionError:  # tomllib parses nested arrays and tables by recursion
        raise ConfigError(f"{path}: invalid TOML: arrays or inline tables nested too deeply") from None
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
    return _extended(path, _own_values(path, _read_toml(path)), ())


def _own_values(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    if path.name == "pyproject.toml" or "tool" in data:
        table = _tool_memlint(data, path)
        return validate({} if table is None else table, f"{path} [tool.memlint]")
    return validate(data, str(path))


# Settings that name paths relative to the configuration file that holds them.
_PATTERN_LISTS = ("exclude", "extend-exclude")


def _anchored(values: dict[str, Any], directory: Path) -> dict[str, Any]:
    """`values` of an extended file with its path patterns made absolute: a pattern is relative to
    the directory of the file that wrote it (as in Ruff), not to the file that extends it."""

    def anchor(pattern: str) -> str:
        return pattern if "/" not in pattern.rstrip("/") else (directory / pattern.removeprefix("./")).as_posix()

    result = dict(values)
    for key in _PATTERN_LISTS:
        if key in result:
            result[key] = [anchor(p) for p in result[key]]
    if "per-file-ignores" in result:
        result["per-file-ignores"] = {anchor(p): codes for p, codes in result["per-file-ignores"].items()}
    return result


def _extended(path: Path, values: dict[str, Any], seen: tuple[Path, ...]) -> ConfigFile:
    """This file's settings over those of the chain of files its `extend` names."""
    if "extend" not in values:
        return ConfigFile(path, values, (values,))
    resolved = path.resolve()
    base_path = (path.parent / os.path.expanduser(values["extend"])).resolve()
    if base_path in (*seen, resolved):
        raise ConfigError(f"{path}: 'extend' makes a cycle: {' -> '.join(map(str, (*seen, resolved, base_path)))}")
    if not base_path.is_file():
        raise ConfigError(f"{path}: invalid value for 'extend': {base_path} is not a file")
    base = _extended(base_path, _own_values(base_path, _read_toml(base_path)), (*seen, resolved))
    base_values = _anchored(base.values, base_path.parent)
    merged = {**base_values, **values}
    # The lists that extend (rather than replace) combine, the base's first.
    merged["extend-exclude"] = [*base_values.get("extend-exclude", []), *values.get("extend-exclude", [])]
    del merged["extend"]
    chain = (*(_anchored(layer, base_path.parent) for layer in base.chain), values)
    return ConfigFile(path, merged, chain)


def config_in(directory: Path) -> Optional[ConfigFile]:
    """The configuration file of `directory` itself, or None: `memlint.toml`, else a `pyproject.toml`
    that has a [tool.memlint] table."""
    toml = directory / "memlint.toml"
    if _present(toml):
        return load_config_file(toml)
    pyproject = directory / "pyproject.toml"
    if _present(pyproject):
        data = _read_toml(pyproject)
        table = _tool_memlint(data, pyproject)
        if table is not None:
            return _extended(pyproject, validate(table, f"{pyproject} [tool.memlint]"), ())
    return None


def _present(path: Path) -> bool:
    """Is there a configuration file at `path` to read?  Anything but a directory or a dangling link
    is: a FIFO or a device there is read, and refused with a message (`_read_toml`), rather than
    passed over as if absent."""
    return os.path.exists(path) and not os.path.isdir(path)


def discover(start: Path) -> ConfigFile:
    """The nearest memlint.toml, or pyproject.toml with a [tool.memlint] table, from `start` upward."""
    directory = start.resolve()
    if directory.is_file():
        directory = directory.parent
    for candidate in (directory, *directory.parents):
        found = config_in(candidate)
        if found is not None:
            return found
    return ConfigFile(None, {})


# ---------------------------------------------------------------------------- rule selection


@dataclass(frozen=True)
class Selection:
    """One layer of select / extend-select / ignore (the config file, then the command line)."""

    select: Optional[Sequence[str]] = None
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()


def _matches(selector: str, entry: RuleEntry) -> bool:
    """Does a selector of select / extend-select turn this rule on?  ALL means the default set
    (memlint's rules that are on by default); a rule that is off by default needs its exact code,
    except that a plugin's rules, off only because they are third-party, also answer to a prefix
    (`ACME`), as docs/plugins.md says."""
    selector = selector.strip().upper()
    if selector == "ALL":
        return entry.on_by_default
    if selector == entry.code:
        return True
    return entry.default_enabled and entry.code.startswith(selector)


def _covers(selector: str, code: str) -> bool:
    """Does a selector of ignore / fixable / unfixable cover this code?  Every prefix and ALL
    count, whether the rule is on by default or not."""
    selector = selector.strip().upper()
    return selector == "ALL" or code.startswith(selector)


def check_selectors(selectors: Sequence[str], where: str) -> None:
    from memlint.pipeline.registry import RESERVED_CODES, rule_entries

    codes = [rule.code for rule in rule_entries()] + sorted(RESERVED_CODES)
    for selector in selectors:
        upper = selector.strip().upper()
        if upper != "ALL" and not any(code.startswith(upper) for code in codes):
            raise ConfigError(f"{where}: unknown rule selector '{selector}'")


def resolve_unfixable(layers: Sequence[Selection]) -> frozenset[str]:
    """The codes whose fixes are never applied nor offered, from layers of fixable (`select`),
    extend-fixable (`extend_select`) and unfixable (`ignore`).  Unlike rule selection, a prefix or
    ALL covers the rules that are off by default too: they have fixes all the same."""
    from memlint.pipeline.registry import rule_entries

    codes = {rule.code for rule in rule_entries()}
    fixable = set(codes)
    for layer in layers:
        if layer.select is not None:
            fixable = {code for code in codes if any(_covers(s, code) for s in layer.select)}
        fixable |= {code for code in codes if any(_covers(s, code) for s in layer.extend_select)}
        fixable -= {code for code in codes if any(_covers(s, code) for s in layer.ignore)}
    return frozenset(codes - fixable)


def resolve_selection(layers: Sequence[Selection]) -> frozenset[str]:
    from memlint.pipeline.registry import rule_entries

    rules = rule_entries()
    enabled = {rule.code for rule in rules if rule.on_by_default}
    for layer in layers:
        if layer.select is not None:
            enabled = {r.code for r in rules if any(_matches(s, r) for s in layer.select)}
        enabled |= {r.code for r in rules if any(_matches(s, r) for s in layer.extend_select)}
        enabled -= {r.code for r in rules if any(_covers(s, r.code) for s in layer.ignore)}
    return frozenset(enabled)


def resolve_exact_selection(layers: Sequence[Selection]) -> frozenset[str]:
    """The codes that select / extend-select name exactly, not through a prefix or ALL, and no
    ignore removes.  A rule that is on by default may keep some of its findings for this case
    (ML003: an in-place activation whose saving a training step does not see); as with the rules
    that are off by default, `ML`, `ML0` or `ALL` do not turn those on."""
    from memlint.pipeline.registry import rule_entries

    codes = {rule.code for rule in rule_entries()}
    exact: set[str] = set()
    for layer in layers:
        if layer.select is not None:
            exact = {s.strip().upper() for s in layer.select} & codes
        exact |= {s.strip().upper() for s in layer.extend_select} & codes
        exact -= {code for code in codes if any(_covers(s, code) for s in layer.ignore)}
    return frozenset(exact)


# ---------------------------------------------------------------------------- settings


def _glob_matches(pattern: str, relative: PurePosixPath, absolute: Callable[[], str]) -> bool:
    """Ruff-style: a pattern without "/" matches any path component; otherwise the path relative to
    the configuration's directory, or the absolute path for a pattern an extended file anchored."""
    pattern = pattern.rstrip("/")
    if "/" not in pattern:
        return any(fnmatch.fnmatchcase(part, pattern) for part in relative.parts)
    path = absolute() if pattern.startswith("/") else str(relative)
    pattern = pattern.removeprefix("./")
    return fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, pattern + "/*")


def _absolute_posix(path: Path) -> Callable[[], str]:
    return lambda: Path(os.path.abspath(path)).as_posix()


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
    # Rules whose fixes are neither applied nor offered (`fixable` / `unfixable`).
    unfixable: frozenset[str] = frozenset()
    # --ignore-noqa: suppression comments suppress nothing (and ML100 does not judge them), as in Ruff.
    ignore_noqa: bool = False
    # The settings of configuration files below `root` that govern the files under their directory
    # (absolute directory, settings), deepest first: the closest configuration applies to each file,
    # as in Ruff.  Set for a run by ConfigTree.settings_for_files.
    subprojects: tuple[tuple[str, Settings], ...] = ()
    # What the command line set, applied over every configuration file (ConfigTree builds the
    # settings of the others with it); None when --config names one file for the whole run.
    overrides: Optional[Overrides] = None

    def for_path(self, path: Union[str, os.PathLike]) -> Settings:
        """The settings of the closest configuration file to `path`."""
        if not self.subprojects:
            return self
        absolute = os.path.abspath(path)
        for directory, settings in self.subprojects:
            if absolute.startswith(directory + os.sep):
                return settings
        return self

    def relative(self, path: Path) -> PurePosixPath:
        try:
            return PurePosixPath(Path(os.path.abspath(path)).relative_to(self.root.resolve()).as_posix())
        except ValueError:
            return PurePosixPath(Path(path).as_posix())

    def is_excluded(self, path: Path, patterns: Optional[Sequence[str]] = None) -> bool:
        relative, absolute = self.relative(path), _absolute_posix(path)
        return any(_glob_matches(pattern, relative, absolute) for pattern in (self.exclude if patterns is None else patterns))

    def excludes_below(self, directory: Path) -> tuple[str, ...]:
        """The exclude patterns that apply inside a directory named on the command line.

        Naming a directory explicitly overrides the patterns that exclude the directory itself
        (`memlint build/gen` lints it even though `build` is excluded by default).
        """
        relative, absolute = self.relative(directory), _absolute_posix(directory)
        return tuple(p for p in self.exclude if not _glob_matches(p, relative, absolute))

    def ignored_codes(self, filename: str) -> frozenset[str]:
        relative, absolute = self.relative(Path(filename)), _absolute_posix(Path(filename))
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if _glob_matches(pattern, relative, absolute) or fnmatch.fnmatchcase(relative.name, pattern):
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
            "unfixable": sorted(self.unfixable),
            "ignore-noqa": self.ignore_noqa,
            "options": {key: self.options[key] for key in sorted(self.options)},
        }
        if self.subprojects:
            described["subproject configurations"] = [str(s.config_path) for _, s in self.subprojects]
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
            "unfixable": sorted(self.unfixable),
            "ignore_noqa": self.ignore_noqa,
            "subprojects": [[directory, settings.fingerprint()] for directory, settings in self.subprojects],
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


@dataclass(frozen=True)
class CommandLine:
    """Settings the command line lays over every configuration file, as Ruff's options of the same
    names: --exclude replaces `exclude` (the defaults included), --extend-exclude adds to it,
    --per-file-ignores replaces `per-file-ignores`, --extend-per-file-ignores adds to it.  Their
    patterns are relative to the working directory (`command_line_patterns` anchors them)."""

    exclude: Optional[tuple[str, ...]] = None
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: Optional[tuple[tuple[str, tuple[str, ...]], ...]] = None
    extend_per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ignore_noqa: bool = False

    def over(self, values: dict[str, Any]) -> dict[str, Any]:
        """A configuration file's values with these laid over them."""
        if self == CommandLine():
            return values
        result = dict(values)
        if self.exclude is not None:
            result["exclude"] = list(self.exclude)
        result["extend-exclude"] = [*values.get("extend-exclude", []), *self.extend_exclude]
        base = values.get("per-file-ignores", {}) if self.per_file_ignores is None else dict(self.per_file_ignores)
        per_file = {pattern: list(codes) for pattern, codes in base.items()}
        for pattern, codes in self.extend_per_file_ignores:
            per_file[pattern] = [*per_file.get(pattern, []), *codes]
        result["per-file-ignores"] = per_file
        return result


def command_line_patterns(patterns: Sequence[str], cwd: Path) -> tuple[str, ...]:
    """Path patterns given on the command line, relative to `cwd` as Ruff takes them: a pattern with
    a `/` is made absolute; one without matches a path component anywhere, as in a configuration."""
    anchored = _anchored({"exclude": list(patterns)}, cwd)["exclude"]
    return tuple(anchored)


@dataclass(frozen=True)
class Overrides:
    """What the command line sets over every configuration file."""

    selection: Selection = Selection()
    fixes: Selection = Selection()  # --fixable (select), --extend-fixable, --unfixable (ignore)
    unsafe_fixes: Optional[bool] = None
    command_line: CommandLine = CommandLine()


def build_settings(
    config: ConfigFile, cli: Selection, *, unsafe_fixes: Optional[bool] = None, fixes: Selection = Selection(),
    lock: bool = False, command_line: CommandLine = CommandLine(),
) -> Settings:  # fmt: skip
    """The settings of `config` under the command line's options. `lock`: --config named the file (or
    --isolated named none), which then applies to every file of the run (no closest-configuration lookup)."""
    values = command_line.over(config.values)
    where = str(config.path) if config.path else "configuration"
    chain = config.chain or (values,)
    file_layers = [Selection(v.get("select"), v.get("extend-select", []), v.get("ignore", [])) for v in chain]
    fix_layers = [Selection(v.get("fixable"), v.get("extend-fixable", []), v.get("unfixable", [])) for v in chain]
    layers = [*((layer, where) for layer in file_layers + fix_layers), (cli, "command line"), (fixes, "command line")]
    for layer, origin in layers:
        check_selectors([*(layer.select or ()), *layer.extend_select, *layer.ignore], origin)
    per_file = values.get("per-file-ignores", {})
    for pattern, codes in per_file.items():
        check_selectors(codes, f"{where}: per-file-ignores '{pattern}'")
    exclude = tuple(values.get("exclude") or DEFAULT_EXCLUDE) + tuple(values.get("extend-exclude", []))
    options = {key: values.get(key, SCHEMA[key][1]) for key in RULE_OPTIONS}
    enabled = resolve_selection([*file_layers, cli])
    options[SELECTED_BY_CODE] = sorted(resolve_exact_selection([*file_layers, cli]) & enabled)
    return Settings(
        enabled=enabled,
        root=config.root,
        exclude=exclude,
        per_file_ignores=tuple((p, frozenset(c.upper() for c in codes)) for p, codes in per_file.items()),
        unsafe_fixes=values.get("unsafe-fixes", False) if unsafe_fixes is None else unsafe_fixes,
        options=options,
        config_path=config.path,
        max_file_size=values.get("max-file-size", DEFAULT_MAX_FILE_SIZE),
        project_context=values.get("project-context", False),
        respect_gitignore=values.get("respect-gitignore", True),
        unfixable=resolve_unfixable([*fix_layers, fixes]),
        ignore_noqa=command_line.ignore_noqa,
        overrides=None if lock else Overrides(cli, fixes, unsafe_fixes, command_line),
    )


class ConfigTree:
    """The closest configuration file of each directory, as Ruff finds it: a run's settings come from
    the configuration nearest to the paths named; a file below another configuration file (a
    subproject's pyproject.toml) follows that one instead, with the command line's options over it."""

    def __init__(self, run_settings: Settings) -> None:
        self.run_settings = run_settings
        self._by_directory: dict[Path, Settings] = {}
        # Keyed by the resolved path: the run's file is found from a resolved start, the others from
        # the directories walked, which may be reached through a symlink.
        self._by_config: dict[Optional[Path], Settings] = {_resolved(run_settings.config_path): run_settings}

    def settings_for_directory(self, directory: Path) -> Settings:
        overrides = self.run_settings.overrides
        if overrides is None:  # --config: one file for everything
            return self.run_settings
        directory = Path(os.path.abspath(directory))
        known = self._by_directory.get(directory)
        if known is not None:
            return known
        config = config_in(directory)
        if config is None and directory.parent != directory:
            settings = self.settings_for_directory(directory.parent)
        else:
            config = config or ConfigFile(None, {})
            key = _resolved(config.path)
            settings = self._by_config.get(key) or build_settings(
                config, overrides.selection, unsafe_fixes=overrides.unsafe_fixes, fixes=overrides.fixes,
                command_line=overrides.command_line,
            )
            self._by_config[key] = settings
        self._by_directory[directory] = settings
        return settings

    def settings_for_files(self, files: Sequence[Path]) -> Settings:
        """The run's settings, knowing the other configurations that govern some of `files`."""
        found: dict[str, Settings] = {}
        for directory in {os.path.dirname(os.path.abspath(file)) for file in files}:
            settings = self.settings_for_directory(Path(directory))
            if settings is not self.run_settings and settings.config_path is not None:
                found[os.path.abspath(settings.root)] = settings
        deepest_first = sorted(found.items(), key=lambda item: -item[0].count(os.sep))
        return replace(self.run_settings, subprojects=tuple(deepest_first))


def _resolved(path: Optional[Path]) -> Optional[Path]:
    return path.resolve() if path is not None else None
