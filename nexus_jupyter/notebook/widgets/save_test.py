""" "Save as test" in the test-call form: the call the form holds, with an expectation made from
its last result (the value it returned, or the error it raised), saved where the tool's cases
live (beside its file, or in the notebook's metadata).

>>> form.run(); form.result.wait()                 # doctest: +SKIP
>>> form.saver.kind.value, form.saver.value.value   # doctest: +SKIP
('equals', '3')
>>> form.saver.save_button.click()                 # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
from typing import Any

import ipywidgets as W

from ...core.errors import NexusError

__all__ = ["TestSaver"]

KINDS = [
    ("expect this result", "equals"),
    ("expect an error containing", "error"),
    ("expect these keys (subset)", "subset"),
    ("check (a Python expression)", "check"),
    ("just succeed", "succeeds"),
]
_PLACEHOLDER = {
    "equals": 'the value, as JSON (3, "text", {"k": 1})',
    "error": "text the error message contains",
    "subset": '{"key": "value"} the result must contain',
    "check": "result['total'] > 0",
    "succeeds": "",
}


class TestSaver(W.HBox):
    """The "Save as test" row of a :class:`~.form.ToolForm`."""

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, form: Any) -> None:
        self.form = form
        self.kind = W.Dropdown(
            options=KINDS, value="succeeds", layout=W.Layout(width="220px"), description=""
        )
        self.value = W.Text(
            placeholder=_PLACEHOLDER["succeeds"], layout=W.Layout(width="260px", display="none")
        )
        self.save_button = W.Button(
            description="Save as test",
            icon="check",
            tooltip="Save this call and what it must give as a test case of the tool",
        )
        self.save_button.on_click(lambda _: self.save())
        self.status = W.HTML("")
        self.kind.observe(lambda _: self._kind_changed(), names="value")
        super().__init__(
            [self.save_button, self.kind, self.value, self.status],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        self.add_class("nexus-save-test")

    def _kind_changed(self) -> None:
        kind = self.kind.value
        self.value.placeholder = _PLACEHOLDER[kind]
        self.value.layout.display = "none" if kind == "succeeds" else None

    def prefill(self, result: Any = None, error: str | None = None) -> None:
        """Offer the last call's outcome as the expectation: its value, or its error."""
        from ...core.tooltests.runner import result_value

        self.status.value = ""
        if result is not None and not result.is_error:
            value = result_value(result)
            self.kind.value = "equals"
            self.value.value = json.dumps(value, ensure_ascii=False, default=str)
            return
        message = error if error is not None else (result.error if result is not None else None)
        if message:
            first = " ".join(message.split())
            self.kind.value = "error"
            self.value.value = first if len(first) <= 80 else first[:80]

    def expectation(self) -> dict[str, Any]:
        """The keyword arguments of :func:`~nexus_jupyter.notebook.testing.save_test`."""
        kind, text = self.kind.value, self.value.value
        if kind == "succeeds":
            return {}
        if kind in ("error", "check"):
            if not text.strip():
                raise NexusError(
                    f"Say what to {'look for in the error' if kind == 'error' else 'check'}."
                )
            return {"expect_error" if kind == "error" else "check": text.strip()}
        try:
            value = json.loads(text)
        except ValueError:
            if kind == "subset":
                raise NexusError(
                    f'The subset is not JSON: {text!r}; write it like {{"key": 1}}.'
                ) from None
            value = text  # plain text: the tool returns a string
        return {"expect": value} if kind == "equals" else {"subset": value}

    def save(self) -> Any:
        """Save the form's call with the chosen expectation; shows where (or why not)."""
        from ..testing import save_test

        form = self.form
        try:
            saved = save_test(
                form.tool.spec.name, form.arguments(), registry=form.registry, **self.expectation()
            )
        except Exception as exc:  # shown by the button, never lost
            self.status.value = f"<span style='color:#c62828'>⚠ {html.escape(str(exc))}</span>"
            return None
        self.status.value = f"<span style='color:#2e7d32'>✔ {html.escape(str(saved))}</span>"
        return saved
