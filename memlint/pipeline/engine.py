"""Linting one source text: the cheap filters that decide whether a file needs the full analysis
(it never mentions torch; the prescreen finds no rule that could report), then the full analysis in
memlint.pipeline.checker, which imports libcst."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Optional

from memlint.config import Settings
from memlint.diagnostics import Diagnostic
from memlint.pipeline.masking import plan as parse_plan
from memlint.pipeline.python_refusals import python_refusal
from memlint.pipeline.reserved import not_analysed, partly_analysed, python_syntax_error, too_large
from memlint.pipeline.source import statement_rows
from memlint.pipeline.suppressions import Suppressions
from memlint.pipeline.unused_suppressions import CODE as UNUSED_SUPPRESSION  # judged here, after the analysis
from memlint.pipeline.unused_suppressions import unused_suppressions
from memlint.prescreen import Source, following_other_files_models, following_other_files_steps, mentioned_codes, may_use_torch, screened_codes

if TYPE_CHECKING:
    from memlint.pipeline.incremental import IncrementalParser
    from memlint.pipeline.project import FileView


def lint_text(
    text: str, filename: str, settings: Settings, project: Optional[FileView] = None, *, screened: bool = False,
    source: Optional[Source] = None, parser: Optional[IncrementalParser] = None, defer_fixes: bool = False,
    rules: Optional[frozenset[str]] = None,
) -> list[Diagnostic]:  # fmt: skip
    """All findings for one Python source text, sorted; no fixes are applied.

    `project`: what the project pass knows about this file (memlint/pipeline/project.py); without it the
    file is a project of its own (its own summary, resolved alone).  `screened`: the caller has
    compiled the text and its screens let it through already (memlint/pipeline/prepare.py), so neither is
    done again.  `source`: the prescreen's Source of `text` when the caller built one already (the
    language server summarises the text for the project facts first).  `parser`: the document's
    parser that re-uses the statements an edit left alone (the language server's).  `defer_fixes`:
    findings carry their fixes as Diagnostic.deferred_fix, computed when asked for.  `rules`, with
    `screened`: the rules whose screens let the text through in phase one (the analysis runs only
    those); without it, the rules whose trigger words the text mentions."""
    codes = settings.codes_for(filename)
    suppressions = Suppressions(text, ignored=settings.ignore_noqa)
    found = _findings(text, filename, settings, codes, project, screened, suppressions, source, parser, defer_fixes, rules)
    if settings.unfixable:  # `unfixable`: such findings are reported without their fix
        found = [
            replace(d, fix=None, deferred_fix=None) if d.code in settings.unfixable and (d.fix or d.deferred_fix) else d
            for d in found
        ]
    if UNUSED_SUPPRESSION in codes and not settings.ignore_noqa:  # after the analysis: it needs what the comments suppressed
        from memlint.pipeline.registry import rule_entries

        known = {entry.code for entry in rule_entries()}
        unused = unused_suppressions(text, filename, suppressions, codes, known)
        if unused:
            found = sorted([*found, *unused], key=Diagnostic.sort_key)
    return found


def _findings(
    text: str, filename: str, settings: Settings, codes: frozenset[str], project: Optional[FileView], screened: bool,
    suppressions: Suppressions, source: Optional[Source] = None, parser: Optional[IncrementalParser] = None,
    defer_fixes: bool = False, rules: Optional[frozenset[str]] = None,
) -> list[Diagnostic]:  # fmt: skip
    if project is not None and project.other_framework:
        return []  # another framework's code (paddle, MXNet Gluon...): no PyTorch rule applies
    if not may_use_torch(text):
        # a file that cannot use torch cannot have a finding, unless it runs another file's training
        # step (SPADE's train.py calls `trainer.run_generator_one_step(data)` of Pix2PixTrainer, whose
        # file backpropagates and steps): then only the rules that ask about that step can report
        # (a TensorFlow script beside a torch package is no torch code for the other rules); or it
        # is a module the project's torch code imports, given torch's objects (protonets' Engine);
        # likewise the rules that ask what another file's models do when this file runs them
        # (protonets' `evaluate` calls `model.eval()` then `model.loss(sample)` without naming torch)
        if project is None or not (project.steps_elsewhere or project.torch_importers or project.runs_other_files_models):
            return []
        codes = (following_other_files_steps(codes) if project.steps_elsewhere or project.torch_importers else frozenset()) | (
            following_other_files_models(codes) if project.runs_other_files_models else frozenset()
        )
    codes = codes - {UNUSED_SUPPRESSION}  # it reads comments after the analysis, never needs it
    if not codes:
        return []
    oversized = too_large(text, settings)
    if oversized is not None:  # before CPython's AST too, which is large as well
        return [not_analysed(filename, oversized)]
    rows = syntax_tree = None
    parsed_text, masked, left_out = text, (), []
    # The rules the analysis runs: those whose screens hold (a rule whose screen says no cannot report).
    needed: Optional[frozenset[str]] = None
    if screened:
        needed = (rules & codes) if rules is not None else mentioned_codes(source or Source(text), codes)
    else:
        source = source or Source(text)
        if not filename.endswith(".ipynb"):
            refused = python_refusal(source)  # libcst may read it, but it cannot run
            if refused is not None:
                return [python_syntax_error(refused, filename)]
        compiled = source.tree is not None  # else the full analysis reports the syntax error
        if compiled and project is None:
            from memlint.analysis.summaries import summarize
            from memlint.pipeline.project import single_file_view

            try:
                summary = summarize(source)
            except (RecursionError, MemoryError):  # as in prepare.py: the project knows less
                summary = None
            project = single_file_view(summary, filename)
            if project.other_framework:
                return []
        source.project = project  # the screens follow the project's facts
        if compiled:
            needed = screened_codes(source, codes, settings.options)
            if not needed:
                return []
        tree = source.tree
        if compiled:  # what libcst cannot take (too deep, too dense) is left out here (masking.py)
            planned = parse_plan(source.tree, text)
            if planned.refused is not None:
                return [not_analysed(filename, *planned.refused)]
            parsed_text, masked, tree = planned.text, planned.masked, planned.tree
            left_out = [partly_analysed(filename, *where) for where in planned.left_out]
            del planned
        rows = statement_rows(tree) if compiled else None
        syntax_tree = tree if parser is not None else None  # the parser re-uses what an edit left alone
        del source, tree  # its AST is not needed any more
    from memlint.pipeline.checker import check_text

    # depth_checked: CPython's AST has passed the depth guards (here, or in the runner's phase one).
    found = check_text(
        parsed_text, filename, settings, depth_checked=screened or compiled, project=project,
        suppressions=suppressions, statement_rows=rows, parser=parser, syntax_tree=syntax_tree,
        defer_fixes=defer_fixes, source_text=text, masked=masked, codes=needed,
    )  # fmt: skip
    return sorted([*found, *left_out], key=Diagnostic.sort_key) if left_out else found
