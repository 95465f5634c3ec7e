"""The project facts the server keeps warm: a summary of every Python file of the workspace, so that a
document is judged with what the other files say about it (an `evaluate()` another file only calls
under `torch.no_grad()`, a helper elsewhere that returns a loss), as `memlint check` judges it.

Resolving the project (memlint/pipeline/project.py) takes time in proportion to the workspace (about
60 ms for timm's 304 files, 480 ms for transformers' 2,860 here), too long for every keystroke. So
the server keeps one resolved project and answers each lint from it at once; when the open document's
summary is no longer the one the project was resolved with (a function added, a call changed), the
answer is marked stale and the server resolves the project again in a worker thread, then lints the
open documents again: the published diagnostics settle on the exact facts a moment later.

`load` summarises the workspace once, in a worker thread (the server lints documents as projects of
their own until it is done: it never waits for it); `refresh` re-reads a file saved or changed on
disk; `resolve` builds the project from the files on disk and the editor's texts.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Optional

from memlint.analysis.summaries import summarize
from memlint.config import Settings
from memlint.pipeline.files import discover_files
from memlint.pipeline.prepare import SUMMARISED_SUFFIXES, prepare_file
from memlint.pipeline.project import FileView, Project, module_names
from memlint.pipeline.runner import display_name
from memlint.prescreen import Source


class WorkspaceFacts:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._on_disk: dict[str, Optional[dict]] = {}  # absolute path -> summary (None: does not compile)
        self._in_editor: dict[str, Optional[dict]] = {}  # the open documents' summaries, as last linted
        self._resolved: Optional[tuple[Project, dict[str, Optional[dict]], dict[str, int]]] = None
        self.ready = False

    def load(self, root: Path, settings: Settings) -> int:
        """Summarise the Python files and notebooks under `root` that a check would read (a notebook's
        code cells import and call like a script: prepare._prepare_notebook), and resolve the project;
        the number of files."""
        files = [path for path in discover_files([root], settings).files if path.suffix in SUMMARISED_SUFFIXES]
        on_disk = {os.path.abspath(path): prepare_file(path, display_name(path), settings).summary for path in files}
        with self._lock:
            self._on_disk = on_disk
        self.resolve()
        self.ready = True
        return len(on_disk)

    def refresh(self, path: str, settings: Settings) -> None:
        """Read a workspace file again (saved, created or changed on disk); forget a deleted one. The
        project is resolved again by `resolve` (the server does it in a worker thread)."""
        absolute = os.path.abspath(path)
        if not self.ready or not absolute.endswith(SUMMARISED_SUFFIXES):
            return
        exists = os.path.isfile(absolute)
        summary = prepare_file(Path(absolute), display_name(Path(absolute)), settings).summary if exists else None
        with self._lock:
            if exists:
                self._on_disk[absolute] = summary
            else:
                self._on_disk.pop(absolute, None)
                self._in_editor.pop(absolute, None)

    def close(self, path: str) -> None:
        """The editor closed the document: the file on disk stands for it again."""
        with self._lock:
            self._in_editor.pop(os.path.abspath(path), None)

    def _current(self) -> dict[str, Optional[dict]]:
        """The summaries of the files on disk, with the open documents' texts in their place (under the lock)."""
        return {**self._on_disk, **{p: s for p, s in self._in_editor.items() if p in self._on_disk}}

    def resolve(self) -> None:
        """Resolve the project from the current summaries."""
        with self._lock:
            summaries = self._current()
        paths = list(summaries)
        project = Project([(Path(p), display_name(Path(p)), summaries[p]) for p in paths], module_names([Path(p) for p in paths]))
        with self._lock:
            self._resolved = (project, summaries, {p: index for index, p in enumerate(paths)})

    def is_current(self) -> bool:
        """Was the project resolved with the summaries known now (disk and editor)?"""
        with self._lock:
            if self._resolved is None:
                return False
            return self._resolved[1] == self._current()

    def view(self, source: Source, path: Optional[str]) -> tuple[Optional[FileView], Optional[dict]]:
        """The project facts for the document at `path` whose text `source` holds, and the text's
        summary when the facts were resolved with another one (then `edited` records it and the
        project is resolved again); (None, None) before `load` or for a document outside the
        workspace (it is then a project of its own)."""
        if not self.ready or path is None:
            return None, None
        absolute = os.path.abspath(path)
        summary = summarize(source)
        with self._lock:
            if absolute not in self._on_disk or self._resolved is None:
                return None, None
            project, used, index = self._resolved
        return project.view(index[absolute]), (None if used.get(absolute) == summary else summary)

    def edited(self, path: str, summary: Optional[dict]) -> None:
        """The open document at `path` now has this summary (called for a text still open, so that a
        document closed meanwhile does not come back)."""
        with self._lock:
            self._in_editor[os.path.abspath(path)] = summary
