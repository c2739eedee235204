"""A tool that asks (``ctx.elicit``) during a call made from the notebook's form: a form
generated from the requested schema appears in the result pane; the real widgets are driven
as a user would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from nbhelpers import wait_for

from nexus_jupyter import CallerUnavailable, Registry, ToolContext, tool
from nexus_jupyter.notebook.widgets.elicit import ElicitForm
from nexus_jupyter.notebook.widgets.form import ToolForm
from nexus_jupyter.sources.mcp import McpSource

BOOKING_SCHEMA = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "Day of arrival"},
        "nights": {"type": "integer", "minimum": 1, "default": 2},
        "room": {"type": "string", "enum": ["single", "double"], "default": "double"},
        "breakfast": {"type": "boolean", "default": True},
    },
    "required": ["date"],
}


@tool
async def book(hotel: str, ctx: ToolContext) -> str:
    """Book a hotel, asking the details."""
    answer = await ctx.elicit(f"When do you arrive at {hotel}?", BOOKING_SCHEMA)
    if not answer.accepted:
        return f"no booking ({answer.action})"
    c = answer.content
    meal = " with breakfast" if c["breakfast"] else ""
    return f"{hotel}: {c['nights']} nights in a {c['room']} room from {c['date']}{meal}"


@tool
async def summarise(text: str, ctx: ToolContext) -> str:
    """Ask a model (which the notebook does not have)."""
    try:
        said = await ctx.sample(f"Summarise: {text}")
    except CallerUnavailable as exc:
        return f"no model: {exc}"
    return said.text


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry(search="keyword")
    for fn in (book, summarise):
        registry.add(fn)
    yield registry
    registry.close()


def test_the_tool_asks_and_the_answer_comes_from_the_generated_form(reg: Registry) -> None:
    form = ToolForm(reg.get("book"), reg)
    form.fields.fields["hotel"].control.value = "Ritz"
    form.run_button.click()
    asked = wait_for(lambda: form.result.approval_area.children)[0]
    assert isinstance(asked, ElicitForm)
    assert "When do you arrive at Ritz?" in asked.message.value
    fields = asked.fields.fields  # type: ignore[attr-defined]
    assert set(fields) == {"date", "nights", "room", "breakfast"}
    assert fields["nights"].get() == 2 and fields["room"].get() == "double"  # defaults
    assert form.result.running  # the tool waits for the answer
    fields["date"].control.value = "2026-12-24"
    fields["breakfast"].set(False)  # the true / false dropdown
    asked.submit_button.click()
    assert form.result.wait(5)
    assert form.result.result.structured == "Ritz: 2 nights in a double room from 2026-12-24"


def test_decline_and_cancel_reach_the_tool(reg: Registry) -> None:
    form = ToolForm(reg.get("book"), reg)
    form.fields.fields["hotel"].control.value = "Ritz"
    form.run_button.click()
    wait_for(lambda: form.result.approval_area.children)[0].decline_button.click()
    assert form.result.wait(5) and form.result.result.structured == "no booking (decline)"
    form.run_button.click()
    wait_for(lambda: form.result.approval_area.children)[0].cancel_button.click()
    assert form.result.wait(5) and form.result.result.structured == "no booking (cancel)"


def test_cancelling_the_call_while_it_waits(reg: Registry) -> None:
    form = ToolForm(reg.get("book"), reg)
    form.fields.fields["hotel"].control.value = "Ritz"
    form.run_button.click()
    wait_for(lambda: form.result.approval_area.children)
    form.result.cancel_button.click()
    assert form.result.wait(5)
    assert "cancelled" in (form.result.error or "")


def test_sampling_from_the_notebook_says_there_is_no_model(reg: Registry) -> None:
    form = ToolForm(reg.get("summarise"), reg)
    form.fields.fields["text"].control.value = "a long text"
    form.run_button.click()
    assert form.result.wait(5)
    assert "the notebook has no model to ask" in form.result.result.structured


EVERYTHING = (
    Path(__file__).resolve().parents[1]
    / "mcp_peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
)
NODE22 = Path(__file__).resolve().parents[1] / "conformance/node_modules/.bin/node"


@pytest.mark.skipif(
    not EVERYTHING.exists() or not NODE22.exists(),
    reason="server-everything is not installed: run `make npm-deps`",
)
def test_an_upstream_task_question_is_answered_in_the_notebook() -> None:
    """server-everything's task-only research tool, run from the form: its clarifying
    question (asked inside its task) appears as a notebook form, and the answer gets back."""
    registry = Registry(search="keyword")
    registry.add_source(
        McpSource("everything", command=str(NODE22), args=[str(EVERYTHING), "stdio"])
    )
    name = "mcp__everything__simulate-research-query"
    try:
        tool_ = wait_for(lambda: registry.find(name), timeout=30)
        form = ToolForm(tool_, registry)
        form.set_arguments({"topic": "tides", "ambiguous": True})
        form.run_button.click()
        asked = wait_for(lambda: form.result.approval_area.children, timeout=30)[0]
        assert isinstance(asked, ElicitForm) and "tides" in asked.message.value
        interpretation = asked.fields.fields["interpretation"]  # type: ignore[attr-defined]
        interpretation.set(interpretation.schema["oneOf"][0]["const"])
        asked.submit_button.click()
        assert form.result.wait(30), "the research task did not finish"
        chosen = interpretation.schema["oneOf"][0]["const"]
        assert f"tides ({chosen})" in form.result.result.text
    finally:
        registry.close()
