"""pygls's protocol, keeping nothing per notification once it is handled.

pygls (2.1) files the future of each notification whose handler is a generator or a coroutine under a
fresh id in `_request_futures`, and only a response to a request ever takes an entry out: every
`didChange` left a future, its handler's state and a lock behind (74 -> 293 MB over 75,000 changes,
issue 25). Here each such future leaves the table when it is done. A request's future is left to
pygls, which removes it when it answers. At `shutdown`, the pending requests are cancelled here first
(cancel_pending).
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from pygls.protocol import LanguageServerProtocol


class ReleasingProtocol(LanguageServerProtocol):
    def _handle_notification(self, method_name: str, params: Any) -> None:
        futures = getattr(self, "_request_futures", None)
        if not isinstance(futures, dict):  # another pygls: nothing of this to release
            return super()._handle_notification(method_name, params)
        before = set(futures)
        super()._handle_notification(method_name, params)
        loop = asyncio.get_running_loop()  # notifications are handled on the event loop
        for key in set(futures) - before:
            future = futures[key]

            def forget(key: Any = key, future: object = future) -> None:
                if futures.get(key) is future:
                    del futures[key]

            # From the loop, later: a future may finish in a worker thread, or be cancelled while
            # pygls iterates over the table (at shutdown).
            future.add_done_callback(lambda _, forget=forget: _soon(loop, forget))

    def cancel_pending(self) -> None:
        """Cancel every request pending but the one being handled (for `shutdown`), over a copy of the
        table: a cancelled request's callback takes it out of the table, which pygls's own shutdown
        iterates over, failing with "dictionary changed size during iteration" (issue 29)."""
        futures = getattr(self, "_request_futures", None)
        if not isinstance(futures, dict):
            return
        current = self.msg_id
        for key, future in list(futures.items()):
            if key != current and not future.done():
                future.cancel()


def _soon(loop: asyncio.AbstractEventLoop, callback: Callable[[], None]) -> None:
    try:
        loop.call_soon_threadsafe(callback)
    except RuntimeError:  # the loop has closed: the process is ending, and the table with it
        pass
