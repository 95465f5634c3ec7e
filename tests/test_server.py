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
    assert any("Accumulate `loss.detach()`" in t for t in titles), titles
    assert any("# noqa: ML001" in t for t in titles), titles
    quick_fix = next(a for a in actions if "loss.detach()" in a["title"])
    assert quick_fix["isPreferred"] is True
    fixed = apply_edits(SOURCE, quick_fix["edit"]["changes"][uri])
    assert "total += loss.detach()" in fixed
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


def test_typing_keeps_the_findings_a_whole_analysis_gives(session):
    """Each open document is re-parsed incrementally and its fixes are computed when asked for
    (docs/editors.md): after every change, sent as an editor sends it (a range and its new text),
    the published findings are those of `memlint.api.lint_source` on the new text, and a quick fix
    asked for afterwards is its fix."""
    from memlint import api

    client, root = session
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    from lsp_latency import source as training_script

    text = training_script(200, "many")
    path = root / "train.py"
    uri = open_document(client, path, text)
    diagnostics_for(client, uri, version=1)
    lines = text.splitlines(keepends=True)
    middle = next(row for row in range(len(lines) // 2, len(lines)) if lines[row].startswith("        "))
    typing = [(middle, 8, "n = 0\n        "), (middle, 9, " "), (middle, 13, "("), (middle, 15, ")"),  # "n  = (0" does not compile
              (middle, 16, "; n += 1"),
              (None, 0, "\n@torch.no_grad()\ndef extra(model, x):\n    model.eval()\n    return model(x)\n"),
              (3, 0, "# a comment at the top\n"), (0, 0, "import math\n")]  # fmt: skip
    for version, (row, column, typed) in enumerate(typing, start=2):
        position = {"line": text.count("\n") if row is None else row, "character": column}  # None: the end
        client.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": position, "end": position}, "text": typed}],
        })  # fmt: skip
        text = apply_edits(text, [{"range": {"start": position, "end": position}, "newText": typed}])
        published = diagnostics_for(client, uri, version=version)
        expected = api.lint_source(text, str(path))
        assert [(d["code"], d["range"]["start"]["line"] + 1, d["range"]["start"]["character"] + 1, d["message"]) for d in published] == [
            (f.code, f.location.row, f.location.column, f.message) for f in expected
        ]  # fmt: skip
    fixable = [f for f in expected if f.fix is not None]
    assert len(fixable) > 10 and "import math" in text and "def extra" in text
    last = fixable[-1]
    start = {"line": last.location.row - 1, "character": last.location.column - 1}
    actions = client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": start, "end": start}, "context": {"diagnostics": []},
    })  # fmt: skip
    quick_fix = next(action for action in actions if action["title"] == f"memlint: {last.fix.message}")
    fixed = apply_edits(text, quick_fix["edit"]["changes"][uri])
    assert fixed != text
    edits = [{"range": {"start": {"line": e.location.row - 1, "character": e.location.column - 1},
                        "end": {"line": e.end_location.row - 1, "character": e.end_location.column - 1}},
              "newText": e.content} for e in last.fix.edits]  # fmt: skip
    assert fixed == apply_edits(text, edits)
    assert client.shutdown() == 0


def test_the_editors_settings_apply_over_the_configuration(tmp_path):
    """initializationOptions and workspace/didChangeConfiguration act as the command line's options:
    select / ignore over the closest configuration, `configuration` one file for every document; a
    wrong value is shown and left out."""
    write(tmp_path / "pyproject.toml", "[tool.memlint]\n")
    write(tmp_path / "tools" / "memlint.toml", 'ignore = ["ML001"]\n')
    client = LspClient(cwd=tmp_path)
    try:
        client.initialize(tmp_path, options={"memlint": {"ignore": ["ML001"], "unsafeFixes": "yes"}})
        warning = client.wait_for("window/showMessage")
        assert "unsafeFixes" in warning["message"] and warning["type"] == 2
        uri = open_document(client, tmp_path / "train.py", SOURCE)
        assert diagnostics_for(client, uri) == []  # ML001 ignored by the editor

        def published(predicate) -> list[dict]:
            """The findings of the first publish that matches, once those before it are dropped."""
            found = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and predicate(p["diagnostics"]))
            # Publishes queued before it come from older settings (a document's analyses run one at a time).
            client.notifications[:] = [n for n in client.notifications if n["method"] != "textDocument/publishDiagnostics"]
            return found["diagnostics"]

        client.notify("workspace/didChangeConfiguration", {"settings": {"memlint": {"ignore": []}}})
        (finding,) = published(bool)
        assert finding["code"] == "ML001"
        client.notify("workspace/didChangeConfiguration", {"settings": {"memlint": {"configuration": "tools/memlint.toml"}}})
        assert published(lambda found: not found) == []
        client.notify("workspace/didChangeConfiguration", {"settings": {"python": {"analysis": {}}}})  # not memlint's
        assert [d["code"] for d in published(bool)] == ["ML001"]
        assert not [n for n in client.notifications if n["method"] == "window/showMessage" and "python" in n["params"]["message"]]
        assert client.shutdown() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()


def test_the_shapes_clients_send_settings_in(tmp_path):
    from memlint.server.client_settings import ClientSettings, read

    assert read(None, tmp_path) == (ClientSettings(), [])
    assert read({"select": ["ML001"]}, tmp_path) == (ClientSettings(select=("ML001",)), [])
    assert read({"settings": {"memlint": {"ignore": ["ML003"]}}}, tmp_path) == (ClientSettings(ignore=("ML003",)), [])
    assert read({"settings": {"extendSelect": ["ML100"]}}, tmp_path) == (ClientSettings(extend_select=("ML100",)), [])
    settings, problems = read({"memlint": {"configuration": "a/memlint.toml", "selec": ["ML001"]}}, tmp_path)
    assert settings.configuration == tmp_path / "a" / "memlint.toml"
    assert problems == ["unknown setting `selec` (memlint's are configuration, extendSelect, ignore, select, unsafeFixes)"]
    assert read({"pylsp": {"plugins": {}}}, tmp_path) == (ClientSettings(), [])  # another server's
