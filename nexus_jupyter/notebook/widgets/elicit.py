"""A tool's questions to the notebook user: ``ctx.elicit`` from a call made in the notebook.

A call started from a form (``%tool try``) runs on the registry's background loop with a
:class:`NotebookChannel` as its client; when the tool asks (``await ctx.elicit(message,
schema)``), an :class:`ElicitForm` generated from the requested schema appears in the form's
result pane, and the tool goes on with the answer once the user presses Submit, Decline or
Dismiss (the MCP actions accept, decline and cancel). As with approvals, the click resolves a future of the background loop from the kernel
thread, so neither thread waits on the other.

A notebook has no model to sample, so ``ctx.sample`` raises
:class:`~nexus_jupyter.core.tools.channel.CallerUnavailable`; ``ctx.list_roots`` gives the
kernel's working directory.
"""

from __future__ import annotations

import asyncio
import html
import logging
from pathlib import Path
from typing import Any

import ipywidgets as W

from ...core.tools.channel import CallerUnavailable, ElicitAction, Elicitation, Sampled
from .form_fields import Field, FieldInputError, build_field

__all__ = ["ElicitForm", "NotebookChannel"]

log = logging.getLogger(__name__)


class ElicitForm(W.VBox):
    """The tool's message, the fields of the requested schema, Submit / Decline / Dismiss."""

    def __init__(self, tool: str, message: str, schema: dict[str, Any], on_answer: Any) -> None:
        self.message = W.HTML(
            f"<b><code>{html.escape(tool)}</code> asks:</b> {html.escape(message)}"
        )
        self.schema = schema
        self.fields: Field = build_field(schema, (), "", root=schema)
        for name, child in getattr(self.fields, "fields", {}).items():
            default = (schema.get("properties") or {}).get(name, {}).get("default")
            if default is not None:  # SEP-1034: show the defaults the tool declared, filled in
                child.set(default)
        self.form_error = W.HTML("")
        fit = W.Layout(width="auto", min_width="100px")
        self.submit_button = W.Button(description="Submit", button_style="primary", layout=fit)
        self.decline_button = W.Button(description="Decline", layout=fit)
        # "Dismiss", not "Cancel": the pane's own Cancel stops the whole call.
        self.cancel_button = W.Button(
            description="Dismiss",
            tooltip="Close the question without answering (the tool is told it was dismissed)",
            layout=fit,
        )
        self.submit_button.on_click(lambda _: self.submit())
        self.decline_button.on_click(lambda _: self.choose("decline"))
        self.cancel_button.on_click(lambda _: self.choose("cancel"))
        self.answer: Elicitation | None = None
        self._on_answer = on_answer
        buttons = W.HBox([self.submit_button, self.decline_button, self.cancel_button])
        super().__init__(
            [self.message, self.fields.widget, self.form_error, buttons],
            layout=W.Layout(border="1px solid #1565c0", padding="4px"),
        )
        self.add_class("nexus-elicit")

    def submit(self) -> None:
        self.fields.clear_errors()
        try:
            content = self.fields.get()
        except FieldInputError as exc:
            self.form_error.value = f"<span style='color:#c62828'>⚠ {html.escape(str(exc))}</span>"
            return
        content = content if isinstance(content, dict) else {}
        for name, field_schema in (self.schema.get("properties") or {}).items():
            if isinstance(field_schema, dict) and "default" in field_schema:
                content.setdefault(name, field_schema["default"])  # a field left empty
        self.choose("accept", content)

    def choose(self, action: ElicitAction, content: dict[str, Any] | None = None) -> None:
        if self.answer is not None:
            return
        self.answer = Elicitation(action, dict(content or {}))
        for button in (self.submit_button, self.decline_button, self.cancel_button):
            button.disabled = True
        said = {"accept": "sent", "decline": "declined", "cancel": "cancelled"}[action]
        self.message.value += f" — <i>{said}</i>"
        self.form_error.value = ""
        self._on_answer(self.answer)


class NotebookChannel:
    """The notebook user as the client of one call made from a form (a ``ClientChannel``)."""

    def __init__(self, tool: str, area: W.Box) -> None:
        self.tool, self.area = tool, area
        self.loop: asyncio.AbstractEventLoop | None = None  # the loop the call runs on

    def log(self, level: str, message: str, logger: str) -> None:
        pass  # the tool's own logger has it already; the pane shows the result, not logs

    async def elicit(
        self, message: str, schema: dict[str, Any], *, key: str | None = None
    ) -> Elicitation:
        loop = asyncio.get_running_loop()
        answered: asyncio.Future[Elicitation] = loop.create_future()

        def settle(answer: Elicitation) -> None:
            if not answered.done():  # the call may have been cancelled meanwhile
                answered.set_result(answer)

        form = ElicitForm(
            self.tool, message, schema, lambda a: loop.call_soon_threadsafe(settle, a)
        )
        self.area.children = [*self.area.children, form]
        return await answered

    async def sample(
        self,
        messages: list[dict[str, Any]],
        *,
        max_tokens: int,
        system_prompt: str | None,
        key: str | None = None,
    ) -> Sampled:
        raise CallerUnavailable(
            f"Tool {self.tool!r} asked for a model's answer (sampling), but the notebook has "
            "no model to ask: call it from an MCP client that supports sampling, or give the "
            "text as an argument."
        )

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        cwd = Path.cwd()
        return [{"uri": cwd.as_uri(), "name": cwd.name or str(cwd)}]
