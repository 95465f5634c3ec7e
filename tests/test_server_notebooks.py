"""`memlint server` with LSP 3.17 notebook documents, end to end: a real client process opens a notebook
(cells sent as notebookDocument/didOpen, as VS Code's Jupyter does), the cells are linted as one
program, and diagnostics and code actions arrive per cell URI; cells change, are added and removed;
closing the notebook clears everything. Every wait is for a publish, with the client's timeout."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write
from lsp_client import LspClient, apply_edits

CODE, MARKUP = 2, 1  # NotebookCellKind
CELL_1 = "import torch\ntotal = 0.0"
CELL_2 = "# Evaluation\nThe loop below sums the loss."
CELL_3 = "for x, y in loader:\n    loss = criterion(model(x), y)\n    total += loss"
PUBLISH = "textDocument/publishDiagnostics"


@pytest.fixture
def session(tmp_path: Path):
    write(tmp_path / "pyproject.toml", "[tool.memlint]\n")
    client = LspClient(cwd=tmp_path)
    result = client.request("initialize", {
        "processId": None, "rootUri": tmp_path.as_uri(),
        "capabilities": {"notebookDocument": {"synchronization": {}}},
    })  # fmt: skip
    client.notify("initialized", {})
    yield client, tmp_path, result["capabilities"]
    if client.process.poll() is None:
        client.process.kill()


def cell_uri(notebook: Path, name: str) -> str:
    return f"vscode-notebook-cell:{notebook.as_posix()}#{name}"


def cell_document(uri: str, text: str, language: str = "python", version: int = 1) -> dict:
    return {"uri": uri, "languageId": language, "version": version, "text": text}


ANY = object()


def published(client: LspClient, uri: str, codes: list[str], version=ANY) -> list[dict]:
    """The diagnostics of the first publish for `uri` with these codes (and this cell version; None:
    the publish without a version that clears a removed or closed cell): the server may lint a
    notebook more than once (it lints the open documents again once it has read the workspace), so
    each wait is for the state expected, not for the next publish."""
    return client.wait_for(PUBLISH, lambda p: p["uri"] == uri and [d["code"] for d in p["diagnostics"]] == codes
                           and (version is ANY or p.get("version") == version), timeout=30)["diagnostics"]  # fmt: skip


def test_notebook_cells_are_linted_as_one_program(session):
    client, root, capabilities = session
    sync = capabilities["notebookDocumentSync"]
    (selector,) = sync["notebookSelector"]
    assert selector["notebook"] == "*" and selector["cells"] == [{"language": "python"}]

    notebook = root / "eval.ipynb"
    c1, c2, c3 = (cell_uri(notebook, name) for name in ("W0", "W1", "W2"))
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook.as_uri(), "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": CODE, "document": c1}, {"kind": MARKUP, "document": c2},
                                       {"kind": CODE, "document": c3}]},
        "cellTextDocuments": [cell_document(c1, CELL_1), cell_document(c2, CELL_2, "markdown"), cell_document(c3, CELL_3)],
    })  # fmt: skip
    (finding,) = published(client, c3, ["ML001"], version=1)
    assert published(client, c1, []) == published(client, c2, []) == []
    assert finding["source"] == "memlint"
    assert finding["range"] == {"start": {"line": 2, "character": 4}, "end": {"line": 2, "character": 17}}

    # code actions on the cell: the quick fix (edits in the cell's own lines), noqa, fix-all for the cell
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": c3}, "range": finding["range"], "context": {"diagnostics": [finding]},
    })  # fmt: skip
    titles = [action["title"] for action in actions]
    quick_fix = next(a for a in actions if "loss.detach()" in a["title"])
    assert quick_fix["isPreferred"] is True and list(quick_fix["edit"]["changes"]) == [c3]
    fixed = apply_edits(CELL_3, quick_fix["edit"]["changes"][c3])
    assert fixed == CELL_3 + ".detach()"
    suppress = next(a for a in actions if "noqa" in a["title"])
    assert apply_edits(CELL_3, suppress["edit"]["changes"][c3]).endswith("total += loss  # noqa: ML001")
    (fix_all,) = client.request("textDocument/codeAction", {
        "textDocument": {"uri": c3}, "range": finding["range"],
        "context": {"diagnostics": [], "only": ["source.fixAll.memlint"]},
    })  # fmt: skip
    assert apply_edits(CELL_3, fix_all["edit"]["changes"][c3]) == fixed, titles
    # cell 1 has nothing to act on
    assert client.request("textDocument/codeAction", {
        "textDocument": {"uri": c1}, "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
        "context": {"diagnostics": []},
    }) == []  # fmt: skip

    # the editor applies the quick fix: cell 3's version 2 has no finding
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": notebook.as_uri(), "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": c3, "version": 2}, "changes": [{"text": fixed}]}]}},
    })  # fmt: skip
    published(client, c3, [], version=2)

    # a cell added at the end with the old loop: its finding needs cell 1's `total = 0.0`
    c4 = cell_uri(notebook, "W3")
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": notebook.as_uri(), "version": 3},
        "change": {"cells": {"structure": {
            "array": {"start": 3, "deleteCount": 0, "cells": [{"kind": CODE, "document": c4}]},
            "didOpen": [cell_document(c4, CELL_3)],
        }}},
    })  # fmt: skip
    (added,) = published(client, c4, ["ML001"], version=1)
    assert added["range"]["start"] == {"line": 2, "character": 4}

    # cell 1 removed: `total` is no longer known to start as a number, cell 4's finding goes, and the
    # removed cell gets an empty publish
    client.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": notebook.as_uri(), "version": 4},
        "change": {"cells": {"structure": {
            "array": {"start": 0, "deleteCount": 1}, "didClose": [{"uri": c1}],
        }}},
    })  # fmt: skip
    published(client, c4, [], version=1)
    published(client, c1, [], version=None)  # the removed cell is cleared

    # saved: linted again at once
    client.notifications.clear()
    client.notify("notebookDocument/didSave", {"notebookDocument": {"uri": notebook.as_uri()}})
    for uri in (c2, c3, c4):
        published(client, uri, [])

    # closed: every cell gets an empty publish
    client.notify("notebookDocument/didClose", {
        "notebookDocument": {"uri": notebook.as_uri()}, "cellTextDocuments": [{"uri": c} for c in (c2, c3, c4)],
    })  # fmt: skip
    for uri in (c2, c3, c4):
        published(client, uri, [], version=None)
    assert client.shutdown() == 0


def test_closing_clears_findings_and_magics_keep_their_cells(session):
    client, root, _ = session
    notebook = root / "magics.ipynb"
    c1, c2 = cell_uri(notebook, "A"), cell_uri(notebook, "B")
    client.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": notebook.as_uri(), "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": CODE, "document": c1}, {"kind": CODE, "document": c2}]},
        "cellTextDocuments": [cell_document(c1, "%matplotlib inline\n" + CELL_1), cell_document(c2, "!nvidia-smi\n" + CELL_3)],
    })  # fmt: skip
    (finding,) = published(client, c2, ["ML001"])
    assert finding["range"]["start"] == {"line": 3, "character": 4}
    published(client, c1, [])
    client.notify("notebookDocument/didClose", {
        "notebookDocument": {"uri": notebook.as_uri()}, "cellTextDocuments": [{"uri": c1}, {"uri": c2}],
    })  # fmt: skip
    for uri in (c1, c2):
        published(client, uri, [], version=None)
    assert client.shutdown() == 0


def test_a_fix_that_leaves_its_cell_is_not_offered():
    from memlint.diagnostics import Applicability, Diagnostic, Edit, Fix, Location, Severity
    from memlint.server.notebook_documents import split_by_cell

    def finding(edit: Edit) -> Diagnostic:
        fix = Fix("Accumulate `loss.item()`", Applicability.SAFE, (edit,))
        return Diagnostic("ML001", "accumulated-graph", "m", Severity.WARNING, "nb.ipynb", Location(3, 5), Location(3, 18), fix, cell=2)

    inside = Edit(71, 71, ".item()", Location(3, 18), Location(3, 18))
    # the pipeline maps an edit of another cell into this one's rows, clamped: its offset gives it away
    elsewhere = Edit(-30, -30, "import numpy\n", Location(1, 1), Location(1, 1))
    beyond = Edit(90, 90, "x", Location(5, 1), Location(5, 1))
    cells = [("cell:a", CELL_1), ("cell:b", CELL_3)]
    for edit, kept in ((inside, True), (elsewhere, False), (beyond, False)):
        per_cell = split_by_cell([finding(edit)], cells)
        assert per_cell["cell:a"] == []
        (got,) = per_cell["cell:b"]
        assert (got.fix is not None) is kept and got.location == Location(3, 5)
