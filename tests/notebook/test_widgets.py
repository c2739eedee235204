"""The real widgets, driven as a user would: set values, click buttons, read what is shown."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from typing import Annotated, Literal

import ipywidgets as W
import pytest
from nbhelpers import wait_for
from pydantic import BaseModel, Field

from nexus_jupyter import ApprovalRequired, Image, Registry, ToolContext, tool
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.notebook.history import CallHistory
from nexus_jupyter.notebook.widgets.approval import ApprovalPrompt, NotebookApprover
from nexus_jupyter.notebook.widgets.catalog import Catalog
from nexus_jupyter.notebook.widgets.form import ToolForm
from nexus_jupyter.notebook.widgets.form_fields import UNSET


class Address(BaseModel):
    street: str = Field(min_length=2)
    number: int = 1


@tool(categories=["people"])
def register_person(
    name: str,
    age: Annotated[int, Field(ge=0, le=150)],
    city: Literal["Paris", "Oslo"] = "Oslo",
    tags: list[str] | None = None,
    address: Address | None = None,
) -> dict:
    """Register a person."""
    return {
        "name": name,
        "age": age,
        "city": city,
        "tags": tags,
        "address": address.model_dump() if address else None,
    }


@tool
async def sleeper(seconds: float, ctx: ToolContext) -> str:
    """Sleep, reporting progress every 50 ms."""
    steps = int(seconds / 0.05)
    for i in range(steps):
        await ctx.progress(i + 1, steps, "sleeping")
        await asyncio.sleep(0.05)
    return "woke up"


@tool
def busy(seconds: float, ctx: ToolContext) -> str:
    """A sync tool that polls its cancel signal."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ctx.cancelled:
            return "stopped early"
        time.sleep(0.01)
    return "finished"


@tool
def picture() -> Image:
    """A tiny PNG."""
    return Image(b"\x89PNG\r\n\x1a\nfake", "image/png")


@tool
def explode(message: str) -> str:
    """Fails."""
    raise RuntimeError(message)


@tool(permission="danger_full_access")
def wipe(target: str) -> str:
    """Dangerous: needs approval."""
    return f"wiped {target}"


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    for fn in (register_person, sleeper, busy, picture, explode, wipe):
        registry.add(fn)
    yield registry
    registry.close()


@pytest.fixture
def history() -> CallHistory:
    return CallHistory()


def run_and_wait(form: ToolForm, timeout: float = 10) -> None:
    form.run_button.click()
    assert form.result.wait(timeout), "the call did not finish in time"


def test_form_fields_follow_the_schema(reg: Registry, history: CallHistory) -> None:
    form = ToolForm(reg.get("register_person"), reg, history=history)
    fields = form.fields.fields
    assert isinstance(fields["name"].control, W.Text)
    # a number is typed as text: empty until the user types one (no 0 that looks chosen)
    assert isinstance(fields["age"].control, W.Text)
    assert fields["age"].control.value == "" and "0…150" in fields["age"].control.placeholder
    city = fields["city"].control
    assert isinstance(city, W.Dropdown) and city.label == "default (Oslo)"
    assert fields["city"].get() is UNSET  # left at its default: not sent, the tool's applies
    assert form.arguments() == {"name": ""}  # a required number left empty is missing
    fields["age"].control.value = "36"
    assert form.arguments() == {"name": "", "age": 36}
    assert form.call_command() == '%tool call register_person {"name": "", "age": 36}'


def test_empty_number_and_text_boxes_mean_not_given(reg: Registry) -> None:
    """No "set" checkbox in front of optional text or numbers: empty means left out."""
    form = ToolForm(reg.get("sleeper"), reg)
    (field,) = form.fields.fields.values()
    assert not hasattr(field, "use") and field.control.value == ""
    assert form.arguments() == {}
    form.run_button.click()
    assert form.result.wait(10)
    assert "required" in field.error.value  # the registry's error, next to the field
    field.control.value = "zero"
    assert form.run() is None and "not a number" in field.error.value


