"""Past calls of one tool (or all tools) with a Replay button, kept fresh from the shared
:class:`~nexus_jupyter.notebook.history.CallHistory`."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import ipywidgets as W

__all__ = ["HistoryPanel"]


def _label(record: Any) -> str:
    args = json.dumps(dict(record.arguments), default=str)
    if len(args) > 60:
        args = args[:57] + "..."
    outcome = f"{record.error_type or 'error'}" if record.error else "ok"
    return f"#{record.id} {record.tool}({args}) → {outcome} [{record.duration * 1000:.1f} ms]"


class HistoryPanel(W.VBox):
    """A list of calls, newest first; Replay calls ``on_replay(arguments)``."""

    def __init__(
        self, history: Any, tool: str | None, on_replay: Callable[[dict[str, Any]], Any]
    ) -> None:
        self.history, self.tool, self.on_replay = history, tool, on_replay
        self.calls = W.Select(options=[], rows=4, layout=W.Layout(width="90%"))
        self.replay_button = W.Button(description="Replay", icon="repeat", disabled=True)
        self.replay_button.on_click(lambda _: self.replay())
        self.calls.observe(lambda _: self._enable(), names="value")
        self._unsubscribe = (
            history.subscribe(lambda _: self.refresh()) if history is not None else None
        )
        super().__init__([W.HTML("<b>History</b>"), self.calls, self.replay_button])
        self.refresh()

    def records(self) -> list[Any]:
        if self.history is None:
            return []
        return list(reversed(self.history.entries(self.tool)))

    def refresh(self) -> None:
        records = self.records()
        self.calls.options = [(_label(r), r.id) for r in records]
        if self.calls.value is None and records:
            self.calls.value = records[0].id  # the newest call, ready to replay
        self.layout.display = None if records else "none"
        self._enable()

    def _enable(self) -> None:
        self.replay_button.disabled = self.calls.value is None

    def replay(self) -> Any:
        if self.calls.value is None or self.history is None:
            return None
        record = self.history.get(self.calls.value)
        return self.on_replay(dict(record.arguments))

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        super().close()
