"""Phase one of a run over many files (memlint/pipeline/runner.py), the project pass: each file's summary
(memlint/analysis/summaries.py) and whether its screens let it through, from one compile of the
file; then, in the parent, the facts each file depends on (memlint/pipeline/project.py).

Phase two then lints only the files the screens let through, or those whose project facts could
change the screens' answer (`FileView.widens_screens`), without compiling them again.

Cached like findings: a file's summary under its bytes and name; the whole pass's result (every
file's view and screen answer) under the names, bytes and module names of all the files, so that a
run over unchanged files reads one entry instead of every summary.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Optional, Sequence

from memlint.analysis.summaries import summarize
from memlint.config import Settings
from memlint.pipeline.cache import content_digest
from memlint.pipeline.masking import plan as parse_plan
from memlint.pipeline.project import FileView, Project, module_names
from memlint.pipeline.python_refusals import python_refusal
from memlint.pipeline.reading import read_regular
from memlint.pipeline.source import UndecodableSource, decode
from memlint.pipeline.unused_suppressions import CODE as UNUSED_SUPPRESSION
from memlint.pipeline.unused_suppressions import may_have_directives
from memlint.pipeline.workers import fewer_collections
from memlint.prescreen import Source, may_use_torch, screened_codes

if TYPE_CHECKING:
    from memlint.pipeline.cache import Cache


@dataclass(frozen=True)
class Prepared:
    digest: Optional[str]  # memlint.pipeline.cache.content_digest of the bytes read; None: unreadable
    summary: Optional[dict]  # None: no summary (not Python that compiles, unreadable)
    # True: compiled, and the screens let it through; False: no finding without project facts
    # (no torch, no rule for it, or every screen said no); None: phase two decides everything.
    screened: Optional[bool]
    # Where screened: the rules whose screens let it through (without project facts), the only ones
    # phase two runs on it unless the facts widen the screens; None: every rule that runs on it.
    rules: Optional[frozenset[str]] = None


UNREADABLE = Prepared(None, None, None)


# The files the project pass summarises: Python files, and notebooks (their code cells import and call
# like a script).  `project-context` and the server's workspace facts read the same kinds.
SUMMARISED_SUFFIXES = (".py", ".ipynb")


def prepare_file(path: Path, filename: str, settings: Settings, cache: Optional[Cache] = None) -> Prepared:
    try:
        data = read_regular(path, None)
    except OSError:
        return UNREADABLE  # phase two reads it again and reports why it cannot
    return prepare_data(data, filename, settings, cache)


def prepare_data(data: bytes, filename: str, settings: Settings, cache: Optional[Cache] = None) -> Prepared:
    digest = content_digest(data)
    key = cache.key_for(digest, filename, kind="summary") if cache is not None else None
    if key is not None:
        entry = cache.get_summary(key)  # type: ignore[union-attr]
        if entry is not None:
            return Prepared(digest, entry["summary"], entry["screened"], _rules(entry["rules"]))
    if filename.endswith(".ipynb"):
        prepared = _prepare_notebook(data, digest, filename, settings)
    else:
        prepared = _prepare(data, digest, filename, settings)
    if key is not None:
        cache.put_summary(key, {"summary": prepared.summary, "screened": prepared.screened, "rules": _rules_data(prepared.rules)})  # type: ignore[union-attr]
    return prepared


def _rules(data: Optional[list]) -> Optional[frozenset[str]]:
    return None if data is None else frozenset(data)


def _rules_data(rules: Optional[frozenset[str]]) -> Optional[list]:
    return None if rules is None else sorted(rules)


def _readable_text(data: bytes, settings: Settings) -> Optional[str]:
    """The file's text, or None where phase two will report it instead (undecodable, or larger than
    `max-file-size`)."""
    try:
        text = decode(data).text
    except UndecodableSource:
        return None
    if settings.max_file_size is not None and len(text) > settings.max_file_size:
        return None
    return text


def _prepare_notebook(data: bytes, digest: str, filename: str, settings: Settings) -> Prepared:
    """A notebook's place in the project pass: the summary of its code cells, so that what it imports
    and whether it names an accelerator count for the files it imports (a library module only CUDA
    notebooks import runs on the GPU).  The notebook itself is still linted as a project of its own
    (runner.process_text), everything decided in phase two."""
    from memlint.pipeline.notebooks import notebook_module  # only where a run has notebooks

    settings = settings.for_path(filename)
    text = _readable_text(data, settings)
    if text is None:
        return Prepared(digest, None, None)
    module = notebook_module(text, filename)
    source = Source(module) if module else None
    if source is None or source.tree is None:
        return Prepared(digest, None, None)
    try:
        return Prepared(digest, summarize(source), None)
    except (RecursionError, MemoryError):
        return Prepared(digest, None, None)


def _prepare(data: bytes, digest: str, filename: str, settings: Settings) -> Prepared:
    settings = settings.for_path(filename)
    text = _readable_text(data, settings)
    if text is None:
        return Prepared(digest, None, None)  # not compiled here: phase two reports why
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
    if UNUSED_SUPPRESSION in codes and may_have_directives(text):
        return Prepared(digest, summary, None)  # ML100 judges its comments in phase two, whatever the screens say
    codes = codes - {UNUSED_SUPPRESSION}  # engine.lint_text judges it without the analysis
    if not may_use_torch(text) or not codes:
        return Prepared(digest, summary, False)
    if python_refusal(source) is not None:
        return Prepared(digest, summary, None)  # CPython refuses what libcst may read: phase two reports it
    rules = screened_codes(source, codes, settings.options)
    if not rules:
        return Prepared(digest, summary, False)
    # Phase two parses a screened file with libcst straight away: one with something libcst cannot
    # take (too deep, too dense: masking.py) is left to phase two to compile, mask and report.
    if not parse_plan(source.tree, text).plain:
        return Prepared(digest, summary, None)
    return Prepared(digest, summary, True, rules)


@dataclass(frozen=True)
class Facts:
    """What phase two needs to know about one file."""

    view: FileView
    digest: Optional[str]  # as Prepared
    screened: Optional[bool]  # as Prepared
    rules: Optional[frozenset[str]] = None  # as Prepared


def prepare_chunk(paths: Sequence[Path], names: Sequence[str], settings: Settings, cache: Optional[Cache]) -> list[Prepared]:
    """A worker's share of phase one."""
    fewer_collections()  # in a worker: for the rest of its life
    return [prepare_file(path, name, settings, cache) for path, name in zip(paths, names)]


