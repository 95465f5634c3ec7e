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

import errno
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

from memlint.config import ConfigError, Selection, Settings, build_settings, discover, load_config_file
from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.run import Run

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
    run = _text_run(filename, settings, config, select, extend_select, ignore, None, fix=False)
    return sorted(run.lint_text(source, filename).diagnostics, key=Diagnostic.sort_key)


def fix_source(
    source: str,
    filename: str = "<source>.py",
    *,
    unsafe: Optional[bool] = None,
    settings: Optional[Settings] = None,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
) -> FixResult:
    """Apply the fixes to a source text; nothing is written. `unsafe`: True applies the unsafe fixes
    too, False only the safe ones, None what the configuration's `unsafe-fixes` says (as
    --unsafe-fixes / --no-unsafe-fixes / neither). `remaining` are the findings of the fixed text."""
    run = _text_run(filename, settings, config, select, extend_select, ignore, unsafe, fix=True)
    result = run.lint_text(source, filename)
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
    """The findings for files and directories, as `memlint check PATHS` finds them (excludes, a file
    found under two names checked once, the project pass across the files); no cache is read or
    written. A path that does not exist raises FileNotFoundError."""
    return _run_paths(paths, config, select, extend_select, ignore, None, jobs, fix=False)


def fix_paths(
    paths: Iterable[PathLike] = (".",),
    *,
    unsafe: Optional[bool] = None,
    config: Optional[PathLike] = None,
    select: Optional[Sequence[str]] = None,
    extend_select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    jobs: Optional[int] = 1,
) -> list[Diagnostic]:
    """As `memlint check --fix PATHS`: fixes are written (only inside `paths`); returns what remains.
    `unsafe` as in `fix_source`."""
    return _run_paths(paths, config, select, extend_select, ignore, unsafe, jobs, fix=True)


def rules() -> list[RuleInfo]:
    """Every rule memlint knows (built-in and plugins), in code order."""
    return [
        RuleInfo(rule.code, rule.name, rule.summary(), registry.on_by_default(rule), rule.fix_safety, rule.documentation())
        for rule in registry.all_rules()
    ]


def _selection(select, extend_select, ignore) -> Selection:
    return Selection(list(select) if select is not None else None, list(extend_select), list(ignore))


def _text_run(filename: str, settings, config, select, extend_select, ignore, unsafe, *, fix: bool) -> Run:
    """The run of one text: `settings` as given (for every text, as a locked --config would be), or
    the configuration closest to `filename` with these options over it."""
    if settings is None:
        return Run.configure((Path(filename),), config=_optional_path(config), selection=_selection(select, extend_select, ignore),
                             unsafe_fixes=unsafe, fix=fix)  # fmt: skip
    if unsafe is not None:
        settings = _with_unsafe_fixes(settings, unsafe)
    return Run.of_settings(replace(settings, overrides=None), fix=fix)


def _with_unsafe_fixes(settings: Settings, unsafe: bool) -> Settings:
    subprojects = tuple((directory, replace(sub, unsafe_fixes=unsafe)) for directory, sub in settings.subprojects)
    return replace(settings, unsafe_fixes=unsafe, subprojects=subprojects)


def _optional_path(path: Optional[PathLike]) -> Optional[Path]:
    return Path(path) if path is not None else None


def _run_paths(paths, config, select, extend_select, ignore, unsafe, jobs, *, fix: bool) -> list[Diagnostic]:
    paths = [Path(paths)] if isinstance(paths, (str, Path)) else [Path(p) for p in paths]
    run = Run.configure(paths, config=_optional_path(config), selection=_selection(select, extend_select, ignore),
                        unsafe_fixes=unsafe, fix=fix, write=fix)  # fmt: skip
    found = run.discover()
    if found.missing:  # as the command line's error: a typo must not pass as "nothing found"
        missing = found.missing[0]
        raise FileNotFoundError(errno.ENOENT, "no such file or directory", os.fspath(missing))
    results = run.lint(found.files, jobs=jobs)
    return sorted((d for result in results for d in result.diagnostics), key=Diagnostic.sort_key)
