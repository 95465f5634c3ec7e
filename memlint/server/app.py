"""The language server: documents in, diagnostics and code actions out (pygls over stdio).

Linting goes through memlint's pipeline with the settings of the closest configuration of each
document (read again when a configuration file is saved). The analysis runs in a worker thread, so
the server keeps answering while it runs, and its result is published only if the document has not
changed meanwhile. A change is linted at once when no analysis of the document is running, else once
that one ends, for the newest text: typing never queues more than one analysis per document, and a
single keystroke waits for nothing but its own analysis. A document is judged with the facts of the other files of
the workspace (memlint/server/workspace.py), summarised once in the background after start-up.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import tempfile
from pathlib import Path
from typing import Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from memlint import __version__, api
from memlint.config import ConfigError, Selection, Settings
from memlint.diagnostics import Diagnostic, Location
from memlint.pipeline.engine import lint_text
from memlint.pipeline.incremental import IncrementalParser
from memlint.pipeline.reserved import too_large
from memlint.pipeline.runner import Mode, process_text
from memlint.pipeline.suppressions import listed_codes
from memlint.prescreen import Source
from memlint.run import Run
from memlint.server import client_settings, notebook_documents
from memlint.server.convert import (
    FIX_ALL_KIND, REPLACEMENT, Lines, column_index, diagnostic, editor_text, noqa_edit, rule_page, text_edits, to_range,
    whole_document,
)
from memlint.server.protocol import ReleasingProtocol
from memlint.server.reports import Reports
from memlint.server.workspace import WorkspaceFacts

DEBOUNCE_SECONDS = 0.05  # notebooks: a quiet period before a change is linted (files: see MemlintServer.lint)
SHOW_DOCUMENTATION = "memlint.showDocumentation"
# Seconds a client has to answer a request of the server (window/showDocument): one that never answers
# must not keep workspace/executeCommand waiting.
CLIENT_TIMEOUT = 5.0
# Seconds a pull for diagnostics waits for the analysis of the document's current version.
PULL_TIMEOUT = 60.0
CONFIG_NAMES = ("pyproject.toml", "memlint.toml")
# The languageId of the text documents linted; others (Markdown, a configuration file...) are left
# alone. A notebook's cells come through the notebook (the end of this file), whatever their language.
PYTHON_LANGUAGES = ("python",)


class MemlintServer(LanguageServer):
    def __init__(self) -> None:
        # notebookDocumentSync is advertised (to clients that declare notebook support) from this option.
        super().__init__(
            "memlint", __version__, notebook_document_sync=notebook_documents.SYNC_OPTIONS, protocol_cls=ReleasingProtocol,
        )  # fmt: skip
        self.findings: dict[str, tuple[int, list[Diagnostic]]] = {}  # uri -> (version, findings)
        self.run: Optional[Run] = None  # the editor's settings over the configuration files (forget_settings)
        self.running: set[str] = set()  # documents being analysed
        self.changed: set[str] = set()  # ... that changed meanwhile: analysed again when it ends
        self.parsers: dict[str, IncrementalParser] = {}  # uri -> its parser, re-using unchanged statements
        self.facts = WorkspaceFacts()
        self.client = client_settings.ClientSettings()  # the editor's settings
        self.resolving = False  # the workspace's project is being resolved again (resolve_soon)
        self.resolve_again = False
        # Where "show the documentation" writes rule pages (from the rules' own text) for the editor to
        # open: a private temporary directory of this server process, made on first use.
        self.rule_pages: Optional[Path] = None
        self.shut_down = False  # the client asked for `shutdown`: `exit` then ends with 0, else 1 (LSP)
        self.reports = Reports()  # for a client that pulls diagnostics
        self.refreshing = False  # a workspace/diagnostic/refresh is about to be sent

    def remove_rule_pages(self) -> None:
        """Remove the rule pages' temporary directory (at shutdown, and when the process ends)."""
        if self.rule_pages is not None:
            shutil.rmtree(self.rule_pages, ignore_errors=True)
            self.rule_pages = None

    @property
    def encoding(self) -> str:
        """The position encoding agreed on at initialize ("utf-16", "utf-8" or "utf-32")."""
        chosen = self.workspace.position_encoding or types.PositionEncodingKind.Utf16
        return str(getattr(chosen, "value", chosen))

    def lines(self, text: str) -> Lines:
        return Lines(text, self.encoding)

    @property
    def pulls(self) -> bool:
        """Whether the client pulls diagnostics (LSP 3.17): then none are published to it."""
        text_document = self.client_capabilities.text_document
        return text_document is not None and text_document.diagnostic is not None

    def report(self, uri: str, version: Optional[int], found: list[Diagnostic], source: str) -> None:
        """Keep a document's (or a cell's) findings and give the client their diagnostics: published,
        or kept for its pull (and, if they changed for a version it has pulled, a refresh asked for)."""
        self.findings[uri] = (version or 0, found)
        lines = self.lines(source)
        items = [diagnostic(lines, d, uri) for d in found]
        if self.pulls:
            if self.reports.store(uri, version or 0, items):
                self.refresh_soon()
            return
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=items))

    def forget(self, uri: str) -> None:
        """A document closed (or a cell removed): its diagnostics go."""
        self.findings.pop(uri, None)
        self.reports.forget(uri)
        if not self.pulls:
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    def refresh_soon(self) -> None:
        """Ask a pulling client to pull again (once for the changes of a moment), if it can be asked."""
        workspace = self.client_capabilities.workspace
        support = workspace.diagnostics if workspace is not None else None
        if self.refreshing or support is None or not support.refresh_support:
            return
        self.refreshing = True

        async def refresh() -> None:
            self.refreshing = False
            try:
                await asyncio.wait_for(self.workspace_diagnostic_refresh_async(None), CLIENT_TIMEOUT)
            except Exception:  # no answer in time, or an error: the client pulls when it next edits
                pass

        asyncio.get_running_loop().call_later(0.05, lambda: asyncio.ensure_future(refresh()))

    def resolves_edits(self) -> bool:
        """Whether the client asks for a code action's edit when one is chosen (codeAction/resolve)."""
        text_document = self.client_capabilities.text_document
        code_action = text_document.code_action if text_document is not None else None
        support = code_action.resolve_support if code_action is not None else None
        return support is not None and "edit" in support.properties

    def can_show_documents(self) -> bool:
        window = self.client_capabilities.window
        return bool(window is not None and window.show_document is not None and window.show_document.support)

    def settings_for(self, path: Optional[str]) -> Settings:
        """The settings of a document: its closest configuration, under the editor's settings."""
        return self.settings_in(Path(path).parent if path else Path.cwd())

    def settings_in(self, directory: Path) -> Settings:
        """The settings of the configuration closest to `directory`, as a check run from the workspace
        with the editor's settings as its command-line options would use (memlint/run.py)."""
        if self.run is None:
            client = self.client
            root = Path(self.workspace.root_path) if self.workspace.root_path else Path.cwd()
            self.run = Run.configure(
                (root,), config=client.configuration,
                selection=Selection(client.select, client.extend_select, client.ignore), unsafe_fixes=client.unsafe_fixes,
            )  # fmt: skip
        return self.run.settings_in(directory)

    def forget_settings(self) -> None:
        """A configuration file or the editor's settings changed: every document's are read again."""
        self.run = None

    def take_client_settings(self, options: object) -> None:
        """The editor's settings (initializationOptions, workspace/didChangeConfiguration); what is
        wrong in them is shown, the rest applies."""
        root = Path(self.workspace.root_path) if self.workspace.root_path else None
        self.client, problems = client_settings.read(options, root)
        self.forget_settings()
        for problem in problems:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Warning, message=f"memlint: {problem}"))

    def lint_all(self) -> None:
        """Lint every document and notebook shown again (their settings changed)."""
        for uri in list(self.findings):
            self.lint(uri)

    def lint(self, uri: str) -> None:
        """Lint the document in a worker thread and publish what it finds (from the event loop): now,
        or when the analysis of it under way ends (that one will not publish: its text is stale), so
        that a document is analysed by one thread at a time and typing queues at most one analysis."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:  # a notebook's cell: the notebook is linted as one (at the end of this file)
            return lint_notebook(self, notebook.uri)
        if not self.is_python(uri):
            return
        if uri in self.running:
            self.changed.add(uri)
            return
        self.running.add(uri)
        asyncio.ensure_future(self._lint(uri))

    def is_python(self, uri: str) -> bool:
        """Whether the text document is one memlint lints: Python, or a notebook opened as a file."""
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return False
        return document.language_id in PYTHON_LANGUAGES or uri.endswith(".ipynb")

    async def _lint(self, uri: str) -> None:
        try:
            await self._lint_now(uri)
        finally:
            self.running.discard(uri)
            if uri in self.changed:
                self.changed.discard(uri)
                if uri in self.workspace.text_documents:
                    self.lint(uri)

    async def _lint_now(self, uri: str) -> None:
        document = self.workspace.get_text_document(uri)
        source, version = editor_text(document.source), document.version
        path = document.path if uri.startswith("file:") else None
        filename = path or uri.rsplit("/", 1)[-1] or "untitled.py"
        new_summary = None
        try:
            settings = self.settings_for(path)
            parser = self.parsers.setdefault(uri, IncrementalParser())
            found, new_summary = await asyncio.to_thread(self._analyse, source, filename, path, settings, parser)
        except ConfigError as error:
            self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"memlint: {error}"))
            found = []
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return  # closed or changed while it was analysed: the newer text's lint publishes
        if new_summary is not None and path is not None:
            # Judged with facts resolved for an older text of it: resolve with this one, lint again.
            self.facts.edited(path, new_summary)
            self.resolve_soon()
        self.report(uri, version, found, source)

    def _analyse(
        self, source: str, filename: str, path: Optional[str], settings: Settings, parser: IncrementalParser
    ) -> tuple[list[Diagnostic], Optional[dict]]:
        """The document's findings, with the workspace's facts once they are loaded, and its summary
        when those facts were resolved with an older one (WorkspaceFacts.view; a worker thread)."""
        if filename.endswith(".ipynb"):  # a notebook opened as a file: a project of its own
            return sorted(process_text(source, filename, settings, Mode()).diagnostics, key=Diagnostic.sort_key), None
        if too_large(source, settings) is not None:
            # Refused before anything parses it (CPython's AST of 5 MB takes seconds and gigabytes):
            # lint_text reports ML901 (not analysed) with the limit, as `memlint check` does.
            return lint_text(source, filename, settings, defer_fixes=True), None
        parsed = Source(source)  # one AST for the project facts and the screens
        view, new_summary = self.facts.view(parsed, path)
        # Fixes are computed when a code action asks for one: most findings shown are never fixed.
        return lint_text(source, filename, settings, view, source=parsed, parser=parser, defer_fixes=True), new_summary

    def resolve_soon(self) -> None:
        """Resolve the workspace's project again in a worker thread (one at a time: a request during
        one runs once it ends), then lint the open documents again."""
        if self.resolving:
            self.resolve_again = True
            return
        self.resolving = True
        asyncio.ensure_future(self._resolve())

    async def _resolve(self) -> None:
        try:
            while True:
                self.resolve_again = False
                await asyncio.to_thread(self.facts.resolve)
                if not self.resolve_again:
                    break
        finally:
            self.resolving = False
        for uri in list(self.workspace.text_documents):
            self.lint(uri)

    async def load_workspace(self) -> None:
        """Summarise the workspace's files in a worker thread, then lint the open documents again."""
        root = self.workspace.root_path
        if not root or not Path(root).is_dir():
            return
        try:
            await asyncio.to_thread(self.facts.load, Path(root), self.settings_in(Path(root)))
        except ConfigError:
            return  # the documents are linted alone; the configuration error is shown when one is linted
        for uri in list(self.workspace.text_documents):  # those opened meanwhile were linted alone
            self.lint(uri)

    async def refresh_facts(self, paths: list[str]) -> None:
        """Summarise these workspace files again, in a worker thread (a checkout can change hundreds),
        and resolve the project again if that changed it (then the open documents are linted again)."""

        def refresh() -> None:
            for path in paths:
                try:
                    self.facts.refresh(path, self.settings_for(path))
                except ConfigError:
                    pass  # the documents linted next show the configuration's error

        await asyncio.to_thread(refresh)
        if not self.facts.is_current():
            self.resolve_soon()


