"""`memlint server` judges an open document with the facts of the other files of the workspace (issue
19.4), as `memlint check` over the project does: summarised once in the background, kept up to date
when another file changes on disk, with the editor's text standing in for the open file."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import write
from lsp_client import LspClient
from test_project_pass import EVALUATE  # evaluate(): fine when its only caller uses no_grad

CALLER = """
import torch
from evaluation import evaluate

def main(model, val_loader):
    with torch.no_grad():
        return evaluate(model, val_loader)
"""


@pytest.fixture
def workspace(tmp_path: Path):
    write(tmp_path / "pyproject.toml", "[tool.memlint]\n")
    write(tmp_path / "evaluation.py", EVALUATE)
    write(tmp_path / "main.py", CALLER)
    client = LspClient(cwd=tmp_path)
    client.initialize(tmp_path)
    yield client, tmp_path
    if client.process.poll() is None:
        client.process.kill()


def codes(params: dict) -> list[str]:
    return [d["code"] for d in params["diagnostics"]]


def test_another_files_facts_decide_a_finding_and_follow_changes_on_disk(workspace):
    client, root = workspace
    evaluation = root / "evaluation.py"
    uri = evaluation.as_uri()
    text = evaluation.read_text()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    # Alone, evaluation.py shows ML002 (evaluate runs with gradients on); once the workspace is
    # summarised, main.py's call under no_grad clears it: a publish without ML002 must come.
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "ML002" not in codes(p), timeout=60)

    # main.py changes on disk to call evaluate with gradients on: the finding comes back.
    (root / "main.py").write_text(CALLER.replace("    with torch.no_grad():\n        return", "    return"), encoding="utf-8")
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": (root / "main.py").as_uri(), "type": 2}]})
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "ML002" in codes(p), timeout=60)
    assert client.shutdown() == 0


def test_the_editors_text_stands_in_for_the_file_on_disk(workspace):
    client, root = workspace
    main = root / "main.py"
    uri = main.as_uri()
    # The editor holds a version of main.py (unsaved) with an evaluation loop of its own: judged on
    # that text, with evaluation.py's facts from disk.
    text = CALLER + "\n\ndef check(model, loader):\n    model.eval()\n    for x, y in loader:\n        print(model(x))\n"
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    params = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and p["diagnostics"], timeout=60)
    assert [(d["code"], d["range"]["start"]["line"]) for d in params["diagnostics"]] == [("ML002", 12)]
    assert client.shutdown() == 0


def test_an_edit_in_one_open_document_reaches_another(workspace):
    """Typing in main.py (unsaved) changes what evaluation.py shows, once the project is resolved
    again with main.py's new text; closing main.py without saving brings the file on disk back."""
    client, root = workspace
    evaluation, main = root / "evaluation.py", root / "main.py"
    uri = evaluation.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": evaluation.read_text()}})
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "ML002" not in codes(p), timeout=60)
    # Publishes come in order: those received before that one (a lint before the workspace was
    # summarised shows ML002) are stale; drop them so that the waits below see only new ones.
    client.notifications[:] = [n for n in client.notifications if n.get("params", {}).get("uri") != uri]
    main_uri = main.as_uri()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": main_uri, "languageId": "python", "version": 1, "text": main.read_text()}})
    with_grad = CALLER.replace("    with torch.no_grad():\n        return", "    return")
    client.notify("textDocument/didChange", {"textDocument": {"uri": main_uri, "version": 2}, "contentChanges": [{"text": with_grad}]})
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "ML002" in codes(p), timeout=60)
    client.notifications[:] = [n for n in client.notifications if n.get("params", {}).get("uri") != uri]
    client.notify("textDocument/didClose", {"textDocument": {"uri": main_uri}})
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "ML002" not in codes(p), timeout=60)
    assert client.shutdown() == 0


def test_the_workspace_facts_count_notebooks_as_check_does(tmp_path: Path):
    """A module only a CUDA notebook (beside a CPU-only script) imports is judged on the GPU by the
    server as by `memlint check` (test_project_pass: the notebook's imports count as importers)."""
    from test_project_pass import PPO_AGENT, _notebook

    from memlint.config import Settings
    from memlint.prescreen import Source
    from memlint.server.workspace import WorkspaceFacts

    write(tmp_path / "agent.py", PPO_AGENT)
    write(tmp_path / "plot.py", "from agent import Agent\n\nAgent().update(batches)\n")
    (tmp_path / "run.ipynb").write_text(_notebook("import torch\nfrom agent import Agent\n", "torch.set_default_device('cuda')\n"))
    facts = WorkspaceFacts()
    assert facts.load(tmp_path, Settings(enabled=frozenset({"ML017"}))) == 3
    view, _ = facts.view(Source((tmp_path / "agent.py").read_text()), str(tmp_path / "agent.py"))
    assert view is not None and not view.host_importers
