"""`memlint review --base REF [PATHS]`: findings on the lines a change added or modified, as a GitHub
pull-request review payload (comments with ```suggestion blocks built from the fixes) or markdown.

The command reads files and runs git; it never imports or executes the code under review (git runs
without external diff drivers, textconv or clean filters, hooks, fsmonitor or any transport, so a
partial clone never fetches: see memlint/integrations/gitdiff.py), diffs only the files it lints, and
reads only regular files inside the repository, never through a symlink.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional, Sequence

import click

from memlint.config import ConfigError, Selection
from memlint.diagnostics import Diagnostic, Edit
from memlint.integrations.gitdiff import ChangedLines, GitError, changed_lines, regular_file_in, text_at
from memlint.pipeline.notebooks import is_notebook
from memlint.pipeline.runner import display_name
from memlint.pipeline.source import UndecodableSource, decode
from memlint.pipeline.text import apply_edits
from memlint.report import FAIL_LEVELS, fails, is_applicable
from memlint.run import Run

REVIEWABLE_SUFFIXES = (".py", ".ipynb")


@dataclass
class Comment:
    diagnostic: Diagnostic
    path: str  # relative to the repository root, as GitHub names files
    start_line: int
    line: int
    suggestion: Optional[str]  # replacement text for lines start_line..line
    note: str = ""  # why there is no suggestion, when there is a fix

    def to_github(self) -> dict:
        comment = {"path": self.path, "line": self.line, "side": "RIGHT", "body": comment_body(self)}
        if self.start_line != self.line:
            comment.update(start_line=self.start_line, start_side="RIGHT")
        return comment


@dataclass
class Review:
    base: str
    comments: list[Comment]
    unplaced: list[tuple[str, Diagnostic]]  # findings GitHub cannot anchor on the diff (notebook cells)


def _fence(text: str) -> str:
    """A code fence longer than any run of backticks in the text."""
    longest, run_length = 0, 0
    for char in text:
        run_length = run_length + 1 if char == "`" else 0
        longest = max(longest, run_length)
    return "`" * max(3, longest + 1)


def comment_body(comment: Comment) -> str:
    d = comment.diagnostic
    parts = [f"**{d.code}** `{d.name}`: {d.message}"]
    if d.url:
        parts.append(f"See [{d.code}]({d.url}) for why this costs memory and when it is safe to change.")
    if comment.suggestion is not None and d.fix is not None:
        kind = "" if d.fix.is_safe else " (unsafe: it may change behaviour, see the rule's Fix safety section)"
        fence = _fence(comment.suggestion)
        parts.append(f"Suggested fix{kind}: {d.fix.message}\n\n{fence}suggestion\n{comment.suggestion}\n{fence}")
    elif comment.note:
        parts.append(comment.note)
    return "\n\n".join(parts)


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(text):
        if char == "\n":
            starts.append(index + 1)
    return starts


def _suggestion(text: str, d: Diagnostic, first: int, last: int) -> Optional[str]:
    """Lines first..last of `text` with the fix applied, or None if the fix reaches outside them."""
    starts = _line_starts(text)
    if last > len(starts):
        return None
    begin = starts[first - 1]
    end = starts[last] - 1 if last < len(starts) else len(text)
    if any(e.start < begin or e.end > end for e in d.fix.edits):
        return None
    replaced = apply_edits(text[begin:end], [_shifted(e, begin) for e in d.fix.edits])
    return replaced.replace("\r\n", "\n").rstrip("\r")


def _shifted(edit: Edit, offset: int) -> Edit:
    return replace(edit, start=edit.start - offset, end=edit.end - offset)


def build_comments(diagnostics: Sequence[Diagnostic], path: str, text: str, changes: ChangedLines, unsafe: bool) -> list[Comment]:
    comments: list[Comment] = []
    suggested: list[tuple[int, int]] = []  # line ranges already carrying a suggestion in this file
    for d in diagnostics:
        first, last = d.location.row, d.end_location.row
        suggestion, note = None, ""
        # `check --fix` applies only safe fixes: an unsafe one needs --unsafe-fixes as well.
        command = "`memlint check --fix`" if d.fix is None or d.fix.is_safe else "`memlint check --fix --unsafe-fixes`"
        if d.fix is not None and not is_applicable(d, unsafe):
            note = f"An unsafe fix is available: {command} applies it."
        elif d.fix is not None:
            fix_first = min(first, *(e.location.row for e in d.fix.edits))
            fix_last = max(last, *(e.end_location.row for e in d.fix.edits))
            if not all(changes.commentable(path, row) for row in range(fix_first, fix_last + 1)):
                note = f"The fix reaches lines outside this change: run {command} to apply it."
            elif any(fix_first <= b and a <= fix_last for a, b in suggested):
                note = f"This fix overlaps another suggestion: apply that one, then run {command}."
            else:
                suggestion = _suggestion(text, d, fix_first, fix_last)
                if suggestion is not None:
                    first, last = fix_first, fix_last
                    suggested.append((first, last))
        if suggestion is None and not all(changes.commentable(path, row) for row in range(first, last + 1)):
            # Anchor on the first changed line of the finding: GitHub rejects lines outside the diff.
            first = last = next(row for row in range(first, last + 1) if changes.changed(path, row, row))
        comments.append(Comment(d, path, first, last, suggestion, note))
    return comments


def _code_sources(text: Optional[str]) -> Optional[list[str]]:
    try:
        cells = json.loads(text)["cells"] if text is not None else None
        return [("".join(c["source"]) if isinstance(c["source"], list) else c["source"]) for c in cells]
    except (ValueError, KeyError, TypeError):
        return None


def changed_cells(file: Path, base_text: Optional[str]) -> set[int]:
    """1-based indices of the notebook's cells whose source does not appear in the base version."""
    try:
        current = _code_sources(decode(file.read_bytes()).text) or []
    except (OSError, UndecodableSource):
        return set()
    before = set(_code_sources(base_text) or ())
    return {index for index, source in enumerate(current, start=1) if source not in before}