server = MemlintServer()


@server.feature(types.SHUTDOWN)
def shutdown(ls: MemlintServer, params: None) -> None:
    ls.shut_down = True
    ls.protocol.cancel_pending()
    ls.remove_rule_pages()


@server.feature(types.INITIALIZE)
def initialize(ls: MemlintServer, params: types.InitializeParams) -> None:
    ls.take_client_settings(params.initialization_options)


@server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
def did_change_configuration(ls: MemlintServer, params: types.DidChangeConfigurationParams) -> None:
    configuration = ls.client.configuration
    ls.take_client_settings(params.settings)
    if ls.client.configuration != configuration:  # the workspace's files are judged by another one
        asyncio.ensure_future(ls.load_workspace())  # then lints everything again
    ls.lint_all()


@server.feature(types.INITIALIZED)
def initialized(ls: MemlintServer, params: types.InitializedParams) -> None:
    asyncio.ensure_future(ls.load_workspace())  # in the background: documents are linted meanwhile


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: MemlintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: MemlintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
async def did_save(ls: MemlintServer, params: types.DidSaveTextDocumentParams) -> None:
    document = ls.workspace.get_text_document(params.text_document.uri)
    if params.text_document.uri.startswith("file:") and document.path.endswith(".py"):
        await ls.refresh_facts([document.path])
    if params.text_document.uri.endswith(CONFIG_NAMES):
        ls.forget_settings()  # a configuration changed: every document's settings are read again
        ls.lint_all()
        return
    ls.lint(params.text_document.uri)


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: MemlintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.forget(params.text_document.uri)
    ls.parsers.pop(params.text_document.uri, None)
    path = uris.to_fs_path(params.text_document.uri) if params.text_document.uri.startswith("file:") else None
    if path is not None:
        ls.facts.close(path)  # an unsaved text no longer stands for the file
        if not ls.facts.is_current():
            ls.resolve_soon()


