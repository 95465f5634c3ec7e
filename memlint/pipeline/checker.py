"""The full analysis of one source text: parse with libcst once, one traversal for every rule, then
positions, fixes and suppressions for what was reported.  Reached only for files the prescreen
could not clear (memlint.pipeline.engine.lint_text)."""

from __future__ import annotations

import ast
import functools
import os
from typing import TYPE_CHECKING, Optional, Sequence

import libcst as cst
from libcst.metadata import CodeRange

from memlint.analysis.context import Context, GradMode
from memlint.config import Settings
from memlint.diagnostics import DeferredFix, Diagnostic, Edit, Fix, Location, Related
from memlint.pipeline import registry
from memlint.pipeline.depth import LIMIT, depth_error, on_deep_stack, token_levels, too_complex
from memlint.pipeline.masking import overlaps
from memlint.pipeline.positions import (
    PrintedStatements, SourceMap, TextChanged, code_in_block, node_positions, printed_code,
)
from memlint.pipeline.project import FileView
from memlint.pipeline.reserved import (
    not_analysed, out_of_resources, reserved_diagnostic, syntax_error, too_complex_diagnostic,
)
from memlint.pipeline.source import ast_or_none
from memlint.pipeline.suppressions import Suppressions
from memlint.pipeline.text import Positions, minimal_edit
from memlint.pipeline.traversal import Traversal
from memlint.pipeline.tree import parse_module
from memlint.rule import NodeFix, Report, rule_url

if TYPE_CHECKING:
    from memlint.pipeline.incremental import IncrementalParser


def check_text(
    text: str, filename: str, settings: Settings, *, depth_checked: bool = False, project: Optional[FileView] = None,
    suppressions: Optional[Suppressions] = None, statement_rows: Optional[list[int]] = None,
    parser: Optional[IncrementalParser] = None, syntax_tree: Optional[ast.Module] = None, defer_fixes: bool = False,
    source_text: Optional[str] = None, masked: Sequence[tuple[int, int]] = (), codes: Optional[frozenset[str]] = None,
) -> list[Diagnostic]:  # fmt: skip
    """All findings of the rules that run on `filename`, sorted; no fixes are applied.
    `depth_checked`: CPython has compiled the text and `depth.too_complex` let it through.
    `project`: what the project pass knows about this file (memlint/pipeline/project.py); none by default.
    `suppressions`: the text's suppression comments, which record the findings they suppress.
    `statement_rows`: where each top-level statement starts, when the caller has CPython's AST
    (source.statement_rows), to place findings without printing the whole file.
    `parser`: parses the text re-using the previous text's statements (incremental.py), with
    `syntax_tree`, CPython's AST of the text (the whole text is parsed without it).
    `defer_fixes`: fixes are computed when first asked for (Diagnostic.deferred_fix).
    `source_text`, `masked`: `text` is the source text with these [start, end) regions blanked
    (masking.py): the findings' code frames come from the source text, and a fix reaching into a
    masked region is not offered.
    `codes`: only these of the rules that run on `filename` (the prescreen's answer: the others cannot
    report here, memlint.prescreen.screened_codes); all of them by default."""
    if project is not None and project.other_framework:
        return []  # another framework's code (engine._findings exits before the parse already)
    rule_classes = settings.rules_for(filename)
    if codes is not None:
        rule_classes = [rule for rule in rule_classes if rule.code in codes]
    if not rule_classes:
        return []
    if not depth_checked:
        refused = _refusal(text, filename)  # libcst's native parser would overflow the C stack
        if refused is not None:
            return [refused]
    # libcst and the analysis recurse per level of nesting: run them on a stack sized for the limits.
    suppressions = suppressions or Suppressions(text, ignored=settings.ignore_noqa)
    return on_deep_stack(
        _check, text, filename, rule_classes, settings, project, suppressions, statement_rows, parser, syntax_tree,
        defer_fixes, source_text, masked,
    )  # fmt: skip


