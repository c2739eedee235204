"""The result pane: runs one call on the registry's background loop and shows its outcome.

The call runs on ``registry.loop`` (never on the kernel's own loop), so the notebook stays
responsive, Cancel works while the tool runs, and progress reports arrive as they happen. The
pane's traits are set from the background thread when the call ends; ipykernel sends those
updates from any thread.
"""

from __future__ import annotations

import base64
import concurrent.futures
import html
import threading
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from ...core.errors import ApprovalDenied, NexusError, ToolValidationError
from ...core.tools.channel import CURRENT_CHANNEL
from ...core.tools.context import NOTEBOOK_CALLER, CancellationToken, RequestInfo
from ...render.results import error_html, json_tree_html, text_html
from .elicit import NotebookChannel

__all__ = ["ResultPane"]


def _duration(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


class ResultPane(W.VBox):
    """Status line, Cancel, progress bar, approval prompt area, and the result itself."""

    def __init__(self, **kwargs: Any) -> None:
        self.status = W.HTML("")
        self.cancel_button = W.Button(
            description="Cancel",
            icon="stop",
            button_style="warning",
            disabled=True,
            tooltip="Stop the running call",
            layout=W.Layout(width="100px", display="none"),  # shown only while a call runs
        )
        self.cancel_button.on_click(lambda _: self.cancel())
        self.progress = W.FloatProgress(value=0, min=0, max=1, layout=W.Layout(display="none"))
        self.progress_label = W.Label("")
        # hidden until a progress report arrives, so an idle form has no empty line
        self.progress_row = W.HBox(
            [self.progress, self.progress_label], layout=W.Layout(display="none")
        )
        self.approval_area = W.VBox()
        self.output = W.VBox()
        self.status.add_class("nexus-result-status")
        self.output.add_class("nexus-result-output")
        self.result: Any = None
        self.error: str | None = None
        #: how the last call ended: "" (none yet), "running", "result", "error", "refused"
        #: (its arguments were invalid), "cancelled" or "denied" (its approval was refused)
        self.outcome = ""
        self._token: CancellationToken | None = None
        self._future: concurrent.futures.Future[Any] | None = None
        self._done = threading.Event()
        self._done.set()
        super().__init__(
            [
                W.HBox([self.status, self.cancel_button]),
                self.progress_row,
                self.approval_area,
                self.output,
            ],
            **kwargs,
        )

    # -- running --------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return not self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the current call ended (tests, scripts); True if it did."""
        return self._done.wait(timeout)

    def start(
        self,
        registry: Any,
        name: str,
        arguments: Mapping[str, Any],
        *,
        history: Any = None,
        request: RequestInfo | None = None,
        on_invalid: Callable[[ToolValidationError], Any] | None = None,
        on_done: Callable[[], Any] | None = None,
    ) -> concurrent.futures.Future[Any]:
        """Run the call on the registry's background loop; returns its future."""
        from .approval import register_prompt_area, unregister_prompt_area

        request = request or RequestInfo(caller=NOTEBOOK_CALLER)
        token = CancellationToken()
        done = threading.Event()
        self._token, self._done = token, done
        self.result, self.error = None, None
        self.outcome = "running"
        self.output.children = []
        self.progress.layout.display = "none"
        self.progress_row.layout.display = "none"
        self.progress_label.value = ""
        self.status.value = f"<i>running <code>{html.escape(name)}</code>…</i>"
        self._set_running(True)
        register_prompt_area(request.request_id, self.approval_area)
        self.approval_area.children = []
        channel = NotebookChannel(name, self.approval_area)  # the tool's questions go here

        async def call() -> Any:
            CURRENT_CHANNEL.set(channel)  # this task's own context: only this call sees it
            return await registry.call(
                name,
                dict(arguments),
                request=request,
                cancellation=token,
                progress=self._on_progress,
            )

        future = registry.loop.submit(call())
        self._future = future

        def finished(f: concurrent.futures.Future[Any]) -> None:
            unregister_prompt_area(request.request_id)
            if self._token is not token:  # a newer call owns the pane now: keep its result
                done.set()
                return
            try:
                self._finished(f, name, arguments, history, on_invalid)
            finally:
                self._set_running(False)
                try:
                    if on_done is not None:
                        on_done()  # (the form offers the call to "Save as test")
                finally:
                    done.set()  # wait() returns once all of the call's aftermath is shown

        future.add_done_callback(finished)
        return future

    def _set_running(self, running: bool) -> None:
        self.cancel_button.disabled = not running
        self.cancel_button.layout.display = None if running else "none"

    def cancel(self) -> None:
        """Stop the running call: the tool's cancel signal fires and its task is cancelled."""
        if self._token is None or not self.running:
            return
        self.status.value = "<i>cancelling…</i>"
        self._token.cancel()
        if self.approval_area.children and self._future is not None:
            self._future.cancel()  # still waiting for approval: nothing runs yet

    def _on_progress(self, current: float, total: float | None, message: str | None) -> None:
        self.progress_row.layout.display = None
        self.progress.layout.display = None
        if total:
            self.progress.max = float(total)
            self.progress.value = min(float(current), float(total))
        else:  # no total: show how far it got as text only
            self.progress.value = 0
        label = f"{current:g}/{total:g}" if total else f"{current:g}"
        self.progress_label.value = f"{label} {message or ''}".strip()

    def _finished(
        self,
        future: concurrent.futures.Future[Any],
        name: str,
        arguments: Mapping[str, Any],
        history: Any,
        on_invalid: Any,
    ) -> None:
        from .approval import ApprovalPrompt

        approved = any(
            isinstance(c, ApprovalPrompt) and c.answer for c in self.approval_area.children
        )
        self.approval_area.children = []
        if future.cancelled():
            self.show_cancelled()
            return
        exc = future.exception()
        if isinstance(exc, ApprovalDenied):
            self.show_denied()
            if history is not None:  # no result to follow: the form records it itself
                history.record(name, arguments, error=str(exc), error_type="ApprovalDenied")
        elif isinstance(exc, ToolValidationError) and on_invalid is not None:
            self.show_refused()
            on_invalid(exc)
        elif isinstance(exc, NexusError):
            self.show_error(str(exc), type(exc).__name__)
        elif exc is not None:
            self.show_error(f"{exc}", type(exc).__name__)
        else:
            result = future.result()
            if history is not None:  # unless it follows the registry, which recorded it
                history.add_result(arguments, result)
            self.show_result(result, approved=approved)

    # -- showing --------------------------------------------------------------------------

    def show_refused(self) -> None:
        """A call that did not run because its arguments were refused (the errors are next
        to the fields): the last result is cleared, so it cannot be read as this one's."""
        self.result = None
        self.error = None
        self.outcome = "refused"
        self.status.value = (
            "<span style='color:#c62828'>not run: an argument is invalid; "
            "see the field above</span>"
        )
        self.output.children = []

    def show_cancelled(self, duration: float | None = None, note: str = "") -> None:
        """A call its user cancelled: said plainly, in grey (it is not the tool failing)."""
        self.error = "the call was cancelled"
        self.outcome = "cancelled"
        took = f" after {duration:.2f} s" if duration is not None else ""
        self.status.value = (
            f"<span class='nexus-cancelled' style='color:#666'>Cancelled{took}</span>"
        )
        self.output.children = (
            [W.HTML(f"<span style='color:#666'>{html.escape(note)}</span>")] if note else []
        )

    def show_denied(self) -> None:
        """A call the user did not approve: their own choice, said in grey as a cancel is
        (nothing ran, nothing failed)."""
        self.result = None
        self.error = "the call was denied"
        self.outcome = "denied"
        self.status.value = (
            "<span class='nexus-denied' style='color:#666'>Denied: you did not approve "
            "this call, so nothing ran</span>"
        )
        self.output.children = []

    def show_error(
        self,
        message: str,
        kind: str = "Error",
        duration: float | None = None,
        trace: str | None = None,
    ) -> None:
        """Show a failure; ``trace`` is the traceback of the tool's own code."""
        self.error = message
        self.outcome = "cancelled" if kind == "CancelledError" else "error"
        took = f" after {_duration(duration)}" if duration is not None else ""
        self.status.value = f"<span style='color:#c62828'><b>{html.escape(kind)}</b>{took}</span>"
        if trace is None:
            body = f"<pre style='color:#c62828;white-space:pre-wrap'>{html.escape(message)}</pre>"
        else:
            body = error_html(kind, message, trace)
        self.output.children = [W.HTML(body)]

    def show_result(self, result: Any, approved: bool = False) -> None:
        """Show a :class:`~nexus_jupyter.core.tools.result.ToolResult` (secrets masked);
        ``approved``: the user approved it first (its time is the tool's own, without the
        wait for that answer)."""
        self.result = result
        self.outcome = "result"
        result = result.redacted()
        if result.is_error and result.error_type == "CancelledError":
            # what the registry says beyond "cancelled" (a worker process stopping it)
            extra = (result.error or "").removeprefix("the call was cancelled").lstrip("; ")
            self.show_cancelled(result.duration, extra)
            return
        if result.is_error:
            self.show_error(
                result.error or "", result.error_type or "Error", result.duration, result.traceback
            )
            return
        self.status.value = (
            f"<span style='color:#2e7d32'>✔ done</span> in <b>{_duration(result.duration)}</b>"
        )
        if approved:
            self.status.value += " <span style='color:#666'>after approval</span>"
        if result.summary:
            self.status.value += (
                f" <span class='nexus-call-summary'>{html.escape(result.summary)}</span>"
            )
        parts: list[W.Widget] = []
        for block in result.content:
            if block.get("type") == "image":
                fmt = str(block.get("mimeType", "image/png")).split("/")[-1]
                parts.append(W.Image(value=base64.b64decode(block.get("data", "")), format=fmt))
        structured = result.structured
        if isinstance(structured, dict | list):
            parts.append(W.HTML(json_tree_html(structured)))
        elif structured is not None:
            parts.append(W.HTML(text_html(str(structured))))
        elif result.text:
            parts.append(W.HTML(text_html(result.text)))
        self.output.children = parts
