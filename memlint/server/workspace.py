"""The project facts the server keeps warm: a summary of every Python file of the workspace, so that a
document is judged with what the other files say about it (an `evaluate()` another file only calls
under `torch.no_grad()`, a helper elsewhere that returns a loss), as `memlint check` judges it.

`load` summarises the workspace once, in a worker thread (the server lints documents as projects of
their own until it is done: it never waits for it); `refresh` re-reads a file saved or changed on
disk; `view` puts the open document's current text in place of its file and resolves the project
(memlint/pipeline/project.py) for it, which costs the resolution only, not a re-read of the files.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional

from memlint.analysis.summaries import summarize
from memlint.config import Settings
from memlint.pipeline.files import discover_files
from memlint.pipeline.prepare import prepare_file
from memlint.pipeline.project import FileView, Project, module_names
from memlint.pipeline.runner import display_name
from memlint.prescreen import Source


class WorkspaceFacts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._summaries: dict[str, Optional[dict]] = {}  # absolute path -> summary (None: does not compile)
        self._names: Optional[list[tuple[str, list[str]]]] = None  # module_names of the paths, in order
        self.ready = False

    def load(self, root: Path, settings: Settings) -> int:
        """Summarise the Python files under `root` that a check would read; the number summarised."""
        files = [path for path in discover_files([root], settings).files if path.suffix == ".py"]
        summaries = {}
        for path in files:
            absolute = os.path.abspath(path)
            summaries[absolute] = prepare_file(path, display_name(path), settings).summary
        with self._lock:
            self._summaries = summaries
            self._names = None
            self.ready = True
        return len(summaries)

    def refresh(self, path: str, settings: Settings) -> None:
        """Read a workspace file again (saved, created or changed on disk); forget a deleted one."""
        absolute = os.path.abspath(path)
        if not self.ready or not absolute.endswith(".py"):
            return
        summary = prepare_file(Path(absolute), display_name(Path(absolute)), settings).summary if os.path.isfile(absolute) else None
        with self._lock:
            known = absolute in self._summaries
            if os.path.isfile(absolute):
                self._summaries[absolute] = summary
            else:
                self._summaries.pop(absolute, None)
            if not known or absolute not in self._summaries:
                self._names = None  # the set of files changed: module names are worked out again

    def view(self, source: Source, path: Optional[str]) -> Optional[FileView]:
        """The project facts for the document at `path` whose text `source` holds; None before `load`
        or for a document outside the workspace (it is then a project of its own)."""
        if not self.ready or path is None:
            return None
        absolute = os.path.abspath(path)
        with self._lock:
            if absolute not in self._summaries:
                return None
            summaries = dict(self._summaries)
            if self._names is None:
                self._names = module_names([Path(p) for p in summaries])
            names = self._names
        summaries[absolute] = summarize(source)  # the editor's text, not the file on disk
        paths = list(summaries)
        project = Project([(Path(p), display_name(Path(p)), summaries[p]) for p in paths], names)
        return project.view(paths.index(absolute))