@server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
async def did_change_watched_files(ls: MemlintServer, params: types.DidChangeWatchedFilesParams) -> None:
    changed_python = [change.uri for change in params.changes if change.uri.startswith("file:") and change.uri.endswith(".py")]
    # Another file's functions may change what the open documents show.
    paths = [path for path in map(uris.to_fs_path, changed_python) if path is not None]
    if paths:
        await ls.refresh_facts(paths)
    if any(change.uri.endswith(CONFIG_NAMES) for change in params.changes):
        ls.forget_settings()
        ls.lint_all()


@server.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND],
        resolve_provider=True,
    ),
)
async def code_action(ls: MemlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The actions at a range. To a client that resolves an action's edit (codeAction/resolve), the
    fixes and fix-all are listed without their edits, computed only for the one chosen: a request at
    the cursor then computes no fix at all."""
    uri = params.text_document.uri
    document = ls.workspace.get_text_document(uri)
    source = editor_text(document.source)  # the text the findings are about
    lines = ls.lines(source)
    version, found = ls.findings.get(uri, (0, []))
    only = params.context.only
    lazy = ls.resolves_edits()
    actions: list[types.CodeAction] = []
    wants_fix_all = only is not None and any(kind in (types.CodeActionKind.SourceFixAll, FIX_ALL_KIND) for kind in only)
    if not wants_fix_all:
        for index, finding in enumerate(found):
            converted = diagnostic(lines, finding)
            if not _touches(converted.range, params.range):
                continue
            known = finding.deferred_fix or finding.fix  # its message and safety, without its edits
            fix = None if lazy or known is None else finding.resolved_fix()
            if known is not None and (lazy or fix is not None):
                label = known.message + (" (unsafe)" if not known.is_safe else "")
                action = types.CodeAction(
                    title=f"memlint: {label}", kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                    is_preferred=known.is_safe,
                )  # fmt: skip
                if lazy:
                    action.data = {"uri": uri, "version": version, "finding": index}
                else:
                    action.edit = types.WorkspaceEdit(changes={uri: text_edits(lines, fix.edits)})
                actions.append(action)
            suppress = noqa_edit(lines, finding.location.row, finding.code)
            if suppress is not None:
                actions.append(types.CodeAction(
                    title=f"memlint: suppress {finding.code} with `# noqa: {finding.code}`",
                    kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                    edit=types.WorkspaceEdit(changes={uri: [suppress]}),
                ))  # fmt: skip
            actions.append(types.CodeAction(
                title=f"memlint: show the documentation of {finding.code} ({finding.name})",
                kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                command=types.Command(title=f"Show {finding.code}", command=SHOW_DOCUMENTATION, arguments=[finding.code]),
            ))  # fmt: skip
    notebook = ls.workspace.get_notebook_document(cell_uri=uri)  # of a cell (the end of this file)
    cell = notebook is not None
    # A notebook's fixes may edit any of its cells (an import added to the first one).
    fixable = [d for c in notebook.cells for d in ls.findings.get(c.document, (0, []))[1]] if cell else found
    if (only is None or wants_fix_all) and any(d.has_safe_fix() for d in fixable):
        fix_all = types.CodeAction(title=f"memlint: fix all safe fixes in this {'cell' if cell else 'file'}", kind=FIX_ALL_KIND)
        if lazy:
            fix_all.data = {"uri": uri, "fixAll": True}
        else:
            fix_all.edit = await _fix_all_edit(ls, uri, source)
        if fix_all.edit is not None or lazy:
            actions.append(fix_all)
    if source != document.source:
        # The text held lone surrogates, linted as U+FFFD: an edit that writes U+FFFD would put it in
        # place of the editor's character, so those edits are not offered.
        actions = [action for action in actions if not _writes_replacement(action)]
    return actions


@server.feature(types.CODE_ACTION_RESOLVE)
async def resolve_code_action(ls: MemlintServer, action: types.CodeAction) -> types.CodeAction:
    """The edit of an action listed without it (code_action above). A fix whose finding is from
    another version of the document than the one shown resolves to no edit: the editor applies
    nothing, and the next request lists the new findings."""
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    document = ls.workspace.text_documents.get(uri) if isinstance(uri, str) else None
    if document is None:
        return action
    source = editor_text(document.source)
    if data.get("fixAll") is True:
        action.edit = await _fix_all_edit(ls, uri, source)
    elif isinstance(data.get("finding"), int):
        version, found = ls.findings.get(uri, (None, []))
        index = data["finding"]
        if version == data.get("version") == (document.version or 0) and 0 <= index < len(found):
            fix = found[index].resolved_fix()
            if fix is not None:
                action.edit = types.WorkspaceEdit(changes={uri: text_edits(ls.lines(source), fix.edits)})
    if source != document.source and _writes_replacement(action):
        action.edit = None
    return action


async def _fix_all_edit(ls: MemlintServer, uri: str, source: str) -> Optional[types.WorkspaceEdit]:
    """The edit applying every safe fix of the document (of the notebook, for a cell), or None."""
    if ls.workspace.get_notebook_document(cell_uri=uri) is not None:
        return notebook_fix_all(ls, uri)
    document = ls.workspace.get_text_document(uri)
    path = document.path if uri.startswith("file:") else None
    # In a worker thread, as the diagnostics: every fix applied to a fixed point can take a while.
    fixed = await asyncio.to_thread(api.fix_source, source, path or "untitled.py", settings=ls.settings_for(path), unsafe=False)
    if fixed.text == source:
        return None
    return types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole_document(source, ls.encoding), new_text=fixed.text)]})


def _writes_replacement(action: types.CodeAction) -> bool:
    changes = action.edit.changes if action.edit is not None and action.edit.changes else {}
    return any(REPLACEMENT in edit.new_text for edits in changes.values() for edit in edits)


@server.command(SHOW_DOCUMENTATION)
async def show_documentation(ls: MemlintServer, code: str) -> None:
    """Open the rule's page in the editor (or the browser, for a configured URL). pygls passes the
    command's arguments as the handler's parameters."""
    try:
        ls.rule_pages = ls.rule_pages or Path(tempfile.mkdtemp(prefix="memlint-rules-"))
        uri = rule_page(code, ls.rule_pages)
    except OSError as error:
        uri, problem = None, f"cannot write the rule page: {error}"
    else:
        problem = f"unknown rule {code!r}"
    if uri is None:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"memlint: {problem}"))
        return
    shown = False
    if ls.can_show_documents():  # else the request is not sent: the client said it cannot
        external = not uri.startswith("file:")
        request = ls.window_show_document_async(types.ShowDocumentParams(uri=uri, external=external, take_focus=True))
        try:
            result = await asyncio.wait_for(request, CLIENT_TIMEOUT)
            shown = bool(result is not None and getattr(result, "success", False))
        except Exception:  # no answer in time, an error, an answer pygls cannot read: say where the page is
            shown = False
    if not shown:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=f"memlint: the documentation of {code}: {uri}"))


@server.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(inter_file_dependencies=True, workspace_diagnostics=True, identifier="memlint"),
)
async def document_diagnostic(ls: MemlintServer, params: types.DocumentDiagnosticParams) -> types.DocumentDiagnosticReport:
    """The document's diagnostics, for a client that pulls them: those of its current version, once
    analysed ("unchanged" when the client holds them already)."""
    report = await _current_report(ls, params.text_document.uri)
    if report is None:
        return types.RelatedFullDocumentDiagnosticReport(items=[])
    if params.previous_result_id == report.result_id:
        return types.RelatedUnchangedDocumentDiagnosticReport(result_id=report.result_id)
    return types.RelatedFullDocumentDiagnosticReport(items=report.items, result_id=report.result_id)


@server.feature(types.WORKSPACE_DIAGNOSTIC)
async def workspace_diagnostic(ls: MemlintServer, params: types.WorkspaceDiagnosticParams) -> types.WorkspaceDiagnosticReport:
    """The diagnostics of every open document (the files on disk are linted by `memlint check`)."""
    held = {previous.uri: previous.value for previous in params.previous_result_ids}
    items: list = []
    for uri in list(ls.workspace.text_documents):
        report = await _current_report(ls, uri)
        if report is None:
            continue
        if held.get(uri) == report.result_id:
            items.append(types.WorkspaceUnchangedDocumentDiagnosticReport(uri=uri, result_id=report.result_id, version=report.version))
        else:
            items.append(types.WorkspaceFullDocumentDiagnosticReport(
                uri=uri, items=report.items, version=report.version, result_id=report.result_id,
            ))  # fmt: skip
    return types.WorkspaceDiagnosticReport(items=items)


async def _current_report(ls: MemlintServer, uri: str):
    document = ls.workspace.text_documents.get(uri)
    if document is None or not (ls.is_python(uri) or ls.workspace.get_notebook_document(cell_uri=uri) is not None):
        return None
    return await ls.reports.current(uri, document.version or 0, PULL_TIMEOUT)


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: MemlintServer, params: types.HoverParams) -> Optional[types.Hover]:
    """A rule's documentation, on its code in a suppression comment (`# noqa: ML001`, `# memlint:
    ignore[ML001]`, `ignore-file`) or on one of its findings."""
    uri = params.text_document.uri
    document = ls.workspace.text_documents.get(uri)
    if document is None or not (ls.is_python(uri) or ls.workspace.get_notebook_document(cell_uri=uri) is not None):
        return None
    lines = ls.lines(editor_text(document.source))
    row = params.position.line
    if not 0 <= row < len(lines):
        return None
    line = lines[row]
    column = column_index(line, params.position.character, lines.encoding)
    for match, group, _ in listed_codes(line):
        for code in re.finditer(r"[A-Za-z]+[0-9]+", match.group(group)):
            start, end = match.start(group) + code.start(), match.start(group) + code.end()
            if start <= column <= end:
                place = to_range(lines, Location(row + 1, start + 1), Location(row + 1, end + 1))
                return _rule_hover(ls, code.group(), place)
    _, found = ls.findings.get(uri, (0, []))
    for finding in found:
        converted = diagnostic(lines, finding)
        if _touches(converted.range, types.Range(start=params.position, end=params.position)):
            return _rule_hover(ls, finding.code, converted.range)
    return None


def _rule_hover(ls: MemlintServer, code: str, place: types.Range) -> Optional[types.Hover]:
    from memlint.commands.ruledocs import rule_text
    from memlint.pipeline import registry

    rule = registry.find_rule(code)
    if rule is None:  # another tool's code (`# noqa: E501`)
        return None
    hover_capability = ls.client_capabilities.text_document.hover if ls.client_capabilities.text_document else None
    formats = hover_capability.content_format if hover_capability is not None else None
    kind = types.MarkupKind.PlainText if formats and types.MarkupKind.Markdown not in formats else types.MarkupKind.Markdown
    return types.Hover(contents=types.MarkupContent(kind=kind, value=rule_text(rule)), range=place)


def _touches(a: types.Range, b: types.Range) -> bool:
    """Do two ranges overlap or touch (a cursor inside a finding asks for its actions)?"""
    return not ((a.end.line, a.end.character) < (b.start.line, b.start.character)
                or (b.end.line, b.end.character) < (a.start.line, a.start.character))  # fmt: skip


# ---- notebook documents (LSP 3.17) ----
# The cells of a notebook are linted as one program (memlint.server.notebook_documents builds the
# notebook and splits the findings per cell); each cell's findings are kept in `ls.findings` under the
# cell's URI, so `code_action` above serves cells as it serves files. pygls keeps the notebook and its
# cell text documents in the workspace before these handlers run.

_notebook_pending: dict[str, asyncio.TimerHandle] = {}  # notebook URI -> its debounced lint
_notebook_published: dict[str, list[str]] = {}  # notebook URI -> the cell URIs given diagnostics last


def _notebook_cells(ls: MemlintServer, notebook: types.NotebookDocument) -> list[tuple[types.NotebookCell, str, Optional[str], Optional[int]]]:
    """(cell, its text, its language id, its version) of each cell, in order."""
    cells = []
    for cell in notebook.cells:
        document = ls.workspace.text_documents.get(cell.document) or ls.workspace.text_documents.get(unquote(cell.document))
        if document is None:
            cells.append((cell, "", None, None))
        else:
            cells.append((cell, editor_text(document.source), document.language_id, document.version))
    return cells


def _notebook_source(ls: MemlintServer, notebook_uri: str):
    """(the notebook's JSON text, the filename to lint it as, its settings, its cells) or None."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    cells = _notebook_cells(ls, notebook)
    filename, path = notebook_documents.notebook_filename(notebook.uri)
    text = notebook_documents.notebook_json([(cell, source, language) for cell, source, language, _ in cells])
    return text, filename, ls.settings_for(path), cells


def lint_notebook(ls: MemlintServer, notebook_uri: str, delay: float = 0.0) -> None:
    """Lint the notebook soon (once, however many of its cells asked in the meantime)."""
    pending = _notebook_pending.pop(notebook_uri, None)
    if pending is not None:
        pending.cancel()

    def start() -> None:
        _notebook_pending.pop(notebook_uri, None)  # this timer (a newer request would have cancelled it)
        asyncio.ensure_future(_lint_notebook(ls, notebook_uri))

    _notebook_pending[notebook_uri] = asyncio.get_running_loop().call_later(delay, start)


async def _lint_notebook(ls: MemlintServer, notebook_uri: str) -> None:
    """Lint the notebook in a worker thread and publish each cell's diagnostics (empty ones too, so
    stale ones clear), unless the notebook changed or closed meanwhile (the newer lint publishes)."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    made = _notebook_source(ls, notebook_uri)
    if notebook is None or made is None:
        return
    version = notebook.version
    text, filename, settings, cells = made
    try:
        found = await asyncio.to_thread(api.lint_source, text, filename, settings=settings)
    except ConfigError as error:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=f"memlint: {error}"))
        found = []
    current = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if current is None or current.version != version or _notebook_cells(ls, current) != cells:
        return
    first_code = next((n for n, (cell, _, language, _) in enumerate(cells, start=1) if notebook_documents.is_code(cell, language)), None)
    per_cell = notebook_documents.split_by_cell(found, [(cell.document, source) for cell, source, _, _ in cells], fallback=first_code)
    for old in _notebook_published.get(notebook_uri, []):
        if old not in per_cell:  # a cell removed since: its diagnostics go too
            ls.forget(old)
    _notebook_published[notebook_uri] = list(per_cell)
    for cell, source, _, cell_version in cells:
        ls.report(cell.document, cell_version, per_cell[cell.document], source)


