"""The rule API: a rule is a small class with its identity, its docs, its examples and its checks.

A rule defines `visit_<Node>` / `leave_<Node>` methods for the libcst node types it cares about; the
engine calls them during its single traversal of each file.  Rules ask `self.ctx` (the shared
analysis) about the code and call `self.report(...)`; they never walk the tree themselves.

    class AccumulatedGraph(Rule):
        '''
        ## What it does
        ...
        '''
        code = "ML001"
        name = "accumulated-graph"
        severity = Severity.WARNING
        fix_safety = "safe"
        VALID = [Valid("...")]
        INVALID = [Invalid("...", line=4, column=9, fixed="...")]
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping, Optional

from memlint.diagnostics import Applicability, Severity
from memlint.sentences import first_sentence

if TYPE_CHECKING:
    import libcst as cst

    from memlint.analysis.context import Context, FileFacts, FunctionKey

DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Use instead", "Fix safety", "Measured effect")
CODE_PATTERN = re.compile(r"^[A-Z]{1,4}[0-9]{3}$")


@dataclass(frozen=True)
class Valid:
    """A snippet on which the rule must report nothing."""

    code: str
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Invalid:
    """A snippet on which the rule must report exactly once, at `line`/`column` (1-based).

    `fixed` is the code after `--fix` (with `--unsafe-fixes` when `unsafe` is true); None means the
    finding has no fix.  `message` is a substring the message must contain.
    """

    code: str
    line: int
    column: int
    fixed: Optional[str] = None
    unsafe: bool = False
    message: Optional[str] = None
    config: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeFix:
    """A fix described as CST node replacements; the engine turns it into minimal text edits."""

    message: str
    applicability: Applicability
    replacements: tuple[tuple[cst.CSTNode, cst.CSTNode], ...]


@dataclass
class Report:
    rule: "Rule"
    node: cst.CSTNode
    message: str
    fix: Optional[NodeFix]
    # Enclosing functions when the finding only holds where gradients are recorded; the engine drops
    # it when the file shows that one of them only ever runs without gradient tracking.
    grad_sensitive_chain: Optional[tuple["FunctionKey", ...]] = None
    # A rule whose findings differ in severity (ML007: a crash is an error, a missing option a
    # warning) sets it per finding; None means the rule's own severity.
    severity: Optional[Severity] = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    default_enabled: ClassVar[bool] = True
    # "safe", "unsafe", "mixed" or "none": what `memlint rules` shows in its fix column.
    fix_safety: ClassVar[str] = "none"
    VALID: ClassVar[list[Valid]] = []
    INVALID: ClassVar[list[Invalid]] = []

    def __init__(self, ctx: "Context", reports: list[Report], options: Mapping[str, Any]) -> None:
        self.ctx = ctx
        self.options = options
        self._reports = reports

    # -------------------------------------------------------------- for rule authors

    def report(
        self,
        node: cst.CSTNode,
        message: str,
        fix: Optional[NodeFix] = None,
        *,
        grad_sensitive: bool = False,
        severity: Optional[Severity] = None,
    ) -> None:
        chain = self.ctx.function_chain if grad_sensitive else None
        self._reports.append(Report(self, node, message, fix, chain, severity))

    @staticmethod
    def replace(
        old: cst.CSTNode, new: cst.CSTNode, message: str, *, safe: bool = True
    ) -> NodeFix:
        applicability = Applicability.SAFE if safe else Applicability.UNSAFE
        return NodeFix(message, applicability, ((old, new),))

    def finish(self, facts: "FileFacts") -> None:
        """Called once the whole file has been seen; rules with look-ahead conditions report here."""

    # -------------------------------------------------------------- documentation

    @classmethod
    def documentation(cls) -> str:
        return textwrap.dedent(inspect.getdoc(cls) or "").strip()

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        sections: dict[str, str] = {}
        current = None
        for line in cls.documentation().splitlines():
            match = re.match(r"^##\s+(.*?)\s*$", line)
            if match:
                current = match.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {key: value.strip() for key, value in sections.items()}

    @classmethod
    def summary(cls) -> str:
        """The first sentence of "What it does", for listings."""
        what = cls.doc_sections().get("What it does", "")
        return first_sentence(what.split("\n\n")[0])


def rule_url(code: str) -> str:
    from memlint import DOCS_URL

    return DOCS_URL.format(code=code.lower())
