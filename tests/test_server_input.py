"""`memlint server` on what editors may send it (issue 25), through a real client process: documents
in other languages, a document over `max-file-size`, a lone UTF-16 surrogate, `exit` without
`shutdown`, and tens of thousands of changes (nothing kept per change)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from conftest import EVAL_LOOP, write
from lsp_client import LspClient

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import lsp_memory  # noqa: E402

PUBLISH = "textDocument/publishDiagnostics"
SOURCE = EVAL_LOOP.lstrip("\n")  # `total += loss` on line 6 (LSP line 5)
HAS_PROC = os.path.exists(f"/proc/{os.getpid()}/status")


@pytest.fixture
def session(tmp_path: Path):
    write(tmp_path / "pyproject.toml", '[tool.memlint]\nmax-file-size = "100KB"\n')
    client = LspClient(cwd=tmp_path)
    client.initialize(tmp_path)
    yield client, tmp_path
    if client.process.poll() is None:
        client.process.kill()


def open_document(client: LspClient, uri: str, text: str, language: str = "python") -> None:
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}})


def code_actions(client: LspClient, uri: str, range_: dict) -> list[dict]:
    return client.request("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": range_, "context": {"diagnostics": []}})


def peak_rss(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:"))


def test_documents_in_other_languages_are_not_linted(session):
    client, root = session
    # Markdown with Python in it (ML000 at its first line if it were read as Python), a .py file the
    # editor shows as plain text: neither is linted, so nothing is published for them.
    notes, plain = (root / "notes.md").as_uri(), (root / "data.py").as_uri()
    open_document(client, notes, "# Notes\n\n```python\nimport torch\ntotal += loss\n```\n", "markdown")
    open_document(client, plain, SOURCE, "plaintext")
    train = (root / "train.py").as_uri()
    open_document(client, train, SOURCE)
    assert [d["code"] for d in client.wait_for(PUBLISH, lambda p: p["uri"] == train)["diagnostics"]] == ["ML001"]
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": 6, "character": 0}}
    assert code_actions(client, notes, whole) == code_actions(client, plain, whole) == []
    # The lints of the three documents start together: give the others as long again to show up.
    for uri in (notes, plain):
        with pytest.raises(TimeoutError):
            client.wait_for(PUBLISH, lambda p, uri=uri: p["uri"] == uri, timeout=5)
    assert client.shutdown() == 0


@pytest.mark.skipif(not HAS_PROC, reason="reads the server's peak memory from /proc")
def test_a_document_over_max_file_size_is_refused_before_it_is_parsed(session):
    client, root = session
    uri = (root / "huge.py").as_uri()
    huge = "import torch\n" + "".join(f"value_{n} = torch.zeros({n})\n" for n in range(40_000))  # about 1.2 MB
    before = peak_rss(client.process.pid)
    open_document(client, uri, huge)
    (finding,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri, timeout=120)["diagnostics"]
    assert finding["code"] == "ML901" and "max-file-size" in finding["message"], finding  # not analysed, as `memlint check` says
    # Parsing 1.2 MB of Python (CPython's AST, then libcst's tree) takes hundreds of megabytes; the
    # text itself, with the JSON message and pygls's copy of it, takes a few.
    grown = peak_rss(client.process.pid) - before
    assert grown < 60 * 2**20, f"the server's peak memory grew by {grown / 2**20:.0f} MB"
    assert client.shutdown() == 0


def test_a_lone_surrogate_is_linted_around(session):
    client, root = session
    uri = (root / "train.py").as_uri()
    # An editor may send a lone UTF-16 surrogate (JSON "\ud800"): it counts one code unit, as U+FFFD.
    text = "# \ud800 half a character\n" + SOURCE.replace("    total += loss", "    _ = '\ud800'; total += loss")
    open_document(client, uri, text)
    (finding,) = client.wait_for(PUBLISH, lambda p: p["uri"] == uri)["diagnostics"]
    assert finding["code"] == "ML001"
    column = len("    _ = '\ud800'; ")  # one UTF-16 code unit per character here
    assert finding["range"]["start"] == {"line": 6, "character": column}

    titles = {action["title"]: action for action in code_actions(client, uri, finding["range"])}
    fix = next(action for title, action in titles.items() if "loss.detach()" in title)
    (edit,) = fix["edit"]["changes"][uri]
    assert "\ufffd" not in edit["newText"]
    # Applied by the editor (each character of line 7 is one UTF-16 code unit): the finding changes,
    # the surrogate stays as it was.
    line = text.splitlines(keepends=True)[6]
    start, end = edit["range"]["start"], edit["range"]["end"]
    assert start["line"] == end["line"] == 6
    fixed = line[: start["character"]] + edit["newText"] + line[end["character"] :]
    assert fixed == "    _ = '\ud800'; total += loss.detach()\n"
    # An action that would write U+FFFD in place of the editor's surrogate is not offered (the noqa
    # comment rewrites line 7, fix-all the whole text).
    for action in titles.values():
        for edits in (action.get("edit") or {}).get("changes", {}).values():
            assert all("\ufffd" not in e["newText"] for e in edits), action["title"]
    assert any("show the documentation" in title for title in titles)
    assert client.shutdown() == 0


def test_exit_without_shutdown_exits_1(tmp_path: Path):
    client = LspClient(cwd=tmp_path)
    client.initialize(tmp_path)
    client.notify("exit", None)
    assert client.process.wait(timeout=60) == 1  # LSP: 0 only after a shutdown request
    second = LspClient(cwd=tmp_path)
    second.initialize(tmp_path)
    assert second.shutdown() == 0


@pytest.mark.slow
@pytest.mark.skipif(not HAS_PROC, reason="reads the server's memory from /proc")
def test_twenty_thousand_changes_keep_the_memory_flat():
    # bench/lsp_memory.py: a character typed and removed 20,000 times, after 2,000 to warm up. Before
    # the fix each change left its future behind in pygls (about 3 KB each: +58 MB here).
    before, after = lsp_memory.measure(changes=20_000, warmup=2_000)
    assert after - before < 10 * 2**20, f"grew {(after - before) / 2**20:.1f} MB over 20,000 changes"
