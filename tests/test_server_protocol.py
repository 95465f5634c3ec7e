"""`memlint server`'s protocol as a client sees it (issue 29), through a real client process: requests
to the client only where its capabilities allow them and never waited on forever, nothing left in the
temporary directory."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, write
from lsp_client import NO_ANSWER, LspClient

PUBLISH = "textDocument/publishDiagnostics"
SOURCE = EVAL_LOOP.lstrip("\n")
SHOW = {"command": "memlint.showDocumentation", "arguments": ["ML001"]}


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict]:
    """A workspace, and an environment whose temporary directory is the test's own."""
    root, temporary = tmp_path / "ws", tmp_path / "tmp"
    temporary.mkdir()
    write(root / "pyproject.toml", "[tool.memlint]\n")
    import os

    environment = {**os.environ, "TMPDIR": str(temporary), "TEMP": str(temporary), "TMP": str(temporary)}
    environment.pop("MEMLINT_DOCS_URL", None)
    return root, environment


def start(root: Path, environment: dict, capabilities: dict | None = None) -> LspClient:
    client = LspClient(cwd=root, env=environment)
    client.initialize(root, capabilities=capabilities)
    return client


def shown_documents(client: LspClient) -> list[dict]:
    return [r["params"] for r in client.server_requests if r["method"] == "window/showDocument"]


def test_show_document_only_to_a_client_that_can(workspace):
    root, environment = workspace
    client = start(root, environment, capabilities={})
    try:
        assert client.request("workspace/executeCommand", SHOW, timeout=30) is None
        assert shown_documents(client) == []  # not sent: the client did not say it can
        message = client.wait_for("window/showMessage", lambda p: "ML001" in p["message"])
        assert "ML001.md" in message["message"]  # where the page is, instead
        assert client.shutdown() == 0
    finally:
        client.process.kill()


@pytest.mark.parametrize("answer", [NO_ANSWER, None])
def test_a_client_that_never_answers_or_answers_null_keeps_nothing_waiting(workspace, answer):
    root, environment = workspace
    client = start(root, environment)
    client.answers["window/showDocument"] = answer
    try:
        began = time.monotonic()
        assert client.request("workspace/executeCommand", SHOW, timeout=60) is None
        assert time.monotonic() - began < 30
        assert len(shown_documents(client)) == 1
        client.wait_for("window/showMessage", lambda p: "ML001.md" in p["message"])
        # A second request left unanswered while the client shuts down: shutdown still succeeds.
        client.next_id += 1  # sent, not waited for
        client._send({"jsonrpc": "2.0", "id": client.next_id, "method": "workspace/executeCommand", "params": SHOW})
        assert client.shutdown() == 0
    finally:
        client.process.kill()


@pytest.mark.parametrize("how", ["shutdown", "exit only"])
def test_nothing_is_left_in_the_temporary_directory(workspace, how):
    root, environment = workspace
    client = start(root, environment)
    try:
        client.request("workspace/executeCommand", SHOW, timeout=30)
        (shown,) = shown_documents(client)
        assert Path(environment["TMPDIR"]) in Path(shown["uri"].removeprefix("file://")).parents
        if how == "shutdown":
            assert client.shutdown() == 0
        else:
            client.notify("exit", None)
            assert client.process.wait(timeout=60) == 1
        assert list(Path(environment["TMPDIR"]).iterdir()) == []
    finally:
        client.process.kill()


RESOLVING = {"textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}}


def test_code_actions_are_listed_without_edits_and_resolved_when_chosen(workspace):
    from lsp_client import apply_edits

    root, environment = workspace
    client = start(root, environment, capabilities=RESOLVING)
    try:
        uri = (root / "train.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})
        (finding,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri)["diagnostics"]
        at_cursor = {"start": finding["range"]["start"], "end": finding["range"]["start"]}
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": at_cursor, "context": {"diagnostics": [finding]},
        })  # fmt: skip
        quick_fix = next(a for a in actions if "loss.detach()" in a["title"])
        fix_all = next(a for a in actions if a["kind"] == "source.fixAll.memlint")
        # Listed at the cursor: no fix computed, neither the finding's nor the file's.
        assert "edit" not in quick_fix and "edit" not in fix_all and quick_fix["isPreferred"] is True

        resolved = client.request("codeAction/resolve", quick_fix)
        assert resolved["title"] == quick_fix["title"]
        fixed = apply_edits(SOURCE, resolved["edit"]["changes"][uri])
        assert "total += loss.detach()" in fixed
        resolved_all = client.request("codeAction/resolve", fix_all)
        assert apply_edits(SOURCE, resolved_all["edit"]["changes"][uri]) == fixed

        # The document changed since the action was listed: its fix no longer applies to this text.
        changed = "# a new first line\n" + SOURCE
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": changed}]})
        client.wait_for(PUBLISH, lambda p: p["uri"] == uri and p.get("version") == 2)
        assert "edit" not in client.request("codeAction/resolve", quick_fix)
        # Fix-all is about the text as it is now.
        now_all = client.request("codeAction/resolve", fix_all)
        assert apply_edits(changed, now_all["edit"]["changes"][uri]) == "# a new first line\n" + fixed
        assert client.shutdown() == 0
    finally:
        client.process.kill()


