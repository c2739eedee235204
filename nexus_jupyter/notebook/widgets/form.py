"""The test-call form: fields from the tool's JSON schema (or raw JSON), Run, the result pane
and this tool's call history with replay.

>>> form = ToolForm(registry.get("add"), registry)       # doctest: +SKIP
>>> form.fields.fields["a"].set(1); form.run_button.click()  # doctest: +SKIP
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import ipywidgets as W

from ...core.errors import FieldError, ToolValidationError
from ...core.tools.context import NOTEBOOK_CALLER, RequestInfo
from ...render.catalog import tool_badges
from ...render.results import call_command
from .form_fields import Field, FieldInputError, build_field, field_at
from .history_panel import HistoryPanel
from .result import ResultPane
from .save_test import TestSaver, refusal_text
from .terminal import TerminalText

__all__ = ["ToolForm"]


class ToolForm(TerminalText, W.VBox):
    """A form for one tool. ``fields`` is the root field (an object field), ``result`` the
    :class:`ResultPane`, ``history_panel`` the calls of this tool."""

    def __repr__(self) -> str:
        """What a terminal (``ipython``) shows instead of the widget: how to call there."""
        name = self.tool.spec.name
        return (
            f"The form for {name} needs a notebook front end (JupyterLab, Notebook, VS Code). "
            f"Here, `%tool call {name} key=value ...` calls it and `%tool info {name}` shows "
            "its parameters."
        )

    def __init__(
        self,
        tool: Any,
        registry: Any,
        *,
        history: Any = None,
        on_called: Callable[[], Any] | None = None,
    ) -> None:
        self.tool, self.registry, self.history = tool, registry, history
        self.on_called = on_called  # after each call that ran or was refused (the catalog)
        spec = tool.spec
        self.header = W.HTML(
            f"<b style='font-size:110%'>{_esc(spec.name)}</b> {tool_badges(tool, categories=False)}"
            f"<div style='color:#444'>{_esc(spec.description) or '<i>no description</i>'}</div>"
        )
        schema = dict(spec.input_schema)
        self.fields: Field = build_field(schema, (), "", root=schema)
        self.raw = W.Textarea(layout=W.Layout(width="90%", height="140px", display="none"))
        self.mode = W.ToggleButtons(
            options=["form", "JSON"],
            value="form",
            tooltips=["Fill in fields", "Edit the arguments as JSON"],
        )
        self.mode.observe(self._switch_mode, names="value")
        self._switching = False  # putting the toggle back after a switch that could not be
        self.form_error = W.HTML("")
        self.run_button = W.Button(description="Run", icon="play", button_style="primary")
        self.run_button.on_click(lambda _: self.run())
        self.result = ResultPane()
        self.saver = TestSaver(self)  # "Save as test": this call and what it must give
        self.history_panel = HistoryPanel(history, spec.name, self.replay)
        self.notice = W.HTML("")
        self.command = W.HTML("")  # "copy as %tool call …", kept in step with the fields
        super().__init__(self._parts())
        self.add_class("nexus-form")
        self.show_policy()
        self.fields.on_change(self.update_command)
        self.raw.observe(lambda _: self.update_command(), names="value")
        self.update_command()
        self._unsubscribe: Callable[[], None] | None = registry.subscribe(self._on_registry_change)

    def _parts(self) -> list[W.Widget]:
        # Run keeps its size; the call line beside it takes what is left and wraps (a long
        # line in a narrow window squeezed Run to a sliver).
        self.run_button.layout.flex = "0 0 auto"
        self.command.layout = W.Layout(flex="1 1 auto", min_width="0")
        return [
            W.HTML(_FORM_STYLE, layout=W.Layout(display="none")),
            self.header,
            self.notice,
            self.mode,
            self.fields.widget,
            self.raw,
            self.form_error,
            W.HBox(
                [self.run_button, self.command],
                layout=W.Layout(align_items="center", width="100%"),
            ),
            self.result,
            self.saver,
            self.history_panel,
        ]

    # -- arguments ------------------------------------------------------------------------

    def arguments(self) -> dict[str, Any]:
        """What Run would send (raises :class:`FieldInputError` for unreadable input)."""
        if self.mode.value == "JSON":
            try:
                value = json.loads(self.raw.value or "{}")
            except ValueError as exc:
                raise FieldInputError((), f"the arguments are not valid JSON: {exc}") from None
            if not isinstance(value, dict):
                raise FieldInputError((), f"the arguments must be a JSON object, got {value!r}")
            return value
        value = self.fields.get()
        return value if isinstance(value, dict) else {}

    def set_arguments(self, arguments: dict[str, Any]) -> None:
        """Fill the form (and the JSON box) with ``arguments``: exactly these, the fields
        they leave out back to empty (or their default)."""
        self.fields.reset()
        self.fields.set(arguments)
        self.raw.value = json.dumps(arguments, indent=2, default=str)

    def show_policy(self) -> None:
        """Disable Run, saying why, when policy denies every call of this tool from the
        notebook (a grant below its permission, a block, an ACL); "ask" stays runnable."""
        policy = getattr(self.registry, "policy", None)
        if policy is None:
            return
        decision = policy.check(self.tool.spec, {}, RequestInfo(caller=NOTEBOOK_CALLER))
        if decision.action == "deny":
            self.run_button.disabled = True
            self.run_button.tooltip = decision.reason
            self.notice.value = _error_html(f"Run is disabled: {decision.reason}")

    def call_command(self) -> str | None:
        """The ``%tool call`` line for what the form holds now (None while unreadable)."""
        try:
            return call_command(self.tool.spec.name, self.arguments())
        except FieldInputError:
            return None

    def update_command(self) -> None:
        try:
            arguments: dict[str, Any] | None = self.arguments()
        except FieldInputError:
            arguments = None
        command = None if arguments is None else call_command(self.tool.spec.name, arguments)
        self.command.value = "" if command is None else copy_command_html(command)
        self.saver.follow_form(arguments)

    def _switch_mode(self, change: Any) -> None:
        """Carry the arguments over to the other view, so both show the same call. A switch
        that would lose something (a value the fields cannot read, JSON that does not parse,
        a key the form has no field for) stays where it is and says why."""
        if self._switching:
            return
        self.clear_errors()
        switched = self._to_json() if change["new"] == "JSON" else self._to_form()
        if not switched:
            self._switching = True
            try:
                self.mode.value = change["old"]
            finally:
                self._switching = False
            return
        json_mode = self.mode.value == "JSON"
        self.fields.widget.layout.display = "none" if json_mode else None
        self.raw.layout.display = None if json_mode else "none"

    def _to_json(self) -> bool:
        try:
            value = self.fields.get()
        except FieldInputError as exc:
            for problem in exc.problems:
                field_at(self.fields, tuple(problem.loc)).set_error(str(problem))
            self.form_error.value = _error_html(
                "Fix the field marked above to switch to JSON (the JSON would lose it)."
            )
            return False
        self.raw.value = json.dumps(value if isinstance(value, dict) else {}, indent=2, default=str)
        return True

    def _to_form(self) -> bool:
        try:
            value = json.loads(self.raw.value or "{}")
        except ValueError as exc:
            self.form_error.value = _error_html(f"could not read the JSON: {exc}")
            return False
        if not isinstance(value, dict):
            self.form_error.value = _error_html(
                f"the arguments must be a JSON object, got {value!r}; fix them to use the form"
            )
            return False
        unknown = [k for k in value if k not in _properties(self.tool.spec.input_schema)]
        if unknown and _properties(self.tool.spec.input_schema):
            self.form_error.value = _error_html(
                f"the form has no field for {', '.join(map(repr, unknown))}; remove "
                f"{'it' if len(unknown) == 1 else 'them'} from the JSON to use the form"
            )
            return False
        self.fields.reset()
        self.fields.set(value)
        try:
            self.fields.get()  # a value the fields hold but cannot read: show it at its field
        except FieldInputError as exc:
            self.show_errors([FieldError(p.loc, str(p)) for p in exc.problems])
        return True

    # -- errors ---------------------------------------------------------------------------

    def clear_errors(self) -> None:
        self.fields.clear_errors()
        self.form_error.value = ""

    def show_errors(self, errors: Any) -> None:
        """Put each error next to its field; errors with no field (or in JSON mode) go under
        the form with their path."""
        loose = []
        for error in errors:
            field = field_at(self.fields, tuple(error.loc))
            if self.mode.value == "form" and field is not self.fields:
                field.set_error(error.message)
            else:
                loose.append(f"{error.path}: {error.message}" if error.loc else error.message)
        self.form_error.value = _error_html("; ".join(loose)) if loose else ""

    # -- running --------------------------------------------------------------------------

    def run(self) -> Any:
        """Validate, then call on the background loop. Returns the call's future, or ``None``
        when the arguments are invalid (the errors are shown next to the fields)."""
        self.clear_errors()
        try:
            arguments = self.arguments()
        except FieldInputError as exc:
            self.show_errors(self._unreadable(exc))
            self.result.show_refused()
            self.saver.withdraw("Not run, so nothing to save: fix the fields marked above.")
            return None
        tool = self.registry.find(self.tool.spec.name) or self.tool
        try:
            tool.validate(arguments)
        except ToolValidationError as exc:
            self._invalid(exc, arguments)
            self._called()
            return None
        self.saver.withdraw()  # the last run's outcome is not this one's
        return self.result.start(
            self.registry,
            tool.spec.name,
            arguments,
            history=self.history,
            request=RequestInfo(caller=NOTEBOOK_CALLER),
            on_invalid=lambda exc: self._invalid(exc, arguments),
            on_done=lambda: self._ended(arguments),
        )

    def _unreadable(self, error: FieldInputError) -> list[FieldError]:
        """Every field the call would be refused for, in one pass: those whose text cannot
        be read, and the others' own errors (a required one left empty), found by checking
        what could be read."""
        errors = [FieldError(p.loc, str(p)) for p in error.problems]
        if self.mode.value != "form" or not isinstance(error.partial, dict):
            return errors
        unreadable = [tuple(p.loc) for p in error.problems]
        tool = self.registry.find(self.tool.spec.name) or self.tool
        try:
            tool.validate(error.partial)
        except ToolValidationError as invalid:
            errors += [  # an unreadable field is missing from what was read: keep its own error
                e
                for e in invalid.errors
                if not any(tuple(e.loc[: len(loc)]) == loc for loc in unreadable)
            ]
        return errors

    def _invalid(self, error: ToolValidationError, arguments: dict[str, Any]) -> None:
        self.show_errors(error.errors)
        self.result.show_refused()  # not the last run's result under the new errors
        # a test that these are refused, expecting the first field's own message
        self.saver.offer(arguments, error=refusal_text(error))

    def _ended(self, arguments: dict[str, Any]) -> None:
        """A call ended (on the registry's loop): offer it to "Save as test"."""
        outcome = self.result.outcome
        if outcome == "cancelled":
            self.saver.withdraw("The call was cancelled: it gave nothing to save.")
        elif outcome == "denied":
            self.saver.withdraw("The call was denied: nothing ran, so there is nothing to save.")
        elif outcome != "refused":  # a refusal was offered by _invalid
            self.saver.offer(arguments, self.result.result, self.result.error)
        self._called()

    def _called(self) -> None:
        if self.on_called is not None:
            try:
                self.on_called()
            except Exception as exc:  # the call itself is done: say what failed, carry on
                self.notice.value = _error_html(f"after the call: {type(exc).__name__}: {exc}")

    def replay(self, arguments: dict[str, Any]) -> Any:
        """Fill the form with past ``arguments`` and run again."""
        self.set_arguments(arguments)
        return self.run()

    # -- the tool changes under the form (cell re-run, file edited) -----------------------

    def _on_registry_change(self, change: Any) -> None:
        name = self.tool.spec.name
        if name in change.removed:
            self.notice.value = _error_html(f"{name!r} was removed from the registry.")
            self.run_button.disabled = True
        elif name in change.updated or name in change.added:
            fresh = self.registry.find(name)
            if fresh is not None and fresh.spec.version != self.tool.spec.version:
                self.rebuild(fresh)

    def rebuild(self, tool: Any) -> None:
        """Rebuild the fields for a new version of the tool, keeping what was typed."""
        try:
            kept = self.arguments()
        except FieldInputError:
            kept = {}
        self.tool = tool
        schema = dict(tool.spec.input_schema)
        self.fields = build_field(schema, (), "", root=schema)
        self.fields.set(kept)
        self.fields.on_change(self.update_command)
        self.children = self._parts()
        self.fields.widget.layout.display = None if self.mode.value == "form" else "none"
        self.run_button.disabled = False
        self.notice.value = (
            f"<i style='color:#555'>{_esc(tool.spec.name)} was updated "
            f"(v{_esc(tool.spec.version)}); the form follows.</i>"
        )
        self.show_policy()  # the new version may need another permission

    def close(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.history_panel.close()
        super().close()


def _esc(text: Any) -> str:
    import html

    return html.escape(str(text))


#: ipywidgets wraps an HTML widget's text in a flex item as wide as its longest line, so a
#: long call line or history row pushed the form past the cell (and squeezed the buttons
#: beside it); letting those items shrink keeps the form inside, the text wrapping or ending
#: in "…" instead.
_FORM_STYLE = (
    "<style>.nexus-form .widget-html-content{min-width:0}"
    ".nexus-form .nexus-history .widget-html-content{overflow:hidden}</style>"
)


def copy_command_html(command: str) -> str:
    """A "Copy as %tool call" button (to the clipboard, in the browser) and the line itself,
    selectable, so a call made by clicking can be pasted into a cell."""
    shown = _esc(command)
    script = (
        "navigator.clipboard.writeText(this.parentElement.querySelector('code').textContent)"
        ".then(() => { this.textContent = 'Copied'; })"
    )
    return (
        "<span class='nexus-copy-call' style='display:flex;align-items:center;gap:6px;"
        "min-width:0'><button class='jupyter-button' style='flex:none' title='Copy this call "
        f'as a %tool call line, to paste into a cell\' onclick="{_esc(script)}">Copy as %tool '
        "call</button><code style='white-space:pre-wrap;overflow-wrap:anywhere;min-width:0;"
        f"line-height:1.4;user-select:all' title='{shown}'>{shown}</code></span>"
    )


def _properties(schema: Any) -> Mapping[str, Any]:
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    return props if isinstance(props, Mapping) else {}


def _error_html(message: str) -> str:
    return f"<span style='color:#c62828'>⚠ {_esc(message)}</span>"
