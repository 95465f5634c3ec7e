"""The values every part of memlint passes around: findings, fixes and edits."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Callable, Optional


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Applicability(str, enum.Enum):
    """Whether a fix may change behaviour: safe fixes run with --fix, unsafe ones need --unsafe-fixes."""

    SAFE = "safe"
    UNSAFE = "unsafe"


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based row and a 1-based column (counted in characters)."""

    row: int
    column: int

    def to_json(self) -> dict:
        return {"row": self.row, "column": self.column}


@dataclass(frozen=True)
class Edit:
    """Replace the text between two character offsets of the source with `content`."""

    start: int
    end: int
    content: str
    location: Location
    end_location: Location

    def to_json(self) -> dict:
        return {
            "content": self.content,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
        }


@dataclass(frozen=True)
class Fix:
    message: str
    applicability: Applicability
    edits: tuple[Edit, ...]

    @property
    def is_safe(self) -> bool:
        return self.applicability is Applicability.SAFE

    def to_json(self) -> dict:
        return {
            "applicability": self.applicability.value,
            "message": self.message,
            "edits": [edit.to_json() for edit in self.edits],
        }


class DeferredFix:
    """A fix known to exist (its message and applicability) whose edits are computed on first use."""

    def __init__(self, message: str, applicability: Applicability, compute: Callable[[], Optional[Fix]]) -> None:
        self.message = message
        self.applicability = applicability
        self._compute: Optional[Callable[[], Optional[Fix]]] = compute
        self._fix: Optional[Fix] = None

    @property
    def is_safe(self) -> bool:
        return self.applicability is Applicability.SAFE

    def resolve(self) -> Optional[Fix]:
        """The fix (None when its edits could not be made after all), computed once."""
        if self._compute is not None:
            self._fix, self._compute = self._compute(), None  # what the computation holds is let go
        return self._fix


@dataclass(frozen=True)
class Related:
    """Another place a finding involves (where an accumulator is read, the loop that runs it), for
    editors' related information and SARIF's related locations."""

    message: str
    location: Location
    end_location: Location
    cell: Optional[int] = None  # as Diagnostic.cell

    def to_json(self) -> dict:
        return {"message": self.message, "location": self.location.to_json(),
                "end_location": self.end_location.to_json(), "cell": self.cell}  # fmt: skip


@dataclass(frozen=True)
class Diagnostic:
    code: str
    name: str
    message: str
    severity: Severity
    filename: str
    location: Location
    end_location: Location
    fix: Optional[Fix] = None
    url: Optional[str] = None
    # 1-based index of the notebook cell the finding is in; None for plain Python files.
    cell: Optional[int] = None
    # (row, text) of the lines around the finding, for the code frame of the `full` format.
    frame: tuple[tuple[int, str], ...] = field(default=(), compare=False, repr=False)
    related: tuple[Related, ...] = ()
    # The fix, computed when first asked for, where the caller asked for that (the language server:
    # most findings shown are never fixed, and computing 177 fixes takes 30 ms of a keystroke's 150).
    deferred_fix: Optional[DeferredFix] = field(default=None, compare=False, repr=False)

    def has_safe_fix(self) -> bool:
        """Whether the finding has a safe fix (a deferred one is not computed for this)."""
        fix = self.deferred_fix or self.fix
        return fix is not None and fix.is_safe

    def resolved_fix(self) -> Optional[Fix]:
        """The fix, computing a deferred one now."""
        return self.deferred_fix.resolve() if self.deferred_fix is not None else self.fix

    def sort_key(self) -> tuple:
        return (self.filename, self.cell or 0, self.location.row, self.location.column, self.code)

    def to_json(self) -> dict:
        return {
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "severity": self.severity.value,
            "filename": self.filename,
            "location": self.location.to_json(),
            "end_location": self.end_location.to_json(),
            "fix": self.fix.to_json() if self.fix else None,
            "url": self.url,
            "cell": self.cell,
            "related": [item.to_json() for item in self.related],
        }
