"""ML100 unused-suppression: the codes of memlint's suppression comments that suppressed no finding.

It reads comments, not code: the rule's folder (rules/ml100_unused_suppression) documents it and
keeps it out of the screens; lint_text (memlint/pipeline/engine.py) calls `unused_suppressions`
with what the analysis suppressed, also for a file the screens cleared (no rule could report there,
so every suppression of an enabled rule is unused).

Only what memlint can judge is reported: a code of a rule that ran on the file (a rule turned off
for this run might need its suppression) or a memlint-looking code no rule has; never a bare
`# noqa` (other tools read it too) or another tool's code in a `# noqa` list.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Collection
from dataclasses import dataclass
from typing import Optional

from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Severity
from memlint.pipeline.suppressions import FILE_WIDE, Suppressions, listed_codes, split_codes
from memlint.pipeline.text import Positions

CODE = "ML100"
NAME = "unused-suppression"
_MEMLINT_CODE = re.compile(r"^ML[0-9]+$")  # a memlint code, or a misspelt one (ML01, ML0001)
_WORDS = re.compile(r"noqa|memlint:", re.IGNORECASE)


def may_have_directives(text: str) -> bool:
    """False for a text without a suppression comment to judge (the cheap test before tokenizing)."""
    return _WORDS.search(text) is not None


@dataclass(frozen=True)
class Directive:
    """One suppression comment with a list of codes, in character offsets of the text."""

    row: int
    start: int  # the directive's "#"
    end: int  # just after its last code (or "]")
    codes: tuple[tuple[str, int, int], ...]  # (CODE, start, end) of each code listed
    file_wide: bool
    comment_start: int  # the comment token holding it
    comment_end: int


def directives(text: str, lines: Positions) -> list[Directive]:
    """The suppression comments that list codes, from the comment tokens (never a string's text);
    `lines`: the text's line table."""
    if not may_have_directives(text):
        return []
    found: list[Directive] = []
    try:
        # newline="": rows split on \r, \n and \r\n, as Positions splits them.
        for token in tokenize.generate_tokens(io.StringIO(text, newline="").readline):
            if token.type != tokenize.COMMENT:
                continue
            base = lines.offset(token.start[0], token.start[1])
            for match, group, file_wide in listed_codes(token.string):
                if file_wide and text[lines.offset(token.start[0], 0) : base].strip():
                    continue  # `ignore-file` counts only as a comment on a line of its own (suppressions.py)
                codes, position = [], match.start(group)
                for code in split_codes(match.group(group)):
                    position = token.string.index(code, position)
                    codes.append((code.upper(), base + position, base + position + len(code)))
                    position += len(code)
                found.append(Directive(
                    token.start[0], base + match.start(), base + match.end(), tuple(codes), file_wide,
                    base, base + len(token.string),
                ))  # fmt: skip
    except (tokenize.TokenError, SyntaxError):  # the file does not tokenize: ML000 says why
        return []
    return found


def unused_suppressions(
    text: str, filename: str, suppressions: Suppressions, ran: Collection[str], known: Collection[str]
) -> list[Diagnostic]:
    """ML100 for each directive with codes that suppressed nothing. `ran`: the codes of the rules
    that ran on the file; `known`: every rule code memlint has."""
    lines = Positions(text)
    result = []
    for directive in directives(text, lines):
        unused, unknown = [], []
        for code, _, _ in directive.codes:
            if code == CODE:
                continue
            if code in ran:
                if (FILE_WIDE if directive.file_wide else directive.row, code) not in suppressions.used:
                    unused.append(code)
            elif code not in known and _MEMLINT_CODE.match(code):
                unknown.append(code)
        if not unused and not unknown:
            continue
        # `# noqa: ML100` on the line (or `ignore-file[ML100]`) suppresses this finding too.
        if suppressions.suppresses(CODE, directive.row):
            continue
        result.append(_diagnostic(text, filename, lines, directive, set(unused + unknown), unused, unknown))
    return result


def _diagnostic(
    text: str, filename: str, lines: Positions, directive: Directive, dropped: set[str], unused: list[str], unknown: list[str]
) -> Diagnostic:  # fmt: skip
    from memlint.rule import rule_url

    parts = []
    if unused:
        scope = "in this file" if directive.file_wide else "on this line"
        parts.append(f"{_listing(unused)} {'reports' if len(unused) == 1 else 'report'} nothing {scope}")
    if unknown:
        parts.append(f"{_listing(unknown)} {'is not a rule' if len(unknown) == 1 else 'are not rules'} of memlint")
    shown = text[directive.start : directive.end]
    message = f"unused suppression `{shown}`: " + "; ".join(parts)
    start, end = lines.location(directive.start), lines.location(directive.end)
    return Diagnostic(
        code=CODE, name=NAME, message=message, severity=Severity.INFO, filename=filename,
        location=start, end_location=end, fix=_removal(text, lines, directive, dropped),
        url=rule_url(CODE), frame=lines.frame(start.row, end.row),
    )  # fmt: skip


def _listing(codes: list[str]) -> str:
    return ", ".join(codes)


def _removal(text: str, lines: Positions, directive: Directive, dropped: set[str]) -> Optional[Fix]:
    """The edit that drops the unused codes: from the list when others stay, else the directive
    (and the blank space before it, or its whole line when it is alone there). None when text after
    the directive in the same comment would be left as code."""
    kept = [code for code, _, _ in directive.codes if code not in dropped]
    if kept:
        first, last = directive.codes[0][1], directive.codes[-1][2]
        separator = ", " if "," in text[first:last] else " "
        edit = _edit(lines, first, last, separator.join(kept))
        return Fix(f"Remove {_listing(sorted(dropped))} from the suppression", Applicability.SAFE, (edit,))
    if text[directive.end : directive.comment_end].strip():
        return None  # `# noqa: ML001 because ...`: removing the directive would leave "because ..." as code
    start = directive.start
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    row_start = lines.offset(directive.row, 0)
    end = directive.comment_end
    if start == row_start:  # the comment is alone on its line: the line goes
        following = lines.offset(directive.row + 1, 0) if directive.row < len(lines.starts) else len(text)
        end = following
    edit = _edit(lines, start, end, "")
    return Fix("Remove the unused suppression comment", Applicability.SAFE, (edit,))


def _edit(lines: Positions, start: int, end: int, content: str) -> Edit:
    return Edit(start, end, content, lines.location(start), lines.location(end))
