"""Which files a run looks at: explicit files always, directories walked for *.py and *.ipynb, excludes
pruned."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

from memlint.config import Settings
from memlint.pipeline.reading import kind_of
from memlint.pipeline.tempfiles import is_temporary

SOURCE_SUFFIXES = (".py", ".ipynb")
STDIN = Path("-")  # the path that means standard input (`memlint check -`)


@dataclass
class Discovery:
    files: list[Path] = field(default_factory=list)
    # Paths named that do not exist: an error (exit 2, as a usage error), but the run goes on with the
    # others so that their findings are still shown.
    missing: list[Path] = field(default_factory=list)
    # Paths named that are neither a regular file nor a directory (a FIFO, a device, a socket): an
    # error too, since nothing was checked where the user asked for a check.
    refused: list[str] = field(default_factory=list)
    # Problems met in a directory walk (a special file, an unreadable directory): warnings.
    problems: list[str] = field(default_factory=list)

    @property
    def path_errors(self) -> bool:
        """Whether a path named could not be checked at all (exit 2; the others are still checked)."""
        return bool(self.missing or self.refused)
    # memlint's own temporary files seen in the walk (memlint/pipeline/tempfiles.py): never linted; `--fix`
    # removes those a killed run left behind.
    temporaries: list[Path] = field(default_factory=list)


def path_argument(value: str) -> Path:
    """A path given on the command line.  Only a bare `-` means standard input: pathlib reads `./-`
    (the file named `-`) as `-` too, so such a path is kept as an absolute path."""
    if value != "-" and Path(value) == Path("-"):
        return Path(os.path.abspath(value))
    return Path(value)


def discover_files(
    paths: Sequence[Path],
    settings: Settings,
    *,
    force_exclude: bool = False,
    respect_gitignore: Optional[bool] = None,
    settings_of: Optional[Callable[[Path], Settings]] = None,
) -> Discovery:
    """`respect_gitignore`: the command line's --[no-]respect-gitignore; None leaves it to the settings.
    `settings_of(directory)`: the settings whose excludes apply in a directory (config.ConfigTree:
    a subproject's configuration file governs the walk below it); `settings` everywhere by default."""
    found: dict[str, Path] = {}
    result = Discovery()
    gitignore = settings.respect_gitignore if respect_gitignore is None else respect_gitignore
    settings_of = settings_of or (lambda _: settings)
    for path in paths:
        if not os.path.lexists(path):
            result.missing.append(path)
            continue
        if path.is_dir():
            if force_exclude and settings_of(path.absolute().parent).is_excluded(path):
                continue
            for file in _walk(path, settings_of, result, _ignore_rules(path) if gitignore else None):
                found.setdefault(os.path.normpath(file), file)
        elif path.is_file():
            if force_exclude and settings_of(path.absolute().parent).is_excluded(path):
                continue
            found.setdefault(os.path.normpath(path), path)
        else:
            result.refused.append(f"{path}: {_special(path) or 'not a regular file or directory'}")
    result.files = [found[key] for key in sorted(found)]
    return result


def _ignore_rules(root: Path):
    """What git ignores below `root`, or None outside a git work tree (pathspec loads only then)."""
    from memlint.pipeline.gitignore import GitIgnore, work_tree_of

    top = work_tree_of(root)
    return GitIgnore(top).walker(root) if top is not None else None


def _walk(root: Path, settings_of: Callable[[Path], Settings], result: Discovery, ignored=None):
    def on_error(error: OSError) -> None:
        result.problems.append(f"{error.filename}: {error.strerror}")

    def skipped(path: Path, is_dir: bool) -> bool:
        return settings.is_excluded(path, patterns) or (ignored is not None and ignored.ignored(path, is_dir))

    below: dict[Optional[Path], tuple[str, ...]] = {}  # configuration file -> its excludes inside `root`
    # followlinks=False: a symlink loop cannot make the walk infinite.
    for directory, subdirectories, filenames in os.walk(root, onerror=on_error):
        base = Path(directory)
        settings = settings_of(base)
        # Naming a directory overrides the patterns that exclude it (Settings.excludes_below).
        patterns = below.setdefault(settings.config_path, settings.excludes_below(root))
        subdirectories[:] = sorted(d for d in subdirectories if d != ".git" and not skipped(base / d, True))
        for name in sorted(filenames):
            if is_temporary(name):
                result.temporaries.append(base / name)
            elif name.endswith(SOURCE_SUFFIXES):
                file = base / name
                if skipped(file, False):
                    continue
                if file.is_file():
                    yield file
                elif (special := _special(file)) is not None:  # a FIFO would block a read: say why it is left out
                    result.problems.append(f"{file}: skipped: {special}")


def _special(path: Path) -> Optional[str]:
    """What `path` is when it exists and is neither a regular file nor a directory (a FIFO, a
    device, a socket), in words; None otherwise (a dangling link is not reported, as before)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return f"not a regular file: it is {kind_of(mode)}"
