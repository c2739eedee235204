"""Past calls of one tool (or all tools) with a Replay button each, kept fresh from the shared
:class:`~nexus_jupyter.notebook.history.CallHistory`.

Each call is a row in the notebook's own font (not a native ``<select>``, which browsers draw
in the system font): number, time, arguments, outcome, duration, and its Replay button.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as W

__all__ = ["HistoryPanel"]

_SHOWN = 8  # newest calls listed; older ones stay in `%tool history`


#: Outcomes that are the user's own choice, not a failure: said in grey, by what they were.
_NEUTRAL = {"CancelledError": "cancelled", "ApprovalDenied": "denied"}


def _outcome(record: Any) -> str:
    if not record.error:
        return "ok"
    return _NEUTRAL.get(record.error_type or "", record.error_type or "error")


def _label(record: Any) -> str:
    args = json.dumps(dict(record.arguments), default=str, ensure_ascii=False)
    if len(args) > 60:
        args = args[:57] + "..."
    outcome = _outcome(record)
    took = "" if record.error_type == "ApprovalDenied" else f" [{record.duration * 1000:.1f} ms]"
    return f"#{record.id} {record.tool}({args}) → {outcome}{took}"


def _row_html(record: Any) -> str:
    """One call: its number in the session (the one ``%tool history`` and ``%tool replay``
    use, labelled so, since the calls of other tools take numbers too), time, outcome (a
    cancel in grey: the user's own act, not a failure), duration and arguments."""
    args = json.dumps(dict(record.arguments), default=str, ensure_ascii=False)
    if record.error_type in _NEUTRAL:  # the user's own act: cancelled, denied
        color, outcome = "#666", _NEUTRAL[record.error_type]
    elif record.error:
        color, outcome = "#c62828", html.escape(record.error_type or "error")
    else:
        color, outcome = "#2e7d32", "ok"
    at = time.strftime("%H:%M:%S", time.localtime(record.at))
    took = "" if record.error_type == "ApprovalDenied" else _took(record.duration)  # nothing ran
    number = (
        f"<span class='nexus-history-number' title='call #{record.id} of this session, as "
        f"%tool history lists it'>session #{record.id}</span>"
    )
    return (
        f"<div class='nexus-history-row' title='{html.escape(args)}' style='white-space:nowrap;"
        "overflow:hidden;text-overflow:ellipsis'>"
        f"<span style='color:#888'>{number} {at}</span> "
        f"<span style='color:{color}'>{outcome}</span> "
        f"<span style='color:#888'>{took}</span> "
        f"<code>{html.escape(args)}</code></div>"
    )


def _took(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms" if seconds < 1 else f"{seconds:.2f} s"


class HistoryPanel(W.VBox):
    """The calls, newest first; a row's Replay calls ``on_replay(arguments)``."""

    def __init__(
        self, history: Any, tool: str | None, on_replay: Callable[[dict[str, Any]], Any]
    ) -> None:
        self.history, self.tool, self.on_replay = history, tool, on_replay
        self.rows = W.VBox()
        self.replay_buttons: list[W.Button] = []
        self._unsubscribe = (
            history.subscribe(lambda _: self.refresh()) if history is not None else None
        )
        super().__init__([W.HTML("<b>History</b>"), self.rows])
        self.add_class("nexus-history")
        self.refresh()

    def records(self) -> list[Any]:
        if self.history is None:
            return []
        return list(reversed(self.history.entries(self.tool)))

    def labels(self) -> list[str]:
        """One line per call shown, newest first (``#3 add({"a": 1}) → ok [0.1 ms]``)."""
        return [_label(r) for r in self.records()[:_SHOWN]]

    def refresh(self) -> None:
        records = self.records()[:_SHOWN]
        rows, buttons = [], []
        for record in records:
            button = W.Button(
                description="Replay",
                icon="repeat",
                tooltip="Put these arguments back in the form and run again",
                layout=W.Layout(width="90px", flex="0 0 auto"),
            )
            button.on_click(lambda _, rid=record.id: self.replay(rid))
            label = W.HTML(_row_html(record), layout=W.Layout(flex="1 1 auto", min_width="0"))
            rows.append(W.HBox([button, label], layout=W.Layout(align_items="center")))
            buttons.append(button)
        self.rows.children = rows
        self.replay_buttons = buttons
        self.layout.display = None if records else "none"

    def replay(self, record_id: int | None = None) -> Any:
        """Run a past call again (the newest when ``record_id`` is ``None``)."""
        records = self.records()
        if self.history is None or not records:
            return None
        record = records[0] if record_id is None else self.history.get(record_id)
        return self.on_replay(dict(record.arguments))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()