def test_the_server_says_it_resolves_code_actions(workspace):
    root, environment = workspace
    client = LspClient(cwd=root, env=environment)
    try:
        result = client.initialize(root, capabilities=RESOLVING)
        assert result["capabilities"]["codeActionProvider"]["resolveProvider"] is True
        assert client.shutdown() == 0
    finally:
        client.process.kill()


def test_hover_shows_the_rule_on_a_suppression_code_and_on_a_finding(workspace):
    root, environment = workspace
    client = start(root, environment)
    try:
        uri = (root / "train.py").as_uri()
        text = SOURCE.replace("print(total)", "print(total)  # noqa: E501, ml001\n# memlint: ignore-file[ML002]")
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        (finding,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri)["diagnostics"]
        lines = text.splitlines()

        def hover(row: int, column: int):
            return client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": row, "character": column}})

        noqa_row = next(n for n, line in enumerate(lines) if "noqa" in line)
        at = lines[noqa_row].index("ml001")
        shown = hover(noqa_row, at + 2)
        assert shown["contents"]["kind"] == "markdown"
        assert shown["contents"]["value"].startswith("# accumulated-graph (ML001)")
        assert shown["range"] == {"start": {"line": noqa_row, "character": at}, "end": {"line": noqa_row, "character": at + 5}}
        assert hover(noqa_row, lines[noqa_row].index("E501") + 1) is None  # another tool's code
        assert hover(noqa_row, 0) is None  # code, not a comment
        ignore_row = noqa_row + 1
        assert "(ML002)" in hover(ignore_row, lines[ignore_row].index("ML002"))["contents"]["value"]
        on_finding = hover(finding["range"]["start"]["line"], finding["range"]["start"]["character"] + 1)
        assert on_finding["contents"]["value"].startswith("# accumulated-graph (ML001)")
        assert on_finding["range"] == finding["range"]
        assert client.shutdown() == 0
    finally:
        client.process.kill()


def test_positions_in_utf8_when_the_client_offers_it(workspace):
    root, environment = workspace
    client = LspClient(cwd=root, env=environment)
    try:
        result = client.initialize(root, capabilities={"general": {"positionEncodings": ["utf-8", "utf-16"]}})
        assert result["capabilities"]["positionEncoding"] == "utf-8"
        uri = (root / "train.py").as_uri()
        prefix = "    _ = 'ö😀'; "  # 1 + 2 UTF-16 units, 2 + 4 UTF-8 bytes
        text = SOURCE.replace("    total += loss", prefix + "total += loss  # memlint: ignore[ML002] ö")
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        (finding,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri)["diagnostics"]
        row = 5
        assert finding["range"]["start"] == {"line": row, "character": len(prefix.encode("utf-8"))}
        assert finding["range"]["end"] == {"line": row, "character": len((prefix + "total += loss").encode("utf-8"))}

        # An edit from the client in UTF-8 positions: `_ = ...` replaced, the finding moves left.
        line = text.splitlines()[row]
        cut = len("    _ = 'ö😀'".encode("utf-8"))
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{
            "range": {"start": {"line": row, "character": 4}, "end": {"line": row, "character": cut}}, "text": "_ = 'é'",
        }]})  # fmt: skip
        (moved,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri and p.get("version") == 2)["diagnostics"]
        new_prefix = "    _ = 'é'; "
        assert moved["range"]["start"] == {"line": row, "character": len(new_prefix.encode("utf-8"))}

        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": moved["range"], "context": {"diagnostics": [moved]},
        })  # fmt: skip
        (edit,) = next(a for a in actions if "loss.detach()" in a["title"])["edit"]["changes"][uri]
        current = (new_prefix + "total += loss  # memlint: ignore[ML002] ö").encode("utf-8")
        start, end = edit["range"]["start"]["character"], edit["range"]["end"]["character"]
        fixed = current[:start] + edit["newText"].encode("utf-8") + current[end:]
        assert fixed.decode("utf-8") == new_prefix + "total += loss.detach()  # memlint: ignore[ML002] ö"

        at = len(current.decode("utf-8")[: current.decode("utf-8").index("ML002")].encode("utf-8"))
        shown = client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": row, "character": at + 1}})
        assert "(ML002)" in shown["contents"]["value"]
        assert shown["range"]["start"] == {"line": row, "character": at}
        assert client.shutdown() == 0
    finally:
        client.process.kill()


