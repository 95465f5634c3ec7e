"""`--baseline FILE`: report only findings that are not in the baseline; `--write-baseline` records the
current findings there.

A finding matches a baseline entry by file, code and a fingerprint of its source text (not its line),
so adding or removing lines elsewhere in the file does not bring baselined findings back. Entries are
counted: two identical findings in a file need two entries. Paths are stored relative to the
baseline's directory, so the baseline works from any working directory.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Sequence

from memlint.diagnostics import Diagnostic
from memlint.pipeline import registry
from memlint.pipeline.reading import BASELINE_LIMIT, read_regular
from memlint.pipeline.writing import write_output
from memlint.report.fingerprints import text_fingerprint

FORMAT_VERSION = 1


class BaselineError(Exception):
    pass


def _path(baseline: Path, filename: str) -> str:
    directory = os.path.dirname(os.path.abspath(baseline))
    return Path(os.path.relpath(os.path.abspath(filename), directory)).as_posix()


def _key(baseline: Path, d: Diagnostic) -> tuple[str, str, str]:
    return (_path(baseline, d.filename), d.code, text_fingerprint(d))


def write_baseline(baseline: Path, diagnostics: Sequence[Diagnostic]) -> int:
    """Record the findings (not ML900, which is memlint's own failure); returns how many."""
    entries = [
        {"path": path, "code": code, "fingerprint": fingerprint, "message": d.message}
        for d in diagnostics if d.code != registry.INTERNAL_ERROR[0]
        for path, code, fingerprint in [_key(baseline, d)]
    ]  # fmt: skip
    entries.sort(key=lambda e: (e["path"], e["code"], e["fingerprint"]))
    data = {"memlint-baseline": FORMAT_VERSION, "findings": entries}
    try:  # atomically, never through a symlink (memlint/pipeline/writing.py)
        write_output(baseline, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    except OSError as error:
        raise BaselineError(f"{baseline}: cannot write: {error.strerror or error}") from None
    return len(entries)


def read_baseline(baseline: Path) -> Counter:
    try:
        data = json.loads(read_regular(baseline, BASELINE_LIMIT, what="a baseline").decode("utf-8"))
    except FileNotFoundError:
        raise BaselineError(f"{baseline}: no such baseline (create it with --write-baseline)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BaselineError(f"{baseline}: cannot read the baseline: {error}") from None
    except RecursionError:  # JSON nested deeper than the interpreter's recursion limit
        raise BaselineError(f"{baseline}: not a memlint baseline: nested too deeply") from None
    if not isinstance(data, dict) or data.get("memlint-baseline") != FORMAT_VERSION or not isinstance(data.get("findings"), list):
        raise BaselineError(f"{baseline}: not a memlint baseline (version {FORMAT_VERSION})")
    try:
        return Counter((e["path"], e["code"], e["fingerprint"]) for e in data["findings"])
    except (TypeError, KeyError) as error:
        raise BaselineError(f"{baseline}: malformed entry: {error}") from None


def new_findings(baseline: Path, diagnostics: Sequence[Diagnostic]) -> list[Diagnostic]:
    """The findings not accounted for by the baseline, in their order."""
    remaining = read_baseline(baseline)
    kept = []
    for d in diagnostics:
        key = _key(baseline, d)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            kept.append(d)
    return kept
