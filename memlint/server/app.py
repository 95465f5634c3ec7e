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
import tempfile
from pathlib import Path
from typing import Optional
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer

from memlint import __version__, api
from memlint.config import ConfigError, Selection, Settings
from memlint.diagnostics import Diagnostic
from memlint.pipeline.engine import lint_text
from memlint.pipeline.incremental import IncrementalParser
from memlint.pipeline.runner import Mode, process_text
from memlint.run import Run
from memlint.prescreen import Source
from memlint.server import client_settings, notebook_documents
from memlint.server.convert import FIX_ALL_KIND, diagnostic, noqa_edit, rule_page, text_edits, whole_document
from memlint.server.workspace import WorkspaceFacts

DEBOUNCE_SECONDS = 0.05  # notebooks: a quiet period before a change is linted (files: see MemlintServer.lint)
SHOW_DOCUMENTATION = "memlint.showDocumentation"
CONFIG_NAMES = ("pyproject.toml", "memlint.toml")


class MemlintServer(LanguageServer):
    def __init__(self) -> None:
        # notebookDocumentSync is advertised (to clients that declare notebook support) from this option.
        super().__init__("memlint", __version__, notebook_document_sync=notebook_documents.SYNC_OPTIONS)
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
        if uri in self.running:
            self.changed.add(uri)
            return
        self.running.add(uri)
        asyncio.ensure_future(self._lint(uri))

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
        source, version = document.source, document.version
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
        self.findings[uri] = (version or 0, found)
        lines = source.splitlines()
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=[diagnostic(lines, d, uri) for d in found])
        )

    def _analyse(
        self, source: str, filename: str, path: Optional[str], settings: Settings, parser: IncrementalParser
    ) -> tuple[list[Diagnostic], Optional[dict]]:
        """The document's findings, with the workspace's facts once they are loaded, and its summary
        when those facts were resolved with an older one (WorkspaceFacts.view; a worker thread)."""
        if filename.endswith(".ipynb"):  # a notebook opened as a file: a project of its own
            return sorted(process_text(source, filename, settings, Mode()).diagnostics, key=Diagnostic.sort_key), None
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
async def did_change(ls: MemlintServer, params: types.DidChangeTextDocumentParams) -> None:
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
    ls.findings.pop(params.text_document.uri, None)
    ls.parsers.pop(params.text_document.uri, None)
    path = uris.to_fs_path(params.text_document.uri) if params.text_document.uri.startswith("file:") else None
    if path is not None:
        ls.facts.close(path)  # an unsaved text no longer stands for the file
        if not ls.facts.is_current():
            ls.resolve_soon()
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


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
    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL_KIND]),
)
async def code_action(ls: MemlintServer, params: types.CodeActionParams) -> list[types.CodeAction]:
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
            fix = finding.resolved_fix()
            if fix is not None:
                label = fix.message + (" (unsafe)" if not fix.is_safe else "")
                actions.append(types.CodeAction(
                    title=f"memlint: {label}", kind=types.CodeActionKind.QuickFix, diagnostics=[converted],
                    is_preferred=fix.is_safe, edit=types.WorkspaceEdit(changes={uri: text_edits(lines, fix.edits)}),
                ))  # fmt: skip
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
    if ls.workspace.get_notebook_document(cell_uri=uri) is not None:  # a notebook's cell (end of this file)
        return actions + (notebook_fix_all(ls, uri) if only is None or wants_fix_all else [])
    if any(d.has_safe_fix() for d in found) and (only is None or wants_fix_all):
        source, path = document.source, document.path if uri.startswith("file:") else None
        # In a worker thread, as the diagnostics: every fix applied to a fixed point can take a while.
        fixed = await asyncio.to_thread(api.fix_source, source, path or "untitled.py", settings=ls.settings_for(path), unsafe=False)
        if fixed.text != source:
            actions.append(types.CodeAction(
                title="memlint: fix all safe fixes in this file", kind=FIX_ALL_KIND,
                edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(range=whole_document(source), new_text=fixed.text)]}),
            ))  # fmt: skip
    return actions


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
    external = not uri.startswith("file:")
    await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, external=external, take_focus=True))


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
            cells.append((cell, document.source, document.language_id, document.version))
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
            ls.findings.pop(old, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=old, diagnostics=[]))
    _notebook_published[notebook_uri] = list(per_cell)
    for cell, source, _, cell_version in cells:
        cell_found = per_cell[cell.document]
        ls.findings[cell.document] = (cell_version or 0, cell_found)
        lines = source.splitlines()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=cell.document, version=cell_version, diagnostics=[diagnostic(lines, d, cell.document) for d in cell_found],
        ))  # fmt: skip


def notebook_fix_all(ls: MemlintServer, cell_uri: str) -> list[types.CodeAction]:
    """The fix-all action for one cell: the notebook's safe fixes applied as a whole, this cell's new text."""
    notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
    made = _notebook_source(ls, notebook.uri) if notebook is not None else None
    if made is None:
        return []
    text, filename, settings, cells = made
    index = next((n for n, (cell, *_) in enumerate(cells) if cell.document == cell_uri), None)
    if index is None:
        return []
    fixed = api.fix_source(text, filename, settings=settings, unsafe=False)  # "fix all safe fixes"
    if fixed.text == text:
        return []
    new_cells = json.loads(fixed.text)["cells"]
    source = new_cells[index].get("source", "") if index < len(new_cells) else ""
    new_text = "".join(source) if isinstance(source, list) else source
    old_text = cells[index][1]
    if new_text == old_text:
        return []
    return [types.CodeAction(
        title="memlint: fix all safe fixes in this cell", kind=FIX_ALL_KIND,
        edit=types.WorkspaceEdit(changes={cell_uri: [types.TextEdit(range=whole_document(old_text), new_text=new_text)]}),
    )]  # fmt: skip


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
        ls.findings.pop(cell_uri, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=cell_uri, diagnostics=[]))
# ---- end of notebook documents ----
