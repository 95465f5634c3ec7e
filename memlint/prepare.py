"""Phase one of a run over many files (memlint/runner.py): each file's summary for the project pass
(memlint/analysis/summaries.py), and whether its screens let it through, both from one compile of
the file, and cached by its bytes like findings.

Phase two then lints only the files the screens let through, or those whose project facts could
change the screens' answer (`FileView.widens_screens`), without compiling them again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from memlint.analysis.summaries import summarize
from memlint.config import Settings
from memlint.depth import too_complex
from memlint.prescreen import Source, needs_analysis
from memlint.source import UndecodableSource, decode

if TYPE_CHECKING:
    from memlint.cache import Cache


@dataclass(frozen=True)
class Prepared:
    digest: Optional[str]  # memlint.cache.content_digest of the bytes read; None: unreadable
    summary: Optional[dict]  # None: no summary (not Python that compiles, a notebook, unreadable)
    # True: compiled, and the screens let it through; False: no finding without project facts
    # (no torch, no rule for it, or every screen said no); None: phase two decides everything.
    screened: Optional[bool]


UNREADABLE = Prepared(None, None, None)


def prepare_file(path: Path, filename: str, settings: Settings, cache: Optional[Cache] = None) -> Prepared:
    try:
        data = path.read_bytes()
    except OSError:
        return UNREADABLE  # phase two reads it again and reports why it cannot
    return prepare_data(data, filename, settings, cache)


def prepare_data(data: bytes, filename: str, settings: Settings, cache: Optional[Cache] = None) -> Prepared:
    from memlint.cache import content_digest

    digest = content_digest(data)
    if filename.endswith(".ipynb"):
        return Prepared(digest, None, None)  # a notebook is linted as a project of its own
    key = cache.key_for(digest, filename, kind="summary") if cache is not None else None
    if key is not None:
        entry = cache.get_summary(key)  # type: ignore[union-attr]
        if entry is not None:
            return Prepared(digest, entry["summary"], entry["screened"])
    prepared = _prepare(data, digest, filename, settings)
    if key is not None:
        cache.put_summary(key, {"summary": prepared.summary, "screened": prepared.screened})  # type: ignore[union-attr]
    return prepared


def _prepare(data: bytes, digest: str, filename: str, settings: Settings) -> Prepared:
    try:
        text = decode(data).text
    except UndecodableSource:
        return Prepared(digest, None, None)
    if settings.max_file_size is not None and len(text) > settings.max_file_size:
        return Prepared(digest, None, None)  # not compiled here: phase two reports it as too large
    source = Source(text)
    if source.tree is None:
        return Prepared(digest, None, None)  # phase two reports the syntax error
    try:
        summary = summarize(source)
    except (RecursionError, MemoryError):
        summary = None  # the file keeps its own findings; the project only knows less about it
    # What lint_text would decide before the full analysis, with no project facts (they can only
    # widen the screens, and phase two looks again where they do).
    codes = settings.codes_for(filename)
    if "torch" not in text or not codes:
        return Prepared(digest, summary, False)
    if not needs_analysis(source, codes, settings.options):
        return Prepared(digest, summary, False)
    # Phase two parses a screened file with libcst straight away: one too deep for it (depth.py)
    # is left to phase two to compile and report.
    return Prepared(digest, summary, True if too_complex(source.tree, text) is None else None)
