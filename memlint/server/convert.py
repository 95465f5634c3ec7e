"""memlint's findings and fixes as LSP values (lsprotocol types). LSP positions are 0-based lines and
code units of the encoding the client and the server agreed on at initialize (UTF-16 unless the client
offers UTF-8 or UTF-32 first; pygls chooses, and reads the client's changes with it); memlint's are
1-based rows and columns counted in characters."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from lsprotocol import types

from memlint.diagnostics import Diagnostic, Edit, Location, Severity

SOURCE = "memlint"
FIX_ALL_KIND = "source.fixAll.memlint"
REPLACEMENT = "\ufffd"
# A str decoded from JSON holds a surrogate only when the editor sent a lone one (a pair decodes to one
# character): such text cannot be encoded, parsed or written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")


def editor_text(text: str) -> str:
    """The editor's text with each lone UTF-16 surrogate as U+FFFD: one UTF-16 code unit for another,
    so every position stays where it was, and the rest of the text can be linted."""
    return _SURROGATE.sub(REPLACEMENT, text)

_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def units(text: str, encoding: str) -> int:
    """The length of `text` in code units of a position encoding ("utf-8", "utf-16", "utf-32")."""
    if encoding == "utf-8":
        return len(text.encode("utf-8", "surrogatepass"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class Lines(list):
    """A text's lines, with the position encoding their LSP positions are counted in."""

    def __init__(self, text: str, encoding: str = "utf-16") -> None:
        super().__init__(text.splitlines())
        self.encoding = encoding


def position(lines: Lines, location: Location) -> types.Position:
    row = location.row - 1
    text = lines[row] if 0 <= row < len(lines) else ""
    prefix = text[: location.column - 1]
    return types.Position(line=max(row, 0), character=units(prefix, lines.encoding))


def column_index(line: str, character: int, encoding: str) -> int:
    """The index in `line` of the character at an LSP position's `character`."""
    counted = 0
    for index, char in enumerate(line):
        if counted >= character:
            return index
        counted += units(char, encoding)
    return len(line)


def to_range(lines: Lines, start: Location, end: Location) -> types.Range:
    return types.Range(start=position(lines, start), end=position(lines, end))


def diagnostic(lines: Lines, finding: Diagnostic, uri: Optional[str] = None) -> types.Diagnostic:
    """`uri`: the document's, for the finding's related places in the same document (or cell)."""
    description = types.CodeDescription(href=finding.url) if finding.url else None
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=to_range(lines, place.location, place.end_location)), message=place.message
        )
        for place in finding.related
        if uri is not None and place.cell == finding.cell
    ]
    return types.Diagnostic(
        range=to_range(lines, finding.location, finding.end_location),
        message=finding.message,
        severity=_SEVERITIES.get(finding.severity, types.DiagnosticSeverity.Warning),
        code=finding.code,
        code_description=description,
        source=SOURCE,
        related_information=related or None,
    )


def rule_page(code: str, directory: Path) -> Optional[str]:
    """The URI of the rule's documentation: its configured URL ($MEMLINT_DOCS_URL), else a markdown
    page written from the rule's own text under `directory` (memlint ships no web pages)."""
    from memlint.pipeline import registry
    from memlint.rule import rule_url

    rule = registry.find_rule(code)
    if rule is None:
        return None
    url = rule_url(rule.code)
    if url:
        return url
    from memlint.commands.ruledocs import rule_text

    directory.mkdir(parents=True, exist_ok=True)
    page = directory / f"{rule.code}.md"
    text = rule_text(rule)
    if not page.is_file() or page.read_text(encoding="utf-8") != text:
        page.write_text(text, encoding="utf-8")
    return page.as_uri()


def text_edits(lines: Lines, edits: tuple[Edit, ...]) -> list[types.TextEdit]:
    return [types.TextEdit(range=to_range(lines, e.location, e.end_location), new_text=e.content) for e in edits]


def whole_document(text: str, encoding: str) -> types.Range:
    """The range of every character of `text` (for replacing all of it)."""
    last_break = max(text.rfind("\n"), text.rfind("\r"))
    last_line = text[last_break + 1 :]
    end = types.Position(line=len(text.splitlines(keepends=True)) - (0 if not last_line else 1) if text else 0,
                         character=units(last_line, encoding))  # fmt: skip
    return types.Range(start=types.Position(line=0, character=0), end=end)


def noqa_edit(lines: Lines, row: int, code: str) -> Optional[types.TextEdit]:
    """`# noqa: CODE` at the end of line `row` (1-based), merged into a noqa comment already there."""
    from memlint.integrations.noqa import with_noqa

    if not 1 <= row <= len(lines):
        return None
    old = lines[row - 1]
    new = with_noqa(old, [code])
    if new == old:
        return None
    start = types.Position(line=row - 1, character=0)
    end = types.Position(line=row - 1, character=units(old, lines.encoding))
    return types.TextEdit(range=types.Range(start=start, end=end), new_text=new)
