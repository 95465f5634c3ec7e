"""Fingerprints of findings that survive line shifts: what a baseline and GitLab use to recognise a
finding after unrelated lines were added or removed above it.

A finding is identified by its file, its code and the text of the lines it spans (whitespace
collapsed), never by its line number. Two identical findings in one file (the same statement twice)
get the same content fingerprint; `numbered_fingerprints` tells them apart by order of appearance.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from typing import Sequence

from memlint.diagnostics import Diagnostic


def finding_text(diagnostic: Diagnostic) -> str:
    """The source lines of the finding (from its code frame), whitespace-normalised."""
    first, last = diagnostic.location.row, diagnostic.end_location.row
    lines = [text for row, text in diagnostic.frame if first <= row <= last]
    return "\n".join(" ".join(line.split()) for line in lines)


def text_fingerprint(diagnostic: Diagnostic) -> str:
    """Hex digest of code + the finding's source text (the message when there is none); no path."""
    text = finding_text(diagnostic) or diagnostic.message
    payload = "\0".join((diagnostic.code, text))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def content_fingerprint(diagnostic: Diagnostic) -> str:
    """Hex digest of file + code + the finding's source text."""
    payload = "\0".join((diagnostic.filename, text_fingerprint(diagnostic)))
    return hashlib.sha256(payload.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def numbered_fingerprints(diagnostics: Sequence[Diagnostic]) -> list[str]:
    """One unique fingerprint per finding: the content fingerprint plus its occurrence number."""
    seen: Counter = Counter()
    result = []
    for diagnostic in diagnostics:
        base = content_fingerprint(diagnostic)
        seen[base] += 1
        digest = hashlib.sha256(f"{base}:{seen[base]}".encode()).hexdigest()[:32]
        result.append(digest)
    return result
