"""Memory of `memlint server` over many edits (issue 25: it must not keep anything per change).

    python bench/lsp_memory.py [--changes 20000] [--warmup 2000]

Starts the server as an editor does (`python -m memlint server`, the client of tests/lsp_client.py),
opens a small training script with a finding, and types into it: each change is an incremental edit,
one character typed then removed, so the text stays the same size and anything that grows comes from
the changes themselves. The changes go out without waiting (as fast typing does; the server lints the
newest text when it can). After --warmup changes and again after --changes more, it waits for the
diagnostics of the newest version and reads the server's resident set (VmRSS from /proc, so Linux
only). Prints both and the growth; tests/test_server_memory.py holds it under 10 MB.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from lsp_client import LspClient  # noqa: E402

SOURCE = """\
import torch


def evaluate(model, loader, criterion):
    model.eval()
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        total += loss
    return total
# typing here:
"""


def rss_bytes(pid: int) -> int:
    """The process's resident set size (Linux /proc)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc")


def _type(client: LspClient, uri: str, first_version: int, count: int) -> int:
    """`count` changes, a character typed at the end of the last line and removed again; the version
    of the last one."""
    row = SOURCE.count("\n") - 1
    column = len(SOURCE.splitlines()[row])
    version = first_version
    for index in range(count):
        version += 1
        if index % 2 == 0:
            change = {"range": {"start": {"line": row, "character": column}, "end": {"line": row, "character": column}}, "text": "x"}
        else:
            change = {"range": {"start": {"line": row, "character": column}, "end": {"line": row, "character": column + 1}}, "text": ""}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]})
    return version


def _settled(client: LspClient, uri: str, version: int) -> None:
    """Wait until the server has published for `version` and answered a request after it (so every
    change sent before is handled), dropping the notifications read meanwhile."""
    client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and p.get("version") == version, timeout=300)
    client.request("textDocument/codeAction", {
        "textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
        "context": {"diagnostics": []},
    }, timeout=300)  # fmt: skip
    client.notifications.clear()


def measure(changes: int, warmup: int) -> tuple[int, int]:
    """The server's RSS (bytes) after `warmup` changes and after `changes` more."""
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        path = root / "train.py"
        path.write_text(SOURCE, encoding="utf-8")
        client = LspClient(cwd=root)
        try:
            client.initialize(root)
            uri = path.as_uri()
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 0, "text": SOURCE}})
            version = _type(client, uri, 0, warmup)
            _settled(client, uri, version)
            before = rss_bytes(client.process.pid)
            version = _type(client, uri, version, changes)
            _settled(client, uri, version)
            after = rss_bytes(client.process.pid)
            client.shutdown()
        finally:
            if client.process.poll() is None:
                client.process.kill()
        return before, after


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=20000)
    parser.add_argument("--warmup", type=int, default=2000)
    args = parser.parse_args()
    before, after = measure(args.changes, args.warmup)
    mb = 1 << 20
    print(f"RSS after {args.warmup:,} changes: {before / mb:.1f} MB; after {args.changes:,} more: {after / mb:.1f} MB; "
          f"growth {(after - before) / mb:+.1f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
