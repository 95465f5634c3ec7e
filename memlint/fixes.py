"""Applying fixes: non-overlapping edits, re-lint to a fixed point, never produce code that does not
parse, and write files atomically."""

from __future__ import annotations

import ast
import os
import tempfile
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.engine import apply_edits, lint_text

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    fixed: Counter = field(default_factory=Counter)  # code -> number of fixes applied
    remaining: list[Diagnostic] = field(default_factory=list)
    # Fixes that would have produced code that does not parse: they were not applied.
    dropped: list[Diagnostic] = field(default_factory=list)


def parses(text: str, filename: str = "<fix>") -> bool:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, filename, "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return True


def _fix_key(diagnostic: Diagnostic) -> tuple:
    assert diagnostic.fix is not None
    return (diagnostic.code, diagnostic.message, tuple((e.content, e.start, e.end) for e in diagnostic.fix.edits))


def _non_overlapping(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """Fixes in source order, skipping any whose edits touch a region an earlier one already edits."""
    chosen, taken = [], []
    for diagnostic in sorted(diagnostics, key=lambda d: (d.fix.edits[0].start, d.code)):
        spans = [(e.start, e.end) for e in diagnostic.fix.edits]
        if any(s <= te and ts <= e for s, e in spans for ts, te in taken):
            continue  # overlapping or touching: the next round re-lints and gets a fresh fix
        chosen.append(diagnostic)
        taken.extend(spans)
    return chosen


def fix_text(text: str, filename: str, settings: Settings, *, unsafe: bool) -> FixOutcome:
    """Apply every applicable fix to `text`, re-linting after each round, until nothing changes."""
    outcome = FixOutcome(text)
    rejected: set[tuple] = set()
    diagnostics = lint_text(text, filename, settings)
    for _ in range(MAX_ROUNDS):
        candidates = [
            d for d in diagnostics
            if d.fix is not None and (unsafe or d.fix.is_safe) and _fix_key(d) not in rejected
        ]  # fmt: skip
        if not candidates:
            break
        chosen = _non_overlapping(candidates)
        new_text = apply_edits(text, [e for d in chosen for e in d.fix.edits])
        if not parses(new_text, filename):
            # Find the fixes that break the code on their own, drop them, and keep the rest.
            good = []
            for diagnostic in chosen:
                if parses(apply_edits(text, diagnostic.fix.edits), filename):
                    good.append(diagnostic)
                else:
                    rejected.add(_fix_key(diagnostic))
                    outcome.dropped.append(diagnostic)
            chosen = good
            new_text = apply_edits(text, [e for d in chosen for e in d.fix.edits])
            if not chosen or not parses(new_text, filename):
                chosen = chosen[:1]
                new_text = apply_edits(text, chosen[0].fix.edits) if chosen else text
        if not chosen:
            continue
        outcome.fixed.update(d.code for d in chosen)
        text = new_text
        diagnostics = lint_text(text, filename, settings)
    outcome.text = text
    outcome.remaining = diagnostics
    return outcome


class FileChangedError(Exception):
    """The file on disk changed after memlint read it; it was not overwritten."""


def write_atomically(path: Path, data: bytes, *, expected: bytes | None = None) -> None:
    """Replace `path` with `data` via a temporary file and a rename, keeping its permissions.

    With `expected`, refuse (FileChangedError) when the file no longer holds those bytes.
    """
    path = Path(path)
    if expected is not None and path.read_bytes() != expected:
        raise FileChangedError(f"{path} changed on disk since it was read; not overwritten")
    mode = path.stat().st_mode
    target = path.resolve()  # write through a symlink to the file it names
    descriptor, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".memlint-tmp", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temporary, mode & 0o7777)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise
