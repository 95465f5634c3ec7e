"""One run of memlint: the settings every entry point shares, each with one carrier.

The command line (`memlint check PATHS`, and `memlint check -` for standard input), `memlint.api`,
`memlint review` and the language server each build a `Run` and ask it the same questions: which
files (discovery, with a file found under two names checked once), which configuration applies to a
file (the closest configuration file, with the command line's options over it), whether fixes are
computed and written, and whether a file's unsafe fixes apply. What a run reports is therefore the
same whichever way it was started.

Where each setting lives:

- rule selection, fixable rules, `unsafe-fixes` and every other configuration key: the `Settings` of
  each configuration file (the command line's `--select`, `--unsafe-fixes`, ... are laid over each of
  them, config.Overrides); `Run.settings_for(path)` is the closest one to a file;
- the files: `Run.paths`, found by `Run.discover()`;
- fixing: `Run.fix` (compute fixes) and `Run.write` (write them; `--diff` computes without writing);
- how the findings are shown: `Run.output` (formats, quiet, statistics, the output file, exit policy),
  used by the command line only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Optional, Sequence, Union

from memlint.config import (
    CommandLine, ConfigError, ConfigFile, ConfigTree, Selection, Settings, build_settings, discover, load_config_file,
)
from memlint.pipeline.files import STDIN, Discovery, discover_files
from memlint.pipeline.prepare import SUMMARISED_SUFFIXES
from memlint.pipeline.runner import FileResult, Mode, process_text
from memlint.pipeline.runner import run as run_files

@dataclass(frozen=True)
class Output:
    """How the command line shows a run's findings (standard input included)."""

    format: str = "full"
    diff: bool = False  # the fixes as a unified diff instead of the findings (nothing written)
    statistics: bool = False
    show_fixes: bool = False
    quiet: bool = False  # the findings without the summary
    silent: bool = False  # nothing; the exit code still tells
    color: str = "auto"
    file: Optional[Path] = None  # `-o`: the report goes there instead of standard output
    exit_zero: bool = False
    exit_non_zero_on_fix: bool = False
    fail_level: str = "info"  # --fail-level: the lowest severity of a finding left that exits 1
    fix_only: bool = False  # --fix-only: report what was fixed, not what is left


