"""Keystroke-to-diagnostics latency of `memlint server` on a 1,000-line file with findings (issue 19:
under 150 ms on a warm server).

    python bench/lsp_latency.py [--lines 1000] [--changes 30] [--findings many|few] [--at end|middle]
    python bench/lsp_latency.py --workspace bench/corpora/timm-1.0.31 --file timm/models/resnet.py

Starts the server as an editor does (`python -m memlint server`, LSP over stdio, the client of
tests/lsp_client.py), opens a generated training script of about --lines lines with findings, waits
for the first diagnostics (cold), then sends --changes full-text changes one at a time, each a new
version with one character typed, and times each from the moment the change is written until the
diagnostics for that version arrive. Prints the cold time and the median, 90th percentile and worst
of the warm ones. --at end types a comment and newlines at the end of the file; --at middle types a
statement on a new line inside the block found at the middle of the file, a character at a time
(`seen = 0; seen += 1`: some of the texts on the way do not compile).

Then --code-actions requests for the code actions at the cursor, put at the first finding's start (an
editor asks at every cursor move), each timed until its answer: the client resolves edits
(codeAction/resolve), so no fix is computed for the list; --no-resolve declares a client that does
not, which gets every edit in the list (fix-all of the whole file included).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from lsp_client import LspClient  # noqa: E402

BLOCK = '''
def evaluate_{n}(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        total += loss
    return total


class Block{n}(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64))

    def forward(self, x):
        return self.net(x)
'''


# The same program written the way memlint asks for (no findings), for --findings few: a training
# script of correct code with one mistake, the common case in an editor.
CLEAN_BLOCK = '''

@torch.no_grad()
def evaluate_{n}(model, loader):
    model.eval()
    total = 0.0
    for x, y in loader:
        total += criterion(model(x), y).item()
    return total / max(len(loader), 1)


def train_{n}(model, loader, optimizer):
    model.train()
    running = 0.0
    for x, y in loader:
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running += loss.item()
    return running
'''


def source(lines: int, findings: str = "many") -> str:
    parts = ["import torch\nfrom torch import nn\n\ncriterion = nn.MSELoss()\n"]
    if findings == "few":
        parts.append(BLOCK.format(n="mistake"))
    n = 0
    while sum(part.count("\n") for part in parts) < lines:
        parts.append((BLOCK if findings == "many" else CLEAN_BLOCK).format(n=n))
        n += 1
    return "".join(parts)


def keystrokes(text: str, at: str):
    """The texts after each keystroke: at the end of the file, or on a new line in the middle."""
    if at == "end":
        while True:
            text += "#"
            yield text
            text += "\n"
            yield text
    lines = text.splitlines(keepends=True)
    row = len(lines) // 2
    while not lines[row].startswith((" ", "\t")) or not lines[row].strip():  # a line inside a block
        row += 1
    indent = lines[row][: len(lines[row]) - len(lines[row].lstrip())]
    before, after = "".join(lines[:row]) + indent, "\n" + "".join(lines[row:])
    typed = ""
    while True:
        for character in "seen = 0; seen += 1; seen *= 2; " * 10:
            typed += character
            yield before + typed + after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--changes", type=int, default=30)
    parser.add_argument("--findings", choices=["many", "few"], default="many",
                        help="many: every block has findings (177 in 1,000 lines); few: correct code with one mistake")
    parser.add_argument("--workspace", type=Path, help="type into --file of this existing project instead (its other "
                        "files summarised by the server first); nothing is written there")
    parser.add_argument("--file", type=Path, help="with --workspace: the file to type into, relative to it")
    parser.add_argument("--at", choices=["end", "middle"], default="end", help="where the keystrokes go")
    parser.add_argument("--code-actions", type=int, default=10, help="code-action requests at the cursor to time")
    parser.add_argument("--no-resolve", action="store_true", help="a client without codeAction/resolve")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.workspace is not None:
            root = args.workspace.resolve()
            path = root / args.file
            text = path.read_text(encoding="utf-8")
        else:
            root = Path(scratch)
            path = root / "train.py"
            text = source(args.lines, args.findings)
            path.write_text(text, encoding="utf-8")
        client = LspClient(cwd=root)
        capabilities = {"window": {"showDocument": {"support": True}}}
        if not args.no_resolve:
            capabilities["textDocument"] = {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}
        client.initialize(root, capabilities=capabilities)
        uri = path.as_uri()
        started = time.perf_counter()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
        first = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri)
        cold = time.perf_counter() - started
        if args.workspace is not None:  # the server lints the open document again once the workspace is summarised
            first = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, timeout=600)
        warm = []
        published = first
        typing = keystrokes(text, args.at)
        for version in range(2, args.changes + 2):
            text = next(typing)
            started = time.perf_counter()
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
            published = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and p.get("version") == version)
            warm.append(time.perf_counter() - started)
        actions = []
        if published["diagnostics"]:
            cursor = published["diagnostics"][0]["range"]["start"]
            for _ in range(args.code_actions):
                started = time.perf_counter()
                client.request("textDocument/codeAction", {
                    "textDocument": {"uri": uri}, "range": {"start": cursor, "end": cursor}, "context": {"diagnostics": []},
                })  # fmt: skip
                actions.append(time.perf_counter() - started)
        client.shutdown()
    warm.sort()
    print(f"{text.count(chr(10))} lines, {len(first['diagnostics'])} findings")
    print(f"cold (open to first diagnostics): {cold * 1000:.0f} ms")
    print(f"warm, {len(warm)} keystrokes: median {statistics.median(warm) * 1000:.0f} ms, "
          f"p90 {warm[int(len(warm) * 0.9) - 1] * 1000:.0f} ms, worst {warm[-1] * 1000:.0f} ms")
    if actions:
        actions.sort()
        kind = "without codeAction/resolve" if args.no_resolve else "resolving edits when chosen"
        print(f"code actions at the cursor, {len(actions)} requests ({kind}): median {statistics.median(actions) * 1000:.0f} ms, "
              f"worst {actions[-1] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