def collect(base: str, run: Run, cwd: Path) -> Review:
    """The review of the run's paths: the findings of the files changed since `base`, each with the
    settings of its closest configuration file, on the lines the change touched."""
    changes = changed_lines(base, run.paths, cwd, suffixes=REVIEWABLE_SUFFIXES)  # only what is linted is diffed
    files: dict[str, tuple[Path, str]] = {}  # display name -> (file, repository path)
    for repo_path in sorted(changes.lines):
        file = changes.root / repo_path
        reviewable = repo_path.endswith(REVIEWABLE_SUFFIXES) and regular_file_in(changes.root, repo_path)
        if reviewable and not run.settings_for(file).is_excluded(file):
            files[display_name(file)] = (file, repo_path)
    results = run.lint([file for file, _ in files.values()], jobs=1)
    comments: list[Comment] = []
    unplaced: list[tuple[str, Diagnostic]] = []
    for result in results:
        file, repo_path = files[result.filename]
        if is_notebook(repo_path):
            # Cell-relative positions cannot be placed on the notebook's JSON diff: list the findings
            # of the cells whose source is new since the base instead.
            cells = changed_cells(file, text_at(base, repo_path, changes.root))
            unplaced.extend((repo_path, d) for d in sorted(result.diagnostics, key=Diagnostic.sort_key) if d.cell in cells)
            continue
        on_changed = [
            d for d in sorted(result.diagnostics, key=Diagnostic.sort_key)
            if changes.changed(repo_path, d.location.row, d.end_location.row)
        ]  # fmt: skip
        if not on_changed:
            continue
        try:
            text = decode(file.read_bytes()).text
        except (OSError, UndecodableSource):
            continue
        unsafe = run.unsafe_fixes_for(result.filename)
        comments.extend(build_comments(on_changed, repo_path, text, changes, unsafe))
    return Review(base, comments, unplaced)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary(review: Review) -> str:
    total = len(review.comments) + len(review.unplaced)
    if not total:
        return f"memlint: no GPU-memory findings on the lines changed since `{review.base}`."
    suggested = sum(c.suggestion is not None for c in review.comments)
    text = f"memlint found {_plural(total, 'finding')} on the lines changed since `{review.base}`"
    text += f" ({suggested} with a suggested fix)." if suggested else "."
    if review.unplaced:
        text += "\n\nIn notebooks (positions are within the cell):\n" + "\n".join(
            f"- `{path}` cell {d.cell}, line {d.location.row}: **{d.code}** {d.message}" for path, d in review.unplaced
        )
    return text


