"""The diagnostics last computed for each document, for clients that pull them (LSP 3.17
`textDocument/diagnostic`, `workspace/diagnostic`) rather than have them published.

A pull for a version not analysed yet waits for its analysis (which runs in a worker thread, see
memlint/server/app.py) for up to a timeout. Each report has a result id, new whenever what it reports
changes, so a client that sends back the id of what it holds hears "unchanged".
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Optional

from lsprotocol import types


@dataclass(frozen=True)
class Report:
    result_id: str
    version: int
    items: list[types.Diagnostic]


class Reports:
    def __init__(self) -> None:
        self._reports: dict[str, Report] = {}
        self._waiting: dict[str, list[tuple[int, asyncio.Future]]] = {}  # uri -> (version wanted, waiter)
        self._ids = itertools.count(1)

    def store(self, uri: str, version: int, items: list[types.Diagnostic]) -> bool:
        """Keep the document's diagnostics; whether they differ from those kept for the same version
        (the project's facts or the settings changed: a pulling client must be told to pull again)."""
        previous = self._reports.get(uri)
        same_version = previous is not None and previous.version == version
        if not (same_version and previous.items == items):  # the same again keeps its id: "unchanged"
            self._reports[uri] = Report(str(next(self._ids)), version, items)
        self._wake(uri)
        return same_version and previous.items != items

    def forget(self, uri: str) -> None:
        """The document closed: nothing to report, and nobody waits for it any longer."""
        self._reports.pop(uri, None)
        self._wake(uri)

    async def current(self, uri: str, version: int, timeout: float) -> Optional[Report]:
        """The report for `version` of the document (or a later one), once its analysis ends; after
        `timeout` seconds, or when the document closes, what there is."""
        report = self._reports.get(uri)
        if report is not None and report.version >= version:
            return report
        waiter = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(uri, []).append((version, waiter))
        try:
            await asyncio.wait_for(waiter, timeout)
        except asyncio.TimeoutError:
            pass
        finally:
            self._waiting[uri] = [entry for entry in self._waiting.get(uri, []) if entry[1] is not waiter]
            if not self._waiting[uri]:
                del self._waiting[uri]
        return self._reports.get(uri)

    def _wake(self, uri: str) -> None:
        report = self._reports.get(uri)
        for wanted, waiter in self._waiting.get(uri, []):
            if (report is None or report.version >= wanted) and not waiter.done():
                waiter.set_result(None)