def test_run_shows_result_and_adds_history(reg: Registry, history: CallHistory) -> None:
    form = ToolForm(reg.get("register_person"), reg, history=history)
    fields = form.fields.fields
    fields["name"].control.value = "Ada"
    fields["age"].control.value = "36"
    fields["tags"].inner.add_button.click()  # adding an item marks the optional field as set
    fields["tags"].inner.items[0].control.value = "math"
    fields["address"].inner.fields["street"].control.value = "Main St"
    run_and_wait(form)
    assert "done" in form.result.status.value
    shown = form.result.output.children[0].value
    assert "Ada" in shown and "math" in shown and "Main St" in shown and "<details" in shown
    assert [r.arguments for r in history.entries()] == [
        {"name": "Ada", "age": 36, "tags": ["math"], "address": {"street": "Main St"}}
    ]
    assert form.history_panel.labels()[0].startswith("#")


def test_replay_runs_the_same_arguments_again(reg: Registry, history: CallHistory) -> None:
    form = ToolForm(reg.get("register_person"), reg, history=history)
    form.set_arguments({"name": "Bo", "age": 5})
    run_and_wait(form)
    form.set_arguments({"name": "Changed", "age": 9})
    form.history_panel.replay_buttons[0].click()
    assert form.result.wait(10)
    wait_for(lambda: len(history) == 2)
    assert history.entries()[1].arguments == {"name": "Bo", "age": 5}
    assert form.fields.fields["name"].control.value == "Bo"


def test_validation_errors_appear_next_to_their_fields(reg: Registry) -> None:
    form = ToolForm(reg.get("register_person"), reg)
    form.fields.set({"name": "Ada", "age": 20, "address": {"street": "x"}})
    assert form.run() is None  # the registry's validator refused: nothing ran
    street = form.fields.fields["address"].inner.fields["street"]
    assert "at least 2 characters" in street.error.value
    assert street.error.layout.display is None  # visible
    assert form.fields.fields["name"].error.value == ""
    form.fields.set({"address": {"street": "Main"}})
    run_and_wait(form)
    assert street.error.value == "" and "done" in form.result.status.value


def test_a_refused_run_clears_the_last_result(reg: Registry, history: CallHistory) -> None:
    form = ToolForm(reg.get("register_person"), reg, history=history)
    form.fields.set({"name": "Ada", "age": 20})
    run_and_wait(form)
    assert "done" in form.result.status.value and form.result.output.children
    form.fields.set({"address": {"street": "x"}})  # refused by the registry's validator
    assert form.run() is None
    assert "not run" in form.result.status.value and "done" not in form.result.status.value
    assert form.result.output.children == () and form.result.result is None
    form.fields.fields["age"].control.value = "old"  # refused before the validator
    form.fields.set({"address": {"street": "Main"}})
    assert form.run() is None and "not run" in form.result.status.value
    assert len(history) == 1  # neither refused run was recorded as a call


def test_json_mode_errors_name_their_path(reg: Registry) -> None:
    form = ToolForm(reg.get("register_person"), reg)
    form.mode.value = "JSON"
    form.raw.value = '{"name": "x", "age": "old", "city": "Rome"}'
    assert form.run() is None
    assert "$.age" in form.form_error.value and "$.city" in form.form_error.value
    form.raw.value = '{"name": "x", "age": 3, "address": {"street": "Elm", "number": 2}}'
    form.mode.value = "form"  # the JSON comes back into the fields
    assert form.fields.fields["address"].inner.fields["number"].get() == 2
    assert form.arguments() == {"name": "x", "age": 3, "address": {"street": "Elm", "number": 2}}


def test_invalid_field_value_blocks_the_call(reg: Registry, history: CallHistory) -> None:
    form = ToolForm(reg.get("sleeper"), reg, history=history)
    form.mode.value = "JSON"
    form.raw.value = '{"seconds": "soon"}'
    assert form.run() is None
    form.mode.value = "form"
    assert len(history) == 0


def test_bad_json_is_shown_not_raised(reg: Registry) -> None:
    form = ToolForm(reg.get("register_person"), reg)
    form.mode.value = "JSON"
    form.raw.value = '{"name": '
    assert form.run() is None
    assert "not valid JSON" in form.form_error.value


