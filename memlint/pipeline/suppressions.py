"""Suppression comments: `# noqa: ML001`, `# memlint: ignore[ML001]`, `# memlint: ignore-file[...]`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from memlint.pipeline.text import Positions

# Codes separated by commas and/or spaces, as flake8 and Ruff read them: `# noqa: E501 ML001`,
# `# noqa: E501, ML001`; other tools' codes may be listed beside memlint's.
_CODES = r"[A-Z]+[0-9]+(?:(?:[ \t]*,[ \t]*|[ \t]+)[A-Z]+[0-9]+)*"
_NOQA = re.compile(rf"#\s*noqa(?::\s*(?P<codes>{_CODES}))?", re.IGNORECASE)
# A `# noqa: CODES` comment with its list (for writing codes into it: integrations/noqa.py).
NOQA_WITH_CODES = re.compile(rf"#\s*noqa:\s*(?P<codes>{_CODES})", re.IGNORECASE)
_IGNORE = re.compile(rf"#\s*memlint:\s*ignore(?!-file)(?:\[\s*(?P<codes>{_CODES})\s*\])?")
_IGNORE_FILE = re.compile(
    rf"^[ \t]*#[ \t]*memlint:[ \t]*ignore-file(?:\[\s*(?P<bracket>{_CODES})\s*\]|:\s*(?P<colon>{_CODES}))?",
    re.MULTILINE,
)


def listed_codes(comment: str) -> list[tuple[re.Match, str, bool]]:
    """The suppressions in one comment that list codes, in order: (match, the name of the group that
    holds the codes, whether it is file-wide), read with the same patterns as above (for ML100)."""
    found = []
    for pattern, groups, file_wide in (
        (NOQA_WITH_CODES, ("codes",), False), (_IGNORE, ("codes",), False), (_IGNORE_FILE, ("bracket", "colon"), True),
    ):  # fmt: skip
        for match in pattern.finditer(comment):
            group = next((name for name in groups if match.group(name) is not None), None)
            if group is not None:  # a bare `# memlint: ignore` lists none
                found.append((match, group, file_wide))
    return sorted(found, key=lambda item: item[0].start())


def split_codes(codes: str) -> list[str]:
    """`"E501, ML001 ML002"` -> ["E501", "ML001", "ML002"], in order."""
    return [code for code in re.split(r"[\s,]+", codes.strip()) if code]


def _split(codes: str) -> frozenset[str]:
    return frozenset(code.upper() for code in split_codes(codes))


@dataclass(frozen=True)
class FileSuppression:
    codes: Optional[frozenset[str]]  # None: every code

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def file_suppressions(text: str) -> list[FileSuppression]:
    found = []
    for match in _IGNORE_FILE.finditer(text):
        codes = match.group("bracket") or match.group("colon")
        found.append(FileSuppression(_split(codes) if codes else None))
    return found


def line_suppresses(line: str, code: str) -> bool:
    """Does a comment on this physical line suppress `code`?"""
    if "#" not in line:
        return False
    for pattern in (_NOQA, _IGNORE):
        for match in pattern.finditer(line):
            codes = match.group("codes")
            if codes is None or code in _split(codes):
                return True
    return False


FILE_WIDE = 0  # the row `Suppressions.used` records for a file-wide suppression


@dataclass
class Suppressions:
    """The suppression comments of one text, asked finding by finding; `used` records (row, code)
    for each finding a comment suppressed (row FILE_WIDE for `ignore-file`), for ML100."""

    text: str
    used: set[tuple[int, str]] = field(default_factory=set)
    ignored: bool = False  # --ignore-noqa: no comment suppresses anything

    def __post_init__(self) -> None:
        self._file: Optional[list[FileSuppression]] = None  # read when a finding first asks
        self._lines: Optional[Positions] = None

    def suppresses(self, code: str, row: int) -> bool:
        if self.ignored:
            return False
        if self._file is None:
            self._file = file_suppressions(self.text)
        if any(s.covers(code) for s in self._file):
            self.used.add((FILE_WIDE, code))
            return True
        if self._lines is None:
            self._lines = Positions(self.text)
        if line_suppresses(self._lines.line_text(row), code):
            self.used.add((row, code))
            return True
        return False
