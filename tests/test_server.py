"""`memlint server` end to end: a real client process talks LSP over stdio to the server (initialize,
open, diagnostics, code actions applied, change, save, shutdown), as an editor does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, write
from lsp_client import LspClient, apply_edits

SOURCE = EVAL_LOOP.lstrip("\n")  # `total += loss` on line 6 (LSP line 5)


@pytest.fixture
def session(tmp_path: Path):
    write(tmp_path / "pyproject.toml", "[tool.memlint]\n")
    client = LspClient(cwd=tmp_path)
    client.initialize(tmp_path)
    yield client, tmp_path
    if client.process.poll() is None:
        client.process.kill()


def open_document(client: LspClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    path.write_text(text, encoding="utf-8")
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    return uri


def diagnostics_for(client: LspClient, uri: str, version: int | None = None) -> list[dict]:
    params = client.wait_for(
        "textDocument/publishDiagnostics",
        lambda p: p["uri"] == uri and (version is None or p.get("version") == version),
    )
    return params["diagnostics"]


def test_diagnostics_code_actions_and_fix_all(session):
    client, root = session
    uri = open_document(client, root / "train.py", SOURCE)
    (finding,) = diagnostics_for(client, uri)
    assert finding["code"] == "ML001" and finding["source"] == "memlint"
    assert finding["range"]["start"] == {"line": 5, "character": 4}
    assert finding["severity"] == 2  # warning

    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": finding["range"], "context": {"diagnostics": [finding]},
    })  # fmt: skip
    titles = [action["title"] for action in actions]
    assert any("Accumulate `loss.item()`" in t for t in titles), titles
    assert any("# noqa: ML001" in t for t in titles), titles
    quick_fix = next(a for a in actions if "loss.item()" in a["title"])
    assert quick_fix["isPreferred"] is True
    fixed = apply_edits(SOURCE, quick_fix["edit"]["changes"][uri])
    assert "total += loss.item()" in fixed
    compile(fixed, "train.py", "exec")

    suppress = next(a for a in actions if "noqa" in a["title"])
    assert "total += loss  # noqa: ML001" in apply_edits(SOURCE, suppress["edit"]["changes"][uri])

    # fix-on-save: source.fixAll.memlint
    (fix_all,) = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": finding["range"],
        "context": {"diagnostics": [], "only": ["source.fixAll.memlint"]},
    })  # fmt: skip
    assert apply_edits(SOURCE, fix_all["edit"]["changes"][uri]) == fixed

    # the editor applies it: a change, then diagnostics for the new version are empty
    client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": fixed}],
    })  # fmt: skip
    assert diagnostics_for(client, uri, version=2) == []
    assert client.shutdown() == 0


def test_related_places_and_the_rules_documentation(session):
    client, root = session
    uri = open_document(client, root / "train.py", SOURCE)
    (finding,) = diagnostics_for(client, uri)
    # ML001's related information: the loop (line 4, `loader`) and the read after it (`print(total)`).
    related = [(r["location"]["uri"], r["location"]["range"]["start"], r["message"]) for r in finding["relatedInformation"]]
    assert related == [
        (uri, {"line": 3, "character": 12}, "the loop: each iteration's graph stays reachable from the accumulator"),
        (uri, {"line": 6, "character": 6}, "`total` is read here, after the loop"),
    ]
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": finding["range"], "context": {"diagnostics": [finding]},
    })  # fmt: skip
    docs = next(a for a in actions if "documentation" in a["title"])
    command = docs["command"]
    client.request("workspace/executeCommand", {"command": command["command"], "arguments": command["arguments"]})
    (shown,) = [r["params"] for r in client.server_requests if r["method"] == "window/showDocument"]
    assert shown["uri"].startswith("file:") and shown["uri"].endswith("/ML001.md")
    page = Path(shown["uri"].removeprefix("file://")).read_text(encoding="utf-8")
    assert page.startswith("# accumulated-graph (ML001)") and "## Why is this bad?" in page
    assert client.shutdown() == 0


def test_configuration_is_read_again_when_it_is_saved(session):
    client, root = session
    uri = open_document(client, root / "train.py", SOURCE)
    assert [d["code"] for d in diagnostics_for(client, uri)] == ["ML001"]
    config = root / "pyproject.toml"
    config.write_text('[tool.memlint]\nignore = ["ML001"]\n', encoding="utf-8")
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": config.as_uri(), "type": 2}]})
    # Publishes from before the change may still be queued: wait for the one without the finding.
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and p["diagnostics"] == [])
    assert client.shutdown() == 0


def test_without_the_extra_the_command_says_what_to_install(tmp_path):
    # pygls made unimportable: the command must exit 2 with the install hint, not a traceback
    blocker = tmp_path / "pygls"
    blocker.mkdir()
    (blocker / "__init__.py").write_text("raise ImportError('blocked for the test', name='pygls')\n")
    done = subprocess.run(
        [sys.executable, "-m", "memlint", "server"], cwd=tmp_path, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pip install 'torch-memlint[server]'" in done.stderr and "Traceback" not in done.stderr