def test_cancel_stops_an_async_tool_and_progress_moves(reg: Registry) -> None:
    form = ToolForm(reg.get("sleeper"), reg)
    form.fields.fields["seconds"].set(30.0)
    form.run_button.click()
    wait_for(lambda: form.result.progress.value >= 2)
    assert form.result.progress.layout.display is None
    assert "sleeping" in form.result.progress_label.value
    started = time.monotonic()
    form.result.cancel_button.click()
    assert form.result.wait(5)
    assert time.monotonic() - started < 5
    # the user's own act, said plainly and in grey: not a red "CancelledError" failure
    status = form.result.status.value
    assert re.search(r">Cancelled after \d+\.\d\d s<", status), status
    assert "CancelledError" not in status and "#c62828" not in status
    assert form.result.output.children == ()
    assert form.result.outcome == "cancelled"
    assert form.result.error == "the call was cancelled"
    assert form.result.cancel_button.disabled


def test_cancel_stops_a_sync_tool_that_polls(reg: Registry) -> None:
    form = ToolForm(reg.get("busy"), reg)
    form.fields.fields["seconds"].set(30.0)
    future = form.run()
    time.sleep(0.1)
    form.result.cancel_button.click()
    assert form.result.wait(5)
    assert "cancelled" in (form.result.error or "")
    future.exception(5)


def test_image_and_error_results_are_shown(reg: Registry) -> None:
    form = ToolForm(reg.get("picture"), reg)
    run_and_wait(form)
    assert isinstance(form.result.output.children[0], W.Image)
    failing = ToolForm(reg.get("explode"), reg)
    failing.fields.fields["message"].control.value = "kaboom"
    run_and_wait(failing)
    assert "RuntimeError" in failing.result.status.value
    assert "kaboom" in failing.result.output.children[0].value


def test_approval_prompt_approve_once_and_deny(reg: Registry, history: CallHistory) -> None:
    reg.policy = Policy(grant="danger_full_access")
    reg.approver = NotebookApprover()
    form = ToolForm(reg.get("wipe"), reg, history=history)
    form.fields.fields["target"].control.value = "/tmp/x"
    form.run_button.click()
    prompt = wait_for(lambda: form.result.approval_area.children)[0]
    assert isinstance(prompt, ApprovalPrompt) and "Approve this call" in prompt.message.value
    assert "danger_full_access" in prompt.message.value and "/tmp/x" in prompt.message.value
    assert form.result.running  # nothing ran yet: it waits for the click
    prompt.approve_button.click()
    assert form.result.wait(5)
    assert form.result.result.structured == "wiped /tmp/x"
    assert "done" in form.result.status.value and "after approval" in form.result.status.value
    form.run_button.click()
    prompt = wait_for(lambda: form.result.approval_area.children)[0]
    prompt.deny_button.click()
    assert form.result.wait(5)
    # the user's own answer: grey "Denied", as a cancel, not a red PermissionDenied
    assert form.result.outcome == "denied"
    status = form.result.status.value
    assert "Denied" in status and "#666" in status and "PermissionDenied" not in status
    assert "c62828" not in status and form.result.output.children == ()
    # nothing ran: no test to save, and the history says "denied" (in grey)
    assert form.saver.save_button.disabled and form.saver.arguments is None
    assert "denied" in form.saver.status.value
    newest = history.entries("wipe")[-1]
    assert newest.error_type == "ApprovalDenied" and dict(newest.arguments) == {"target": "/tmp/x"}
    row = form.history_panel.rows.children[0].children[1].value
    assert "color:#666'>denied<" in row
    assert form.history_panel.labels()[0].endswith("→ denied")  # no time: nothing ran
    from nexus_jupyter.render.results import history_html, history_text

    assert "color:#666'>denied<" in history_html([newest])  # `%tool history` says it so too
    assert history_text([newest]).startswith(f"#{newest.id:<4} wipe(") and "-> denied" in (
        history_text([newest])
    )