def notebook_fix_all(ls: MemlintServer, cell_uri: str) -> Optional[types.WorkspaceEdit]:
    """The fix-all edit of one cell: the notebook's safe fixes applied as a whole, this cell's new text."""
    notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
    made = _notebook_source(ls, notebook.uri) if notebook is not None else None
    if made is None:
        return None
    text, filename, settings, cells = made
    index = next((n for n, (cell, *_) in enumerate(cells) if cell.document == cell_uri), None)
    if index is None:
        return None
    fixed = api.fix_source(text, filename, settings=settings, unsafe=False)  # "fix all safe fixes"
    if fixed.text == text:
        return None
    new_cells = json.loads(fixed.text)["cells"]
    source = new_cells[index].get("source", "") if index < len(new_cells) else ""
    new_text = "".join(source) if isinstance(source, list) else source
    old_text = cells[index][1]
    if new_text == old_text:
        return None
    return types.WorkspaceEdit(changes={cell_uri: [types.TextEdit(range=whole_document(old_text, ls.encoding), new_text=new_text)]})


@server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
async def notebook_did_open(ls: MemlintServer, params: types.DidOpenNotebookDocumentParams) -> None:
    lint_notebook(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
async def notebook_did_change(ls: MemlintServer, params: types.DidChangeNotebookDocumentParams) -> None:
    lint_notebook(ls, params.notebook_document.uri, delay=DEBOUNCE_SECONDS)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
async def notebook_did_save(ls: MemlintServer, params: types.DidSaveNotebookDocumentParams) -> None:
    lint_notebook(ls, params.notebook_document.uri)


@server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def notebook_did_close(ls: MemlintServer, params: types.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    pending = _notebook_pending.pop(uri, None)
    if pending is not None:
        pending.cancel()
    cell_uris = [cell.uri for cell in params.cell_text_documents] + _notebook_published.pop(uri, [])
    for cell_uri in dict.fromkeys(cell_uris):
        ls.forget(cell_uri)
# ---- end of notebook documents ----
