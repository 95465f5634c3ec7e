"""The language server: documents in, diagnostics and code actions out (pygls over stdio).

Linting goes through memlint.api with the settings of the closest configuration of each document
(read again when a configuration file is saved); a change is linted after a short quiet period
(DEBOUNCE_SECONDS), so typing does not queue one analysis per keystroke. A document is linted as a
project of its own (the project pass over the workspace is not run: see docs/editors.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from memlint import __version__, api
from memlint.config import ConfigError, Settings
from memlint.diagnostics import Diagnostic
from memlint.server.convert import FIX_ALL_KIND, diagnostic, noqa_edit, text_edits, whole_document

DEBOUNCE_SECONDS = 0.05
CONFIG_NAMES = ("pyproject.toml", "memlint.toml")


class MemlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("memlint", __version__)
        self.findings: dict[str, tuple[int, list[Diagnostic]]] = {}  # uri -> (version, findings)
        self.settings: dict[Path, Settings] = {}  # directory -> settings of its closest config
        self.pending: dict[str, asyncio.TimerHandle] = {}

    def settings_for(self, path: Optional[str]) -> Settings:
        directory = Path(path).parent if path else Path.cwd()
        if directory not in self.settings:
            self.settings[directory] = api.settings_for(directory if directory.exists() else Path.cwd())
        return self.settings[directory]

    def lint(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        path = document.path if uri.startswith("file:") else None
        filename = path or uri.rsplit("/", 1)[-1] or "untitled.py"
        try:
            found = api.lint_source(document.source, filename, settings=self.settings_for(path))
        except ConfigError as error:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"memlint: {error}"))
            found = []
        self.findings[uri] = (document.version or 0, found)
        lines = document.source.splitlines()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=document.version, diagnostics=[diagnostic(lines, d) for d in found])
        )

    def lint_soon(self, uri: str) -> None:
        pending = self.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.pending[uri] = asyncio.get_running_loop().call_later(DEBOUNCE_SECONDS, self._lint_pending, uri)

    def _lint_pending(self, uri: str) -> None:
        self.pending.pop(uri, None)
        if uri in {d.uri for d in self.workspace.text_documents.values()}:
            self.lint(uri)


server = MemlintServer()


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MemlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
async def did_change(ls: MemlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.lint_soon(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: MemlintServer, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith(CONFIG_NAMES):
        ls.settings.clear()  # a configuration changed: every document's settings are read again
        for uri in list(ls.findings):
            ls.lint(uri)
        return
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MemlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.findings.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: MemlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith(CONFIG_NAMES) for change in params.changes):
        ls.settings.clear()
        for uri in list(ls.findings):
            ls.lint(uri)


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND]),
)
def code_action(ls: MemlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    lines = document.source.splitlines()
    _, found = ls.findings.get(uri, (0, []))
    only = params.context.only
    actions: list[types.CodeAction] = []
    wants_fix_all = only is not None and any(kind in (types.CodeActionKind.SourceFixAll, FIX_ALL_KIND) for kind in only)
    if not wants_fix_all:
        for finding in found:
            converted = diagnostic(lines, finding)
            if not _touches(converted.range, params.range):
                continue
            if finding.fix is not None:
                label = finding.fix.message + (" (unsafe)" if not finding.fix.is_safe else "")
                actions.append(types.CodeAction(
                    title=f"memlint: {label}", kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                    is_preferred=finding.fix.is_safe,
                    edit=types.WorkspaceEdit(changes={uri: text_edits(lines, finding.fix.edits)}),
                ))  # fmt: skip
            suppress = noqa_edit(lines, finding.location.row, finding.code)
            if suppress is not None:
                actions.append(types.CodeAction(
                    title=f"memlint: suppress {finding.code} with `# noqa: {finding.code}`",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                    edit=types.WorkspaceEdit(changes={uri: [suppress]}),
                ))  # fmt: skip
    if any(d.fix is not None and d.fix.is_safe for d in found) and (only is None or wants_fix_all):
        fixed = api.fix_source(document.source, document.path if uri.startswith("file:") else "untitled.py",
                               settings=ls.settings_for(document.path if uri.startswith("file:") else None))  # fmt: skip
        if fixed.text != document.source:
            actions.append(types.CodeAction(
                title="memlint: fix all safe fixes in this file", kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole_document(document.source), new_text=fixed.text)]}),
            ))  # fmt: skip
    return actions


def _touches(a: types.Range, b: types.Range) -> bool:
    """Do two ranges overlap or touch (a cursor inside a finding asks for its actions)?"""
    return not ((a.end.line, a.end.character) < (b.start.line, b.start.character)
                or (b.end.line, b.end.character) < (a.start.line, a.start.character))  # fmt: skip