def _refusal(text: str, filename: str) -> Optional[Diagnostic]:
    """The finding for a text libcst must not see (depth.py), or None."""
    tree = ast_or_none(text, filename)
    if tree is not None:
        complexity = too_complex(tree, text)
        return None if complexity is None else too_complex_diagnostic(complexity, filename)
    too_deep = depth_error(text)
    if too_deep is not None:
        message, row, column = too_deep
        return reserved_diagnostic(registry.SYNTAX_ERROR, f"SyntaxError: {message}", filename, row, column)
    levels = token_levels(text)
    if levels is None or levels > LIMIT:  # Python cannot compile it either: its message, without libcst
        return syntax_error(text, filename)
    return None


def _check(
    text: str, filename: str, rule_classes: list, settings: Settings, project: Optional[FileView], suppressions: Suppressions,
    statement_rows: Optional[list[int]] = None, parser: Optional[IncrementalParser] = None,
    syntax_tree: Optional[ast.Module] = None, defer_fixes: bool = False, source_text: Optional[str] = None,
    masked: Sequence[tuple[int, int]] = (),
) -> list[Diagnostic]:  # fmt: skip
    try:
        module = parser.parse(text, syntax_tree) if parser is not None else parse_module(text)
    except cst.ParserSyntaxError as error:
        return [syntax_error(text, filename, error)]
    except (RecursionError, MemoryError) as error:
        return [out_of_resources(filename, f"memlint's parser (libcst) ran out of {_resource(error)}")]
    reports: list[Report] = []
    ctx = Context(module, project, text)
    rules = [rule_class(ctx, reports, settings.options) for rule_class in rule_classes]
    traversal = Traversal(ctx, rules)
    try:
        traversal.walk(module)
    except (RecursionError, MemoryError) as error:
        return [out_of_resources(filename, f"the analysis ran out of {_resource(error)}")]
    except Exception as error:  # the shared analysis itself failed: nothing reported is trustworthy
        return [_internal_error("memlint.analysis", error, filename)]
    facts = ctx.facts()
    for rule in traversal.rules:
        try:
            rule.finish(facts)
        except Exception as error:
            traversal.failures.append((rule, error, module))
    reports = [r for r in reports if _holds_in_file(r, facts, traversal.failures)]
    try:
        printed = parser.printed if parser is not None else None
        return _diagnostics(
            module, text, filename, reports, traversal.failures, suppressions, statement_rows, printed, defer_fixes,
            source_text, masked,
        )  # fmt: skip
    except (RecursionError, MemoryError) as error:
        return [out_of_resources(filename, f"placing its findings ran out of {_resource(error)}")]
    except TextChanged as error:  # positions.SourceMap: libcst printed the file back with other code
        return [not_analysed(filename, f"memlint's parser (libcst) does not keep this file's text: {error}")]


def _resource(error: BaseException) -> str:
    return "memory" if isinstance(error, MemoryError) else "stack (code nested too deeply)"


def _holds_in_file(report: Report, facts, failures) -> bool:
    if any(report.rule is rule for rule, _, _ in failures):
        return False
    chain = report.grad_sensitive_chain
    if chain is not None and any(key in facts.no_grad_functions for key in chain):
        return False
    return not (report.grad_calls and all(_runs_grad_off(call, facts) for call in report.grad_calls))


def _runs_grad_off(call, facts) -> bool:
    """Does the file's call run without gradient tracking: the grad mode the traversal saw at it
    (a decorator, a `with`, a `torch.set_grad_enabled(False)` statement), or a caller that only
    ever runs so?  A call the traversal did not record is not known to."""
    for sites in facts.call_sites.values():
        for site in sites:
            if site.node is call:
                return site.grad is GradMode.DISABLED or any(key in facts.no_grad_functions for key in site.callers)
    return False


def _internal_error(origin: str, error: BaseException, filename: str, row: int = 1, column: int = 1) -> Diagnostic:
    message = f"{origin} raised {type(error).__name__}: {error}; other rules ran normally"
    return reserved_diagnostic(registry.INTERNAL_ERROR, message, filename, row, column)