@dataclass
class Run:
    """The settings of one run. Build it with `Run.configure` (or `Run.of_settings` when the settings
    are already made); `settings` gains the subprojects' configurations when `discover` finds files
    under them."""

    paths: tuple[Path, ...]
    settings: Settings  # the configuration closest to the paths (or --config's), command line over it
    fix: bool = False  # compute fixes
    write: bool = False  # write them back (False for --diff, standard input and texts)
    force_exclude: bool = False  # excludes apply to files named too
    respect_gitignore: Optional[bool] = None  # the command line's --[no-]respect-gitignore; None: the settings'
    project_context: Optional[bool] = None  # the command line's --[no-]project-context; None: the settings'
    output: Output = field(default_factory=Output)
    tree: ConfigTree = field(init=False)

    def __post_init__(self) -> None:
        self.tree = ConfigTree(self.settings)  # a file follows its closest configuration file

    @classmethod
    def configure(
        cls,
        paths: Sequence[Path] = (Path("."),),
        *,
        config: Optional[Path] = None,
        selection: Selection = Selection(),
        fixes: Selection = Selection(),
        unsafe_fixes: Optional[bool] = None,
        command_line: CommandLine = CommandLine(),
        isolated: bool = False,
        **options,
    ) -> Run:
        """A run over `paths` with the configuration found from them (or `config`, or with `isolated`
        none: the defaults), the command line's selections and `command_line` (--exclude,
        --per-file-ignores, --ignore-noqa, ...) over it. Raises config.ConfigError (and
        registry.RegistryError) for a bad one."""
        paths = tuple(Path(p) for p in paths)
        common = {"unsafe_fixes": unsafe_fixes, "fixes": fixes, "command_line": command_line}
        if isolated and config is not None:
            raise ConfigError("--isolated ignores every configuration file: it cannot be combined with --config")
        if isolated:  # as Ruff's --isolated: no configuration file, for every file of the run
            settings = build_settings(ConfigFile(None, {}), selection, lock=True, **common)
        elif config is not None:  # one file for everything: no closest-configuration lookup
            settings = build_settings(load_config_file(Path(config)), selection, lock=True, **common)
        else:
            settings = build_settings(discover(_start(paths)), selection, **common)
        return cls(paths, settings, **options)

    @classmethod
    def of_settings(cls, settings: Settings, paths: Sequence[Path] = (), **options) -> Run:
        return cls(tuple(Path(p) for p in paths), settings, **options)

    # ------------------------------------------------------------------ settings of a place

    @property
    def mode(self) -> Mode:
        # Fixes are written only inside the paths named (a symlink out of them is refused, docs/reliability.md).
        roots = tuple(os.path.realpath(p) for p in self.paths) if self.write else None
        return Mode(fix=self.fix, write=self.write, roots=roots)

    def settings_for(self, path: Union[str, os.PathLike]) -> Settings:
        """The settings of the configuration file closest to `path` (a file, existing or not)."""
        return self.settings_in(Path(os.path.abspath(path)).parent)

    def settings_in(self, directory: Path) -> Settings:
        """The settings of the configuration file closest to the files of `directory`."""
        return self.tree.settings_for_directory(directory)

    def unsafe_fixes_for(self, filename: str) -> bool:
        """Whether the unsafe fixes of this file's findings apply (and show as fixable): its closest
        configuration's `unsafe-fixes`, or the command line's --[no-]unsafe-fixes over it."""
        return self.settings_for(filename).unsafe_fixes

    # ------------------------------------------------------------------ files

    def discover(self) -> Discovery:
        """The files of the paths: directories walked, excludes applied, each file once (a file under
        two names, a symlink beside its target or a hard link, is checked and fixed once)."""
        found = discover_files(
            self.paths, self.settings, force_exclude=self.force_exclude, respect_gitignore=self.respect_gitignore,
            settings_of=self.tree.settings_for_directory,
        )  # fmt: skip
        found.files = one_name_per_file(found.files)
        self.settings = self.tree.settings_for_files(found.files)
        return found

    def lint(
        self,
        files: Sequence[Path],
        *,
        jobs: Optional[int] = None,
        cache=None,
        progress: Optional[Callable[[int], None]] = None,
    ) -> list[FileResult]:
        """The results of `files` (from `discover`), in their order; fixes written when `write`."""
        settings = self.tree.settings_for_files(files)
        return run_files(files, settings, self.mode, jobs=jobs, cache=cache, progress=progress, context=self._context(files))

    def lint_text(self, text: str, filename: str) -> FileResult:
        """One text shown as `filename` (standard input, an editor's buffer, `api.lint_source`): a
        project of its own, with the settings of the configuration closest to `filename`."""
        # Settings locked to one configuration (--config, or settings handed to the API) apply as given.
        settings = self.settings if self.settings.overrides is None else self.tree.settings_for_files([Path(filename)])
        return process_text(text, filename, settings, replace(self.mode, write=False))

    def _context(self, linted: Sequence[Path]) -> list[Path]:
        """With `project-context`: the Python files and notebooks under the project root that are not
        linted, for their summaries only (the project pass, docs/architecture.md)."""
        if not (self.settings.project_context if self.project_context is None else self.project_context):
            return []
        seen = {os.path.realpath(path) for path in linted}
        found = discover_files([self.settings.root], self.settings).files
        return [path for path in found if path.suffix in SUMMARISED_SUFFIXES and os.path.realpath(path) not in seen]


def _start(paths: Sequence[Path]) -> Path:
    """Where the run's configuration is looked for: the deepest directory holding every path named
    that exists (standard input's `--stdin-filename` counts whether or not it exists)."""
    existing = [os.path.abspath(p) for p in paths if p != STDIN and os.path.exists(p)]
    if not existing:
        named = [os.path.abspath(p) for p in paths if p != STDIN]
        existing = [os.path.dirname(p) for p in named]
    return Path(os.path.commonpath(existing)) if existing else Path.cwd()


def one_name_per_file(files: list[Path]) -> list[Path]:
    """A file found under two names (a symlink beside the file it names, a hard link) is kept once, so
    that its findings are not counted twice and two writes to it cannot race. The name kept is the
    first that is not a symlink."""
    chosen: dict[object, Path] = {}
    for path in files:
        try:
            info = os.stat(path)
            key: object = (info.st_dev, info.st_ino)
        except OSError:
            key = os.fspath(path)  # reported when it is read
        if key not in chosen or (os.path.islink(chosen[key]) and not os.path.islink(path)):
            chosen[key] = path
    kept = {id(path) for path in chosen.values()}
    return [path for path in files if id(path) in kept]
