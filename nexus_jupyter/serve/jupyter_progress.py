"""A REST call's progress, streamed in the call's own answer.

``POST /nexus/api/tools/{name}/call`` with ``"progress": true`` in its body asks for the
tool's progress reports (``ctx.progress``, a kernel's or an MCP server's
``notifications/progress``). Until the first report the answer is the plain one (a JSON
result, or 4xx with its error body: invalid arguments and approval come before the tool runs).
From the first report on, the answer is ``200`` with ``application/x-ndjson``: one JSON
object a line, ``{"progress": {"current", "total", "message"}}`` for each report, and last
``{"result": <the result>}`` or ``{"error": <kind>, "message": ..., "status": <the HTTP
status it would have had>, ...}`` (``"internal"`` and 500 when the server itself failed).

Why the call's own answer rather than the events socket: the reports reach only the one
who asked, need no call id, and stop with the call (the client closing the request still
cancels it). Reports that come faster than the client reads are coalesced: a report is
written only once the one before it has reached the client's connection (its flush is done),
and meanwhile only the newest report is kept; so a tool that reports in a tight loop to a
client that reads slowly holds one report in the server, not a growing buffer of them.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

from tornado import web

__all__ = ["NDJSON", "ProgressStream"]

NDJSON = "application/x-ndjson"


class ProgressStream:
    """Writes a call's progress reports to ``handler``'s answer as they come (from any
    thread), then its end."""

    def __init__(self, handler: web.RequestHandler) -> None:
        self.handler = handler
        self.loop = asyncio.get_running_loop()  # the handler's: tornado writes only there
        #: the answer is a stream: its status and headers went out with the first report
        self.started = False
        #: the call is over (answered, or its client went): no more reports
        self.ended = False
        self._lock = threading.Lock()
        self._latest: tuple[float, float | None, str | None] | None = None
        #: a send is scheduled, or its flush is not done yet: a new report only waits
        self._sending = False

    def report(self, current: float, total: float | None, message: str | None) -> None:
        """The registry's progress callback: keep the report and have the loop send it."""
        with self._lock:
            self._latest = (current, total, message)
            if self._sending:
                return  # the send under way takes this one when its flush is done
            self._sending = True
        try:
            self.loop.call_soon_threadsafe(self._send)
        except RuntimeError:  # the server's loop is closed: no one to tell
            pass

    def _send(self) -> None:
        """Write the newest report, and send the next one when the client has taken it."""
        with self._lock:
            latest, self._latest = self._latest, None
            if latest is None or self.ended:
                self._sending = False
                return
        current, total, message = latest
        if not self.started:
            self.started = True
            self.handler.set_status(200)
            self.handler.set_header("Content-Type", NDJSON)
            self.handler.set_header("Cache-Control", "no-cache")
            self.handler.set_header("X-Accel-Buffering", "no")  # a proxy passes each line on
        report = {"current": current, "total": total, "message": message}
        self._write({"progress": report})
        self.handler.flush().add_done_callback(self._flushed)

    def _flushed(self, flushed: asyncio.Future[None]) -> None:
        """The report reached the connection: send the newest one that came meanwhile (on
        the loop, where this runs), or none when the client went away."""
        if flushed.cancelled() or flushed.exception() is not None:
            with self._lock:  # the client went: the call is cancelled elsewhere
                self._sending = False
            return
        self._send()

    def end(self, last: dict[str, Any]) -> None:
        """The stream's last line (``{"result": ...}`` or the error body), and the end."""
        self._write(last)
        self.handler.finish()

    def _write(self, line: dict[str, Any]) -> None:
        self.handler.write(json.dumps(line, default=str) + "\n")