def _diagnostics(
    module: cst.Module, text: str, filename: str, reports: list[Report], failures: list, suppressions: Suppressions,
    statement_rows: Optional[list[int]] = None, printed: Optional[PrintedStatements] = None, defer_fixes: bool = False,
    source_text: Optional[str] = None, masked: Sequence[tuple[int, int]] = (),
) -> list[Diagnostic]:
    if not reports and not failures:
        return []
    wanted = [node for _, _, node in failures] + [report.node for report in reports]
    wanted += [old for report in reports if report.fix for old, _ in report.fix.replacements]
    wanted += [node for report in reports for node, _ in report.related]
    places = _Places(module, text, masked)
    # The rows of CPython's AST are rows of the text: of the printed code too unless libcst changed it.
    if places.code is not text:  # the rows of CPython's AST and earlier printed statements do not apply
        statement_rows = printed = None
    positions = node_positions(module, places.code, wanted, statement_rows, printed)
    lines = Positions(source_text) if source_text is not None and source_text is not text else places.lines
    result: list[Diagnostic] = []
    for rule, error, node in failures:
        where = positions.get(node)
        row, column = places.start(where) if where else (1, 1)
        result.append(_internal_error(f"rule {rule.code} ({rule.name})", error, filename, row, column))
    seen: set[tuple] = set()
    for report in reports:
        rule = report.rule
        where = positions[report.node]
        start, end = Location(*places.start(where)), Location(*places.end(where))
        key = (rule.code, start, end, report.message)
        if key in seen:
            continue
        seen.add(key)
        if suppressions.suppresses(rule.code, start.row):
            continue
        fix = deferred = None
        if report.fix and defer_fixes:
            materialize = functools.partial(_fix_later, places, report.fix, module, positions)
            deferred = DeferredFix(report.fix.message, report.fix.applicability, materialize)
        elif report.fix:
            fix = _fix_in_text(places, report.fix, module, positions)
        frame = lines.frame(start.row, end.row)
        result.append(
            Diagnostic(
                code=rule.code,
                name=rule.name,
                message=report.message,
                severity=report.severity or rule.severity,
                filename=filename,
                location=start,
                end_location=end,
                fix=fix,
                url=rule_url(rule.code),
                frame=frame,
                related=tuple(
                    Related(what, Location(*places.start(positions[node])), Location(*places.end(positions[node])))
                    for node, what in report.related
                    if node in positions
                ),
                deferred_fix=deferred,
            )
        )
    result.sort(key=Diagnostic.sort_key)
    return result


class _Places:
    """Where findings and fixes computed on the code libcst prints land in the source text: the
    same offsets, unless libcst dropped some whitespace of it (positions.SourceMap)."""

    def __init__(self, module: cst.Module, text: str, masked: Sequence[tuple[int, int]] = ()) -> None:
        self.masked = masked  # regions of `text` blanked before the parse (masking.py)
        self.code = printed_code(module, text)
        self.code_lines = Positions(self.code)
        self.lines = self.code_lines if self.code is text else Positions(text)
        self.map = None if self.code == text else SourceMap(self.code, text)  # or TextChanged

    def start(self, where: CodeRange) -> tuple[int, int]:
        return self._location(self.code_lines.offset(where.start.line, where.start.column), end=False)

    def end(self, where: CodeRange) -> tuple[int, int]:
        return self._location(self.code_lines.offset(where.end.line, where.end.column), end=True)

    def _location(self, offset: int, *, end: bool) -> tuple[int, int]:
        if self.map is not None:
            offset = self.map.end_offset(offset) if end else self.map.offset(offset)
        location = self.lines.location(offset)
        return location.row, location.column

    def fix(self, fix: Optional[Fix]) -> Optional[Fix]:
        """The fix in text offsets; None when an edit would rewrite whitespace libcst changed (the
        finding is still reported, without a fix that would lose a form feed or a `\\`), and None when
        an edit reaches into a masked region (it would write the blanks over the source)."""
        if fix is not None and self.masked and any(overlaps(self.masked, e.start, e.end) for e in fix.edits):
            return None
        if fix is None or self.map is None:
            return fix
        edits = []
        for edit in fix.edits:
            span = self.map.edit_span(edit.start, edit.end)
            if span is None:
                return None
            start, end = span
            edits.append(Edit(start, end, edit.content, self.lines.location(start), self.lines.location(end)))
        return Fix(fix.message, fix.applicability, tuple(edits))


def _fix_in_text(places: _Places, node_fix: NodeFix, module: cst.Module, positions) -> Optional[Fix]:
    """The report's fix as edits of the source text."""
    return places.fix(_materialize(node_fix, module, places.code, places.code_lines, positions))


