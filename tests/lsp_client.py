"""A small Language Server Protocol client over a child process's stdio (JSON-RPC with
Content-Length framing), for the end-to-end tests of `memlint server` and bench/lsp_latency.py."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Optional


NO_ANSWER = object()  # in LspClient.answers: the client never answers that request


class LspClient:
    def __init__(self, command: Optional[list[str]] = None, cwd: Optional[Path] = None, env: Optional[dict] = None) -> None:
        self.process = subprocess.Popen(
            command or [sys.executable, "-m", "memlint", "server"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd, env=env,
        )  # fmt: skip
        self.next_id = 0
        self.messages: "queue.Queue[dict]" = queue.Queue()
        self.responses: dict[int, dict] = {}
        self.notifications: list[dict] = []
        self.server_requests: list[dict] = []  # requests the server sent (answered with null)
        # What the client answers to a request of the server, by method (NO_ANSWER: nothing); the
        # default answers window/showDocument with success and anything else with null.
        self.answers: dict[str, Any] = {"window/showDocument": {"success": True}}
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            headers = {}
            while True:
                line = stream.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.decode("ascii").partition(":")
                headers[name.strip().lower()] = value.strip()
            body = stream.read(int(headers["content-length"]))
            self.messages.put(json.loads(body))

    def _send(self, message: dict) -> None:
        body = json.dumps(message).encode("utf-8")
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        self.next_id += 1
        ident = self.next_id
        self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while ident not in self.responses:
            self._pump(deadline)
        response = self.responses.pop(ident)
        if "error" in response:
            raise RuntimeError(f"{method}: {response['error']}")
        return response.get("result")

    def wait_for(self, method: str, predicate=lambda params: True, timeout: float = 60) -> dict:
        """The params of the first notification `method` (from now on or already received) that matches."""
        deadline = time.monotonic() + timeout
        while True:
            for index, note in enumerate(self.notifications):
                if note["method"] == method and predicate(note["params"]):
                    return self.notifications.pop(index)["params"]
            self._pump(deadline)

    def _pump(self, deadline: float) -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            stderr = self.process.stderr.read1(65536).decode(errors="replace") if self.process.poll() is not None else ""
            raise TimeoutError(f"no answer from the server in time {stderr}")
        try:
            message = self.messages.get(timeout=remaining)
        except queue.Empty:
            return
        if "id" in message and "method" not in message:
            self.responses[message["id"]] = message
        elif "method" in message and "id" in message:  # a request from the server (e.g. registration)
            self.server_requests.append(message)
            result = self.answers.get(message["method"])
            if result is not NO_ANSWER:
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
        else:
            self.notifications.append(message)

    def initialize(self, root: Path, options: Any = None, capabilities: Optional[dict] = None) -> dict:
        """`options`: the initializationOptions (the editor's settings for the server); `capabilities`:
        the client's (by default it can show documents, as editors can)."""
        if capabilities is None:
            capabilities = {"window": {"showDocument": {"support": True}}}
        params = {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities, "initializationOptions": options}
        result = self.request("initialize", params)
        self.notify("initialized", {})
        return result

    def shutdown(self) -> int:
        self.request("shutdown", None)
        self.notify("exit", None)
        try:
            return self.process.wait(timeout=30)
        finally:
            for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
                if stream is not None:
                    stream.close()


def apply_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (positions in UTF-16 code units) to a text, last first."""
    lines = text.splitlines(keepends=True)

    def offset(position: dict) -> int:
        line, character = position["line"], position["character"]
        if line >= len(lines):
            return len(text)
        before = sum(len(item) for item in lines[:line])
        units = lines[line].encode("utf-16-le")[: character * 2].decode("utf-16-le")
        return before + len(units)

    for edit in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        start, end = offset(edit["range"]["start"]), offset(edit["range"]["end"])
        text = text[:start] + edit["newText"] + text[end:]
        lines = text.splitlines(keepends=True)
    return text
