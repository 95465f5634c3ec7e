"""Which scripts `memlint confirm` runs: the fixtures named, and for each a "before" (the file as it
is) and an "after" (a sibling `<name>.after.py`, or the file with memlint's fixes applied, written
to a temporary directory so the user's file is never touched)."""

from __future__ import annotations

import ast
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Sequence

from memlint.config import Selection, build_settings, discover
from memlint.pipeline.engine import lint_text
from memlint.pipeline.fixes import fix_text

AFTER_SUFFIX = ".after.py"


class VariantError(Exception):
    """A fixture that cannot be prepared (unreadable, not Python)."""


@dataclass
class Fixture:
    path: Path
    display: str
    codes: list[str] = field(default_factory=list)  # findings in the "before" file
    after_source: str = "none"  # "after-file", "memlint-fix" or "none" (nothing to change)
    after_path: Optional[Path] = None
    fixed: dict = field(default_factory=dict)  # code -> fixes applied (memlint-fix only)
    # memlint-fix only: for each line of the fixed copy, its line in the user's file (None: changed)
    line_map: list = field(default_factory=list)
    summary: str = ""  # the script's docstring: what the fixture demonstrates


def find_fixtures(targets: Sequence[Path]) -> tuple[list[Path], list[str]]:
    """The fixture files to run: files as named, directories' *.py (not *.after.py), sorted."""
    found, problems = [], []
    for target in targets:
        if target.is_dir():
            found.extend(sorted(p for p in target.glob("*.py") if not p.name.endswith(AFTER_SUFFIX)))
        elif target.is_file():
            found.append(target)
        else:
            problems.append(f"{target}: no such file or directory")
    return found, problems


def after_file(path: Path) -> Path:
    return path.with_name(path.name[: -len(".py")] + AFTER_SUFFIX) if path.suffix == ".py" else path


def line_map(original: str, fixed: str) -> list:
    """For each line of `fixed`, the 1-based line of `original` it came from unchanged, or the first
    line of the region it replaces (None past the end), so errors name the user's lines."""
    old, new = original.splitlines(), fixed.splitlines()
    mapped: list = [None] * len(new)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                mapped[j] = i1 + (j - j1) + 1
            elif i1 < len(old):
                mapped[j] = min(i1 + (j - j1), i2 - 1 if i2 > i1 else i1) + 1
    return mapped


def _docstring(text: str) -> str:
    try:
        return " ".join((ast.get_docstring(ast.parse(text)) or "").split())
    except (SyntaxError, ValueError):
        return ""


def prepare(path: Path, display: str, select: Optional[Sequence[str]], workdir: Path) -> Fixture:
    """Lint the fixture, and find or build its "after" variant (in `workdir` when built)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise VariantError(f"{display}: cannot read: {error}") from None
    settings = build_settings(discover(path), Selection(select or None), unsafe_fixes=True)
    fixture = Fixture(path, display, codes=sorted({d.code for d in lint_text(text, str(path), settings)}))
    fixture.summary = _docstring(text)
    outcome = fix_text(text, str(path), settings, unsafe=True)
    sibling = after_file(path)
    if sibling != path and sibling.is_file():
        fixture.after_source, fixture.after_path = "after-file", sibling
    elif outcome.text != text:
        target = workdir / path.name  # same file name, so tracebacks read naturally
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(outcome.text, encoding="utf-8")
        fixture.after_source, fixture.after_path = "memlint-fix", target
        fixture.fixed = dict(outcome.fixed)
        fixture.line_map = line_map(text, outcome.text)
    return fixture