PULLING = {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}}


def test_a_client_that_pulls_diagnostics_gets_them_pulled_not_published(workspace):
    root, environment = workspace
    client = start(root, environment, capabilities=PULLING)
    try:
        uri = (root / "train.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": SOURCE}})

        def pull(previous: str | None = None) -> dict:
            return client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": previous})

        first = pull()  # waits for the analysis of version 1
        assert first["kind"] == "full" and [d["code"] for d in first["items"]] == ["ML001"]
        assert first["items"][0]["range"]["start"] == {"line": 5, "character": 4}
        assert pull(first["resultId"]) == {"kind": "unchanged", "resultId": first["resultId"]}

        fixed = SOURCE.replace("total += loss", "total += loss.item()")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}]})
        second = pull(first["resultId"])
        assert second["kind"] == "full" and second["items"] == [] and second["resultId"] != first["resultId"]

        everything = client.request("workspace/diagnostic", {"previousResultIds": []})
        assert [(item["uri"], item["kind"], item["items"]) for item in everything["items"]] == [(uri, "full", [])]
        held = client.request("workspace/diagnostic", {"previousResultIds": [{"uri": uri, "value": second["resultId"]}]})
        assert [(item["uri"], item["kind"]) for item in held["items"]] == [(uri, "unchanged")]

        # The configuration changes the findings of the version the client holds: it is asked to pull again.
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": SOURCE}]})
        assert [d["code"] for d in pull()["items"]] == ["ML001"]
        write(root / "pyproject.toml", '[tool.memlint]\nignore = ["ML001"]\n')
        client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": (root / "pyproject.toml").as_uri(), "type": 2}]})
        deadline = time.monotonic() + 30
        while not any(r["method"] == "workspace/diagnostic/refresh" for r in client.server_requests):
            assert time.monotonic() < deadline, "no workspace/diagnostic/refresh"
            client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
            time.sleep(0.05)
        assert pull()["items"] == []

        assert not [n for n in client.notifications if n["method"] == PUBLISH]  # nothing was pushed
        assert client.shutdown() == 0
    finally:
        client.process.kill()


def test_the_server_offers_pull_diagnostics(workspace):
    root, environment = workspace
    client = LspClient(cwd=root, env=environment)
    try:
        provider = client.initialize(root, capabilities=PULLING)["capabilities"]["diagnosticProvider"]
        assert provider["interFileDependencies"] is True and provider["workspaceDiagnostics"] is True
        assert client.shutdown() == 0
    finally:
        client.process.kill()


def test_a_notebooks_cells_are_pulled_too(workspace):
    root, environment = workspace
    client = start(root, environment, capabilities={**PULLING, "notebookDocument": {"synchronization": {}}})
    try:
        notebook = root / "eval.ipynb"
        first, second = (f"vscode-notebook-cell:{notebook.as_posix()}#{name}" for name in ("W0", "W1"))
        cells = [("import torch\ntotal = 0.0", first), ("for x, y in loader:\n    loss = criterion(model(x), y)\n    total += loss", second)]
        client.notify("notebookDocument/didOpen", {
            "notebookDocument": {"uri": notebook.as_uri(), "notebookType": "jupyter-notebook", "version": 1,
                                 "cells": [{"kind": 2, "document": uri} for _, uri in cells]},
            "cellTextDocuments": [{"uri": uri, "languageId": "python", "version": 1, "text": text} for text, uri in cells],
        })  # fmt: skip
        pulled = client.request("textDocument/diagnostic", {"textDocument": {"uri": second}})
        assert [(d["code"], d["range"]["start"]) for d in pulled["items"]] == [("ML001", {"line": 2, "character": 4})]
        assert client.request("textDocument/diagnostic", {"textDocument": {"uri": first}})["items"] == []
        assert not [n for n in client.notifications if n["method"] == PUBLISH]
        assert client.shutdown() == 0
    finally:
        client.process.kill()
