"""memlint's public Python API: lint and fix source text or paths, and list the rules.

    from memlint import api

    findings = api.lint_source(text, "train.py", select=["ML001"])
    result = api.fix_source(text, "train.py", unsafe=True)   # result.text, result.fixed, result.remaining
    findings = api.lint_paths(["src/"])                       # as `memlint check src/`, configuration included
    for rule in api.rules(): print(rule.code, rule.name)

Findings are `memlint.diagnostics.Diagnostic` objects (code, name, message, severity, filename,
location, end_location, fix, cell for notebooks; `to_json()` gives the JSON output's record).
Configuration is the `[tool.memlint]` of the nearest pyproject.toml / memlint.toml, found from the
path (or the `filename` of a source text) upward, unless `config` names a file; `select`,
`extend_select` and `ignore` act as the command-line options of the same names, on top of it.
A notebook is linted as one when its filename ends with `.ipynb`. Problems with the configuration
raise `ConfigError`. Nothing here prints, exits or writes a file except `fix_paths`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from memlint.config import ConfigError, ConfigTree, Selection, Settings, build_settings, discover, load_config_file
from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.runner import Mode, process_text
from memlint.pipeline.runner import run as run_files

__all__ = [
    "ConfigError",
    "Diagnostic",
    "FixResult",
    "RuleInfo",
    "fix_paths",
    "fix_source",
    "lint_paths",
    "lint_source",
    "rules",
    "settings_for",
]

PathLike = Union[str, Path]


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    default_enabled: bool
    fix: str  # "safe", "unsafe", "mixed" or "none"
    documentation: str


@dataclass
class FixResult:
    text: str  # the fixed source (the input when nothing was fixed)
    fixed: dict[str, int] = field(default_factory=dict)  # code -> findings whose fix was applied
    remaining: list[Diagnostic] = field(default_factory=list)


def settings_for(
    where: PathLike = ".",
    *,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    unsafe_fixes: Optional[bool] = None,
) -> Settings:
    """The settings memlint would use for `where`: its configuration, then these selections."""
    config_file = load_config_file(Path(config)) if config is not None else discover(Path(where))
    selection = Selection(list(select) if select is not None else None, list(extend_select), list(ignore))
    return build_settings(config_file, selection, unsafe_fixes=unsafe_fixes, lock=config is not None)


def lint_source(
    source: str,
    filename: str = "<source>.py",
    *,
    settings: Optional[Settings] = None,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> list[Diagnostic]:
    """The findings for one source text, sorted. `filename` decides per-file-ignores and notebooks."""
    if settings is None:
        settings = settings_for(_start_of(filename), config=config, select=select, extend_select=extend_select, ignore=ignore)
    result = process_text(source, filename, settings, Mode())
    return sorted(result.diagnostics, key=Diagnostic.sort_key)


def fix_source(
    source: str,
    filename: str = "<source>.py",
    *,
    unsafe: bool = False,
    settings: Optional[Settings] = None,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> FixResult:
    """Apply the fixes (safe ones, and unsafe ones with `unsafe=True`) to a source text; nothing is
    written. `remaining` are the findings of the fixed text."""
    if settings is None:
        settings = settings_for(_start_of(filename), config=config, select=select, extend_select=extend_select, ignore=ignore)
    result = process_text(source, filename, settings, Mode(fix=True, unsafe=unsafe))
    text = result.fixed_text if result.fixed_text is not None else source
    return FixResult(text, dict(result.fixed), sorted(result.diagnostics, key=Diagnostic.sort_key))


def lint_paths(
    paths: Iterable[PathLike] = (".",),
    *,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    jobs: Optional[int] = 1,
) -> list[Diagnostic]:
    """The findings for files and directories, as `memlint check PATHS` finds them (excludes, the
    project pass across the files); no cache is read or written."""
    return _run(paths, Mode(), config, select, extend_select, ignore, jobs)


def fix_paths(
    paths: Iterable[PathLike] = (".",),
    *,
    unsafe: bool = False,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    jobs: Optional[int] = 1,
) -> list[Diagnostic]:
    """As `memlint check --fix PATHS`: fixes are written (only inside `paths`); returns what remains."""
    paths = _as_paths(paths)
    roots = tuple(os.path.realpath(p) for p in paths)
    return _run(paths, Mode(fix=True, write=True, unsafe=unsafe, roots=roots), config, select, extend_select, ignore, jobs)


def rules() -> list[RuleInfo]:
    """Every rule memlint knows (built-in and plugins), in code order."""
    return [
        RuleInfo(rule.code, rule.name, rule.summary(), registry.on_by_default(rule), rule.fix_safety, rule.documentation())
        for rule in registry.all_rules()
    ]


def _start_of(filename: str) -> Path:
    path = Path(filename)
    return path.parent if path.parent != Path("") and path.parent.exists() else Path(".")


def _as_paths(paths) -> list[Path]:
    return [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]


def _run(paths, mode: Mode, config, select, extend_select, ignore, jobs) -> list[Diagnostic]:
    from memlint.pipeline.files import discover_files

    paths = _as_paths(paths)
    existing = [os.path.abspath(p) for p in paths if os.path.exists(p)]
    start = Path(os.path.commonpath(existing)) if existing else Path.cwd()  # as the command line finds it
    settings = settings_for(start, config=config, select=select, extend_select=extend_select, ignore=ignore,
                            unsafe_fixes=mode.unsafe or None)  # fmt: skip
    tree = ConfigTree(settings)  # each file follows its closest configuration file
    files = discover_files(paths, settings, settings_of=tree.settings_for_directory).files
    results = run_files(files, tree.settings_for_files(files), mode, jobs=jobs)
    return sorted((d for result in results for d in result.diagnostics), key=Diagnostic.sort_key)