def github_payload(review: Review) -> dict:
    return {"body": summary(review), "event": "COMMENT", "comments": [c.to_github() for c in review.comments]}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(review: Review) -> str:
    lines = ["## memlint review", "", summary(review)]
    if review.comments:
        lines += ["", "| File | Line | Rule | Finding | Fix |", "| --- | --- | --- | --- | --- |"]
        for c in review.comments:
            d = c.diagnostic
            fix = "suggested" if c.suggestion is not None else ("available" if d.fix is not None else "")
            where = f"{c.start_line}-{c.line}" if c.start_line != c.line else str(c.line)
            rule = f"[{d.code}]({d.url})" if d.url else d.code  # a link only where the rule's page is hosted
            lines.append(f"| `{c.path}` | {where} | {rule} | {_cell(d.message)} | {fix} |")
    return "\n".join(lines) + "\n"


@click.command("review")
@click.option("--base", required=True, help="Git ref to compare with (the pull request's base).")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--output-format", type=click.Choice(["github-review", "markdown"]), default="github-review", show_default=True)
@click.option("--select", multiple=True, help="Rule codes or prefixes to enable (replaces the default set).")
@click.option("--extend-select", multiple=True, help="Rule codes or prefixes to enable on top of the selection.")
@click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable.")
@click.option("--unsafe-fixes/--no-unsafe-fixes", default=None, help="Also suggest unsafe fixes.")
@click.option("--config", type=click.Path(exists=True, dir_okay=False, path_type=Path), help="Use this config file.")
@click.option("--fail-level", type=click.Choice(FAIL_LEVELS), default="none", show_default=True, help="Exit 1 when a finding on the changed lines is at least this severe.")
@click.option("--summary-file", type=click.Path(dir_okay=False, path_type=Path), help="Also append the markdown summary to this file (a job summary), from the same analysis.")
def review_command(
    base: str, paths: tuple[Path, ...], output_format: str, select: tuple[str, ...], extend_select: tuple[str, ...],
    ignore: tuple[str, ...], unsafe_fixes: Optional[bool], config: Optional[Path], fail_level: str,
    summary_file: Optional[Path],
) -> None:  # fmt: skip
    """Report findings on lines added or changed since BASE, as a pull-request review (JSON) or markdown."""
    from memlint.commands.common import configured, fail, rule_codes

    selection = Selection(rule_codes(select) or None, rule_codes(extend_select), rule_codes(ignore))
    run = configured(lambda: Run.configure(paths or (Path("."),), config=config, selection=selection, unsafe_fixes=unsafe_fixes))
    try:
        review = collect(base, run, Path(os.getcwd()))
    except GitError as error:
        raise fail(f"git: {error}") from None
    except ConfigError as error:  # a subproject's configuration file
        raise fail(str(error)) from None
    if summary_file is not None:
        try:
            with summary_file.open("a", encoding="utf-8") as summary_out:
                summary_out.write(markdown(review))
        except OSError as error:
            raise fail(f"cannot write the summary to {summary_file}: {error.strerror or error}") from None
    if output_format == "markdown":
        click.echo(markdown(review), nl=False)
    else:
        click.echo(json.dumps(github_payload(review), indent=2, ensure_ascii=False))
    found = [c.diagnostic for c in review.comments] + [d for _, d in review.unplaced]
    raise click.exceptions.Exit(1 if any(fails(d, fail_level) for d in found) else 0)