def test_approve_always_is_remembered(reg: Registry) -> None:
    reg.policy = Policy(grant="danger_full_access")
    reg.approver = NotebookApprover()
    form = ToolForm(reg.get("wipe"), reg)
    form.fields.fields["target"].control.value = "a"
    form.run_button.click()
    wait_for(lambda: form.result.approval_area.children)[0].always_button.click()
    assert form.result.wait(5) and form.result.result.structured == "wiped a"
    run_and_wait(form)  # no prompt the second time
    assert form.result.result.structured == "wiped a"


def test_call_outside_a_form_gets_a_clear_approval_error(reg: Registry) -> None:
    reg.policy = Policy(grant="danger_full_access")
    reg.approver = NotebookApprover()
    with pytest.raises(ApprovalRequired, match="%tool try wipe"):
        reg.call_sync("wipe", {"target": "x"})


def test_cancel_while_waiting_for_approval(reg: Registry) -> None:
    reg.policy = Policy(grant="danger_full_access")
    reg.approver = NotebookApprover()
    form = ToolForm(reg.get("wipe"), reg)
    form.fields.fields["target"].control.value = "x"
    form.run_button.click()
    wait_for(lambda: form.result.approval_area.children)
    form.result.cancel_button.click()
    assert form.result.wait(5)
    assert "cancelled" in (form.result.error or "")


def test_catalog_search_filters_details_and_try(reg: Registry, history: CallHistory) -> None:
    catalog = Catalog(reg, history=history)
    assert catalog.names == sorted(reg.names())
    catalog.search.value = "sleep progress"
    assert catalog.names[0] == "sleeper"
    catalog.search.value = "register a person in HubSpot"
    assert catalog.names == [] and "no installed tool works with HubSpot" in catalog.count.value
    assert "searched for" not in catalog.count.value
    catalog.search.value = "sleep progres"
    assert catalog.names[0] == "sleeper"
    assert "(searched for <i>sleep progress</i>)" in catalog.count.value
    catalog.search.value = ""
    catalog.permission_filter.value = "danger_full_access"
    assert catalog.names == ["wipe"]
    catalog.permission_filter.value = ""
    catalog.category_filter.value = "people"
    assert catalog.names == ["register_person"]
    catalog.rows.children[0].children[0].click()
    assert "Register a person." in catalog.details.value
    assert "JSON schema" in catalog.details.value and not catalog.try_button.disabled
    catalog.try_button.click()
    assert isinstance(catalog.form, ToolForm) and catalog.form_area.children == (catalog.form,)
    catalog.close()


def test_catalog_refreshes_on_registry_events_from_other_threads(reg: Registry) -> None:
    catalog = Catalog(reg)

    @tool
    def fresh(x: int) -> int:
        """Just added."""
        return x

    thread = threading.Thread(target=reg.add, args=(fresh,))
    thread.start()
    thread.join(5)
    wait_for(lambda: "fresh" in catalog.names)
    reg.remove("fresh")
    wait_for(lambda: "fresh" not in catalog.names)
    catalog.close()
    reg.add(fresh)  # closed: unsubscribed, nothing redrawn
    assert "fresh" not in catalog.names


def test_form_follows_a_tool_that_changes_and_notes_removal(reg: Registry) -> None:
    form = ToolForm(reg.get("explode"), reg)
    form.fields.fields["message"].control.value = "kept"

    @tool(name="explode")
    def explode_v2(message: str, times: int = 1) -> str:
        """Fails, now with repetitions."""
        raise RuntimeError(message * times)

    reg.add(explode_v2)
    assert reg.wait_for_events()  # the form follows the registry on its own queue
    assert set(form.fields.fields) == {"message", "times"}
    assert form.fields.fields["message"].control.value == "kept"
    assert "was updated" in form.notice.value
    reg.remove("explode")
    assert reg.wait_for_events()
    assert "removed" in form.notice.value and form.run_button.disabled
    form.close()


def test_run_is_disabled_with_the_reason_where_policy_denies(reg: Registry) -> None:
    reg.policy = Policy(grant="workspace_write")  # below wipe's danger_full_access
    form = ToolForm(reg.get("wipe"), reg)
    assert form.run_button.disabled
    assert "Run is disabled" in form.notice.value and "danger_full_access" in form.notice.value
    allowed = ToolForm(reg.get("register_person"), reg)
    assert not allowed.run_button.disabled and allowed.notice.value == ""
