"""The approve/deny prompt for tools whose policy says ``ask``.

The registry calls its ``approver`` on its background loop and awaits the answer, while the
buttons' callbacks run on the kernel thread. :class:`NotebookApprover` therefore returns an
asyncio future of the background loop and the click resolves it with
``loop.call_soon_threadsafe``: neither thread ever blocks on the other, so there is no
deadlock.

The prompt appears in the result pane of the form that started the call (found by the
request id). A call made elsewhere (``%tool call``, ``registry.call_sync`` in a cell) blocks
the kernel thread, so no click could ever arrive: it gets a clear ``ApprovalRequired``
instead of a prompt nobody can answer.
"""

from __future__ import annotations

import asyncio
import html
import json
import threading
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ...core.errors import ApprovalRequired
from ...render.results import text_html

__all__ = ["ApprovalPrompt", "NotebookApprover", "register_prompt_area", "unregister_prompt_area"]

_areas: dict[str, W.Box] = {}
_areas_lock = threading.Lock()

Answer = bool | str  # True: once, "always", False: deny


def register_prompt_area(request_id: str, area: W.Box) -> None:
    with _areas_lock:
        _areas[request_id] = area


def unregister_prompt_area(request_id: str) -> None:
    with _areas_lock:
        _areas.pop(request_id, None)


class ApprovalPrompt(W.VBox):
    """ "Tool X wants to run with these arguments": Approve once / Always / Deny."""

    def __init__(self, tool: Any, arguments: Any, on_answer: Callable[[Answer], Any]) -> None:
        spec = tool.spec
        self.message = W.HTML(
            f"<b>Approve this call of <code>{html.escape(spec.name)}</code>?</b> It needs "
            f"permission <code>{html.escape(spec.permission)}</code>."
            f"{arguments_html(arguments)}"
        )
        fit = W.Layout(width="auto", min_width="120px")  # labels are never cut off
        self.approve_button = W.Button(
            description="Approve once", button_style="success", layout=fit
        )
        self.always_button = W.Button(
            description="Always for this session", button_style="info", layout=fit
        )
        self.deny_button = W.Button(description="Deny", button_style="danger", layout=fit)
        self.answer: Answer | None = None
        self._on_answer = on_answer
        for button, answer in (
            (self.approve_button, True),
            (self.always_button, "always"),
            (self.deny_button, False),
        ):
            button.on_click(lambda _, a=answer: self.choose(a))
        buttons = W.HBox([self.approve_button, self.always_button, self.deny_button])
        super().__init__(
            [self.message, buttons], layout=W.Layout(border="1px solid #ef6c00", padding="4px")
        )
        self.add_class("nexus-approval")

    def choose(self, answer: Answer) -> None:
        if self.answer is not None:
            return
        self.answer = answer
        for button in (self.approve_button, self.always_button, self.deny_button):
            button.disabled = True
        said = {True: "approved once", "always": "approved for this session", False: "denied"}
        self.message.value += f" — <i>{said[answer]}</i>"
        self._on_answer(answer)


def arguments_html(arguments: Any) -> str:
    """The arguments being approved, one per line, each value as the tool will get it: a
    multi-line string (a shell command) keeps its lines."""
    if not arguments:
        return "<div><i>no arguments</i></div>"
    rows = []
    for key, value in dict(arguments).items():
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        rows.append(
            f"<tr><td style='vertical-align:top;text-align:left'><code>{html.escape(str(key))}"
            f"</code></td><td style='text-align:left'>{text_html(str(shown))}</td></tr>"
        )
    return f"<table class='nexus-approval-arguments'>{''.join(rows)}</table>"


class NotebookApprover:
    """``registry.approver`` for a kernel with widgets: shows :class:`ApprovalPrompt` in the
    form that made the call and waits (asynchronously) for the click."""

    def __call__(self, tool: Any, arguments: Any, request: Any) -> Any:
        with _areas_lock:
            area = _areas.get(getattr(request, "request_id", ""))
        if area is None:
            name = tool.spec.name
            raise ApprovalRequired(
                f"Tool {name!r} needs approval ({tool.spec.permission}) before it runs; open "
                f"`%tool try {name}` and press Run to approve it there, or pre-approve it in "
                f"nex.yaml (approvals: {{{name}: pre_approved}}).",
                tool=name,
                arguments=arguments,
            )
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Answer] = loop.create_future()

        def settle(value: Answer) -> None:
            if not answer.done():  # a second click, or the call was cancelled meanwhile
                answer.set_result(value)

        def resolve(value: Answer) -> None:
            loop.call_soon_threadsafe(settle, value)

        area.children = [ApprovalPrompt(tool, arguments, resolve)]
        return answer
