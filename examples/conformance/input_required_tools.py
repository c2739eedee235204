"""Tools of the conformance suite's input-required-result-* scenarios (MCP 2026-07-28
multi-round-trip requests). Each asks through ``ctx`` like any tool; ``key=`` names the
question as the suite expects. At earlier revisions the same tools ask mid-call instead."""

from __future__ import annotations

import asyncio

from nexus_jupyter import CallerUnavailable, ToolContext, tool


def _schema(field: str, kind: str = "string") -> dict[str, object]:
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


@tool
async def test_input_required_result_elicitation(ctx: ToolContext) -> str:
    """Ask the user's name, then greet them."""
    answer = await ctx.elicit("What is your name?", _schema("name"), key="user_name")
    return f"Hello, {answer.content.get('name', 'stranger')}!"


@tool
async def test_input_required_result_sampling(ctx: ToolContext) -> str:
    """Ask the client's model a question and return its answer."""
    answer = await ctx.sample(
        "What is the capital of France?", max_tokens=100, key="capital_question"
    )
    return f"The model said: {answer.text}"


@tool
async def test_input_required_result_list_roots(ctx: ToolContext) -> str:
    """List the client's roots."""
    roots = await ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(r["uri"] for r in roots)


@tool
async def test_input_required_result_request_state(ctx: ToolContext) -> str:
    """Ask for a confirmation; the answer only arrives with a valid request state."""
    answer = await ctx.elicit("Please confirm", _schema("ok", "boolean"), key="confirm")
    return f"state-ok: confirmed={answer.content.get('ok')}"


@tool
async def test_input_required_result_multiple_inputs(ctx: ToolContext) -> str:
    """Ask the user, the model and the roots at once (one round)."""
    name, greeting, roots = await asyncio.gather(
        ctx.elicit("What is your name?", _schema("name"), key="user_name"),
        ctx.sample("Generate a greeting", max_tokens=50, key="greeting"),
        ctx.list_roots(key="client_roots"),
    )
    return f"{greeting.text} {name.content.get('name')} ({len(roots)} roots)"


@tool
async def test_input_required_result_multi_round(ctx: ToolContext) -> str:
    """Ask two questions, one round each."""
    name = await ctx.elicit("Step 1: What is your name?", _schema("name"), key="step1")
    color = await ctx.elicit("Step 2: What is your favorite color?", _schema("color"), key="step2")
    return f"{name.content.get('name')} likes {color.content.get('color')}"


@tool
async def test_input_required_result_tampered_state(ctx: ToolContext) -> str:
    """Ask once; a changed request state is refused before the tool runs again."""
    answer = await ctx.elicit("Please confirm", _schema("ok", "boolean"), key="confirm")
    return f"confirmed={answer.content.get('ok')}"


@tool
async def test_input_required_result_capabilities(ctx: ToolContext) -> str:
    """Ask the user if the client can, else its model."""
    try:
        answer = await ctx.elicit("What is your name?", _schema("name"), key="user_name")
        return f"Hello, {answer.content.get('name')}!"
    except CallerUnavailable:
        said = await ctx.sample("Make up a name", max_tokens=20, key="made_up_name")
        return f"Hello, {said.text}!"


@tool
async def test_missing_capability(ctx: ToolContext) -> str:
    """Needs sampling: a client that did not declare it gets -32021 (2026-07-28)."""
    said = await ctx.sample("Say hi", max_tokens=10, key="hi")
    return said.text


@tool
async def test_streaming_elicitation(ctx: ToolContext) -> str:
    """Asks the user; at 2026-07-28 that is an input-required result, never a request on
    the response stream."""
    answer = await ctx.elicit("Continue?", _schema("ok", "boolean"), key="go_on")
    return f"go on: {answer.content.get('ok')}"


@tool
def test_logging_tool(ctx: ToolContext) -> str:
    """Logs; a client that did not opt into a log level gets no log message."""
    ctx.log.info("a log message only clients that asked for logs get")
    return "logged"
