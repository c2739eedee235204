"""The test-call form's two views of one call: the fields and the JSON box show the same
arguments whichever way the user switches, and a switch that would lose something stays put
and says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal

import pytest
from pydantic import BaseModel

from nexus_jupyter import Registry, tool
from nexus_jupyter.notebook.widgets.form import ToolForm


class Address(BaseModel):
    street: str
    number: int = 1


@tool
def book(
    name: str,
    nights: int,
    room: Literal["single", "double"] = "single",
    notes: str = "",
    extras: list[str] | None = None,
    address: Address | None = None,
) -> dict:
    """Book a room."""
    return {"name": name, "nights": nights}


@pytest.fixture
def form() -> Iterator[ToolForm]:
    reg = Registry(search="keyword")
    reg.add(book)
    form = ToolForm(reg.get("book"), reg)
    yield form
    form.close()
    reg.close()


def to_json(form: ToolForm) -> dict:
    form.mode.value = "JSON"
    assert form.mode.value == "JSON", form.form_error.value
    return json.loads(form.raw.value)


def test_edits_in_the_json_reach_the_fields_keys_taken_out_included(form: ToolForm) -> None:
    fields = form.fields.fields
    fields["name"].control.value = "Ada"
    fields["nights"].control.value = "3"
    fields["notes"].control.value = "late arrival"
    fields["extras"].inner.add_button.click()
    fields["extras"].inner.items[0].control.value = "breakfast"
    assert to_json(form) == {
        "name": "Ada",
        "nights": 3,
        "notes": "late arrival",
        "extras": ["breakfast"],
    }
    form.raw.value = json.dumps({"name": "Bo", "nights": 2, "room": "double"})
    form.mode.value = "form"
    assert form.mode.value == "form" and form.form_error.value == ""
    # what the JSON left out is gone from the fields too, not left over from before
    assert fields["notes"].control.value == "" and not fields["extras"].use.value
    assert fields["room"].get() == "double" and fields["nights"].control.value == "2"
    assert form.arguments() == {"name": "Bo", "nights": 2, "room": "double"}
    assert "%tool call book name=Bo nights=2 room=double" in form.command.value


def test_edits_in_the_fields_reach_the_json(form: ToolForm) -> None:
    form.mode.value = "JSON"
    form.raw.value = json.dumps({"name": "Ada", "nights": 1, "address": {"street": "Elm"}})
    form.mode.value = "form"
    address = form.fields.fields["address"]
    assert address.use.value and address.inner.fields["street"].control.value == "Elm"
    form.fields.fields["nights"].control.value = "4"
    address.use.value = False  # untick: the address is not sent
    assert to_json(form) == {"name": "Ada", "nights": 4}


def test_a_value_the_fields_cannot_read_keeps_the_form_and_says_where(form: ToolForm) -> None:
    form.fields.fields["name"].control.value = "Ada"
    form.fields.fields["nights"].control.value = "two"
    form.mode.value = "JSON"
    assert form.mode.value == "form"  # switching would have dropped "two"
    assert form.fields.widget.layout.display is None and form.raw.layout.display == "none"
    assert "not an integer" in form.fields.fields["nights"].error.value
    assert "Fix the field marked above to switch to JSON" in form.form_error.value
    form.fields.fields["nights"].control.value = "2"
    assert to_json(form) == {"name": "Ada", "nights": 2}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ('{"name": ', "could not read the JSON"),
        ("[1, 2]", "must be a JSON object"),
        ('{"name": "Ada", "nights": 1, "pets": 2}', "no field for &#x27;pets&#x27;"),
    ],
)
def test_json_the_form_cannot_show_keeps_the_json_view(
    form: ToolForm, raw: str, message: str
) -> None:
    form.fields.fields["name"].control.value = "Before"
    form.mode.value = "JSON"
    form.raw.value = raw
    form.mode.value = "form"
    assert form.mode.value == "JSON" and form.raw.value == raw  # nothing lost
    assert form.raw.layout.display is None and form.fields.widget.layout.display == "none"
    assert message in form.form_error.value
    assert form.fields.fields["name"].control.value == "Before"  # not half-applied


def test_a_json_value_of_the_wrong_type_shows_at_its_field(form: ToolForm) -> None:
    form.mode.value = "JSON"
    form.raw.value = '{"name": "Ada", "nights": "many"}'
    form.mode.value = "form"
    assert form.mode.value == "form"
    assert form.fields.fields["nights"].control.value == "many"
    assert "not an integer" in form.fields.fields["nights"].error.value


def test_set_arguments_shows_exactly_those_arguments(form: ToolForm) -> None:
    form.set_arguments({"name": "Ada", "nights": 2, "room": "double", "extras": ["spa"]})
    form.set_arguments({"name": "Bo", "nights": 1})  # a history entry put back
    assert form.arguments() == {"name": "Bo", "nights": 1}
    assert json.loads(form.raw.value) == {"name": "Bo", "nights": 1}
    assert (
        form.fields.fields["room"].get() is not None and not form.fields.fields["extras"].use.value
    )
