""" "Save as test" in the test-call form: the call the form ran last, with an expectation made
from its outcome (the value it returned, or the error it raised), saved where the tool's cases
live (beside its file, or in the notebook's metadata).

>>> form.run(); form.result.wait()                 # doctest: +SKIP
>>> form.saver.kind.value, form.saver.value.value   # doctest: +SKIP
('equals', '3')
>>> form.saver.save_button.click()                 # doctest: +SKIP
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as W

from ...core.errors import NexusError
from ...render.results import call_command

__all__ = ["TestSaver", "refusal_text"]

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
    """The "Save as test" row of a :class:`~.form.ToolForm`.

    It saves the call that ran, with what it gave: :meth:`offer` after each run (the form
    calls it), :meth:`withdraw` while a call runs or when one could not run. Arguments typed
    since the run are not saved with the old run's outcome; a run of them makes the new offer.
    """

    __test__ = False  # not a pytest test class, whatever its name

    def __init__(self, form: Any) -> None:
        self.form = form
        self.arguments: dict[str, Any] | None = None  # the call offered (None: nothing to save)
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
        self.note = W.HTML("")  # which call Save saves, once the form holds other arguments
        self.kind.observe(lambda _: self._kind_changed(), names="value")
        super().__init__(
            [self.save_button, self.kind, self.value, self.note, self.status],
            layout=W.Layout(align_items="center", flex_flow="row wrap"),
        )
        self.add_class("nexus-save-test")
        self.withdraw(_FIRST_RUN)

    def _kind_changed(self) -> None:
        kind = self.kind.value
        self.value.placeholder = _PLACEHOLDER[kind]
        self.value.layout.display = "none" if kind == "succeeds" else None

    def offer(
        self, arguments: Mapping[str, Any], result: Any = None, error: str | None = None
    ) -> None:
        """Offer the call that ran with ``arguments``, its outcome as the expectation: the
        value it returned, or the error it raised."""
        from ...core.tooltests.runner import result_value

        self.arguments = dict(arguments)
        self._enable(True)
        self.status.value = self.note.value = ""
        self.save_button.tooltip = (
            f"Save {call_command(self.form.tool.spec.name, self.arguments)} and what it must "
            "give as a test case of the tool"
        )
        if result is not None and not result.is_error:
            self.kind.value = "equals"
            self.value.value = json.dumps(result_value(result), ensure_ascii=False, default=str)
            return
        message = error if error is not None else (result.error if result is not None else None)
        if message:
            first = " ".join(message.split())
            self.kind.value = "error"
            self.value.value = first if len(first) <= 80 else first[:80]
        else:
            self.kind.value, self.value.value = "succeeds", ""

    def follow_form(self, current: Mapping[str, Any] | None) -> None:
        """The form's arguments changed to ``current`` (``None``: unreadable): say that Save
        saves the call that ran, not what the form holds now."""
        if self.arguments is None or current == self.arguments:
            self.note.value = ""
            return
        command = call_command(self.form.tool.spec.name, self.arguments)
        self.note.value = (
            f"<span style='color:#666'>saves the call that ran: "
            f"<code>{html.escape(command.removeprefix('%tool call '))}</code></span>"
        )

    def withdraw(self, why: str = "") -> None:
        """Nothing to save (no run yet, a run under way, or one that could not run): the last
        run's outcome is not offered for other arguments."""
        self.arguments = None
        self.note.value = ""
        self._enable(False)
        self.kind.value, self.value.value = "succeeds", ""
        self.save_button.tooltip = why or "Run the tool first"
        self.status.value = f"<span style='color:#666'>{html.escape(why)}</span>" if why else ""

    def _enable(self, enabled: bool) -> None:
        self.save_button.disabled = self.kind.disabled = self.value.disabled = not enabled

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
        """Save the call that ran with the chosen expectation; shows where (or why not)."""
        from ..test_cases import notebook_cases_of
        from ..testing import save_test

        form = self.form
        if self.arguments is None:
            self.status.value = _error(self.save_button.tooltip)
            return None
        try:
            saved = save_test(
                form.tool.spec.name, self.arguments, registry=form.registry, **self.expectation()
            )
        except Exception as exc:  # shown by the button, never lost
            self.status.value = _error(str(exc))
            return None
        shown = f"<span style='color:#2e7d32'>✔ {saved._repr_html_()}</span>"
        self.status.value = shown
        store = notebook_cases_of(form.registry)
        if store is not None and store.where in str(saved):

            def written(problem: str | None) -> None:
                if problem is not None and self.status.value == shown:
                    self.status.value = _error(problem)

            store.on_written(written)  # a notebook nobody saved is not "saved": say so
        return saved


_FIRST_RUN = "Run the tool, then save the call and what it gave as a test."


def refusal_text(error: Any) -> str:
    """What a test of a refused call expects its error to contain: the first field's own
    message (``$.b: required argument is missing``), as the sidebar suggests it; every
    refusal's message contains it, while the header ("Invalid arguments for tool ...") would
    match any refusal."""
    errors = getattr(error, "errors", ())
    if errors:
        return f"{errors[0].path}: {errors[0].message}"
    return str(error)


def _error(message: str) -> str:
    return f"<span style='color:#c62828'>⚠ {html.escape(message)}</span>"