def _fix_later(places: _Places, node_fix: NodeFix, module: cst.Module, positions) -> Optional[Fix]:
    """_fix_in_text for a deferred fix, asked for after the analysis (in any thread): on a stack deep
    enough for the tree, and no fix rather than an error when printing it fails."""
    try:
        return on_deep_stack(_fix_in_text, places, node_fix, module, positions)
    except (RecursionError, MemoryError):
        return None


def _materialize(
    node_fix: NodeFix, module: cst.Module, text: str, lines: Positions, positions=None
) -> Optional[Fix]:
    """Turn node replacements into minimal text edits by diffing the regenerated module."""
    edits = []
    printed: Optional[str] = None
    for old, new in node_fix.replacements:
        edit = _in_place_edit(old, new, module, text, lines, positions)
        if edit is None:
            printed = printed if printed is not None else module.code
            edit = _whole_module_edit(text, printed, module.deep_replace(old, new).code, lines)
        if edit is not None:
            edits.append(edit)
    if not edits:
        return None
    edits.sort(key=lambda e: e.start)
    return Fix(node_fix.message, node_fix.applicability, tuple(edits))


def _whole_module_edit(text: str, printed: str, new_text: str, lines: Positions) -> Optional[Edit]:
    """The edit that turns the module as libcst prints it (`printed`) into `new_text`, as an edit of
    `text`.  They are the same text, except that libcst may print the lines after the last statement
    differently (positions.printed_code): an edit that reaches them is not made (None), so that a
    fix never rewrites them."""
    if printed == text:
        return minimal_edit(text, new_text, lines)
    edit = minimal_edit(printed, new_text, Positions(printed))
    if edit is None or edit.end > len(os.path.commonprefix([printed, text])):
        return None
    return Edit(edit.start, edit.end, edit.content, lines.location(edit.start), lines.location(edit.end))


def _in_place_edit(old, new, module: cst.Module, text: str, lines: Positions, positions) -> Optional[Edit]:
    """The edit for one replacement without regenerating the whole module (which makes a file with
    many fixes quadratic: 177 ML002 fixes in a 1,000-line file took 20 s), when that gives the same
    text: the old node, printed with the indentation of its line, is exactly what the source holds
    there, and the new one is printed with that same indentation.  None means: use the whole-module
    way."""
    if positions is None or not isinstance(new, cst.CSTNode):  # removals and flattening: whole module
        return None
    where = positions.get(old)
    if where is None:
        return None
    start = lines.offset(where.start.line, where.start.column)
    end = lines.offset(where.end.line, where.end.column)
    line_start = lines.offset(where.start.line, 0)
    indent = text[line_start:start]
    if indent.strip(" \t"):  # the node does not start its line: the indentation is not known here
        indent = indent[: len(indent) - len(indent.lstrip(" \t"))]
        if isinstance(old, cst.BaseStatement):
            return None
    old_code, new_code = code_in_block(old, module, indent), code_in_block(new, module, indent)
    if old_code is None or new_code is None or old_code == new_code:
        return None
    # A new node whose text depends on the indentation (a block), replacing one whose text does not,
    # would take the guessed indentation unchecked: only a statement's own line tells it for sure.
    # (Indentation is printed only at the start of a statement or of a line: a one-line expression
    # cannot depend on it, and most fixes are one.)
    may_depend = isinstance(new, cst.BaseStatement) or "\n" in new_code or "\r" in new_code
    if may_depend and not isinstance(old, cst.BaseStatement) and new_code != code_in_block(new, module, indent + "\x00"):
        if old_code == code_in_block(old, module, indent + "\x00"):
            return None
    # The printed old node ends at or after the node's end and starts at or before its start (its
    # leading lines and indentation come first): find it there, and only once.
    low = max(0, end - len(old_code))
    found = text.find(old_code, low, start + len(old_code))
    if found < 0 or text.find(old_code, found + 1, start + len(old_code)) >= 0:
        return None
    begin, finish = found, found + len(old_code)
    prefix = len(os.path.commonprefix([old_code, new_code]))
    limit = min(len(old_code), len(new_code)) - prefix
    suffix = min(len(os.path.commonprefix([old_code[::-1], new_code[::-1]])), limit)
    first, last = begin + prefix, finish - suffix
    return Edit(first, last, new_code[prefix : len(new_code) - suffix], lines.location(first), lines.location(last))
