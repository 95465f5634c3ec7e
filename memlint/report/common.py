"""What several output formats need: the rule catalogue with the reserved codes, cell-aware
messages and column conversions from a finding's code frame."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from memlint.diagnostics import Diagnostic, Severity
from memlint.pipeline import registry
from memlint.rule import rule_url

TOOL_NAME = "memlint"


@dataclass(frozen=True)
class RuleInfo:
    code: str
    name: str
    summary: str
    description: str  # the "What it does" section
    documentation: str
    severity: Severity
    url: Optional[str]  # None unless MEMLINT_DOCS_URL says where the rule pages are


_RESERVED_DOCS = {
    registry.SYNTAX_ERROR[0]: (
        "The file could not be parsed as Python",
        "## What it does\nReports a file that is not valid Python (or not a valid notebook), so no rule "
        "could look at it, with Python's message: also code Python's compiler refuses after parsing it "
        "(a `return` or `yield` outside a function, `break` or `continue` outside a loop, `nonlocal` at "
        "module level, a string escape no Python 3 decodes such as `\\x4`), which cannot run. An unknown "
        "`\\N{...}` character name is not reported: which names exist depends on the interpreter's Unicode "
        "version (`\\N{SHAKING FACE}` compiles on Python 3.12, not on 3.11), so the file is linted as it "
        "reads.\n\n## Why is this bad?\nmemlint cannot check code it cannot parse; fix the "
        "syntax error and run memlint again.",
    ),
    registry.INTERNAL_ERROR[0]: (
        "memlint itself failed on this file",
        "## What it does\nReports that a rule or the shared analysis raised an exception on this file. "
        "The other rules ran normally.\n\n## Why is this bad?\nIt is a bug in memlint (or in a "
        "third-party rule): please report it with the file that triggers it.",
    ),
    registry.NOT_ANALYSED[0]: (
        "memlint did not analyse this file, or one statement of it",
        "## What it does\nReports valid Python that memlint left out of its analysis, so no rule looked "
        "at it: a file larger than `max-file-size` (a guard against generated files, 2 MiB by default), "
        "a file whose syntax tree would take more memory per character than memlint allows (code far "
        "denser than hand-written code), a file memlint's parser (libcst) cannot read though Python can, "
        "or, where the rest of the file is analysed, one statement nested deeper than that parser "
        "handles (a chain of thousands of `and` operands).\n\n## Why is this bad?\nA file or statement "
        "that was not analysed may hide findings. It counts as a finding (exit 1, 0 with `--exit-zero`), "
        "not as memlint's failure (ML900, exit 2). Exclude a generated file (`extend-exclude`), raise "
        "`max-file-size`, or split the statement.",
    ),
}


def rule_catalogue() -> list[RuleInfo]:
    """Every rule, followed by the reserved codes ML000, ML900 and ML901."""
    rules = [
        RuleInfo(r.code, r.name, r.summary(), r.doc_sections().get("What it does", r.summary()), r.documentation(),
                 r.severity, rule_url(r.code))  # fmt: skip
        for r in registry.all_rules()
    ]
    return rules + reserved_catalogue()


def reserved_catalogue() -> list[RuleInfo]:
    """The reserved codes (registry.RESERVED), documented as rules are."""
    return [
        RuleInfo(code, name, _RESERVED_DOCS[code][0], _RESERVED_DOCS[code][0], _RESERVED_DOCS[code][1],
                 registry.reserved_severity(code), rule_url(code))  # fmt: skip
        for code, name in registry.RESERVED
    ]


def located_message(diagnostic: Diagnostic) -> str:
    """The message, prefixed with the notebook cell when the positions are relative to one."""
    if diagnostic.cell is not None:
        return f"cell {diagnostic.cell}: {diagnostic.message}"
    return diagnostic.message


def frame_line(diagnostic: Diagnostic, row: int) -> Optional[str]:
    for frame_row, text in diagnostic.frame:
        if frame_row == row:
            return text
    return None


def utf8_column(diagnostic: Diagnostic, row: int, column: int) -> int:
    """A 1-based character column as a 1-based UTF-8 byte column (reviewdog counts bytes).

    Uses the finding's code frame; a row outside it is assumed to be ASCII up to the column.
    """
    text = frame_line(diagnostic, row)
    if text is None:
        return column
    return len(text[: column - 1].encode("utf-8", "surrogatepass")) + 1