def project_pass(
    files: Sequence[Path],
    names: Sequence[str],
    settings: Settings,
    cache: Optional[Cache],
    in_workers: Callable[[list[int]], dict[int, Prepared]],
) -> list[Facts]:
    """Every file's facts.  `names`: the names files are shown under; `in_workers(indices)`
    prepares those files in worker processes (or here) and returns what `prepare_file` gives."""
    modules = module_names(files)
    prepared: dict[int, Prepared] = {}
    key = None
    if cache is not None:  # each file is read and hashed here, once
        digests = []
        for index, path in enumerate(files):
            try:
                digests.append(content_digest(read_regular(path, None)))
            except OSError:
                prepared[index] = UNREADABLE
                digests.append(None)
        if not prepared:
            key = cache.key_for(_pass_digest(names, digests, modules), "", kind="project")
            known = _read_pass(cache, key, len(files), digests)
            if known is not None:
                return known
        for index, path in enumerate(files):
            if index in prepared:
                continue
            entry = cache.get_summary(cache.key_for(digests[index], names[index], kind="summary"))  # type: ignore[arg-type]
            if entry is not None:
                prepared[index] = Prepared(digests[index], entry["summary"], entry["screened"], _rules(entry["rules"]))
    todo = [index for index in range(len(files)) if index not in prepared]
    prepared.update(in_workers(todo))
    project = Project([(path, name, prepared[i].summary) for i, (path, name) in enumerate(zip(files, names))], modules)
    facts = [Facts(project.view(i), prepared[i].digest, prepared[i].screened, prepared[i].rules) for i in range(len(files))]
    if key is not None and all(f.digest is not None for f in facts):
        cache.put_pass(key, {"files": [[f.screened, f.view.to_data(), _rules_data(f.rules)] for f in facts]})  # type: ignore[union-attr]
    return facts


def _pass_digest(names: Sequence[str], digests: Sequence[Optional[str]], modules: Sequence[tuple[str, list[str]]]) -> str:
    payload = json.dumps([[name, digest, module] for name, digest, module in zip(names, digests, modules)], separators=(",", ":"))
    return hashlib.sha256(payload.encode("utf-8", "surrogateescape")).hexdigest()


def _read_pass(cache: Cache, key: str, count: int, digests: Sequence[Optional[str]]) -> Optional[list[Facts]]:
    """The stored result of a pass over the same files, or None (missing, or not shaped like one)."""
    entry = cache.get_pass(key)
    if entry is None or len(entry) != count:
        return None
    facts = []
    for (screened, data, rules), digest in zip(entry, digests):
        view = FileView.from_data(data)
        if view is None or not (screened is None or type(screened) is bool) or not _valid_rules(rules):
            return None
        facts.append(Facts(view, digest, screened, _rules(rules)))
    return facts


def _valid_rules(data: object) -> bool:
    """Is `data` what `_rules_data` writes (a damaged or crafted cache entry must be a miss)?"""
    return data is None or (type(data) is list and all(type(code) is str for code in data))
