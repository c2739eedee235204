"""Tools of the conformance suite's tasks-* scenarios (the ``io.modelcontextprotocol/tasks``
extension, MCP 2026-07-28): long calls that a client declaring the extension gets as tasks
to poll, ordinary tools declared ``@tool(task=...)``."""

from __future__ import annotations

import asyncio

from nexus_jupyter import ToolContext, ToolUnavailable, tool


def _ask(field: str, kind: str = "string") -> dict[str, object]:
    return {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}


@tool
def greet(name: str) -> str:
    """Greet someone (never a task)."""
    return f"Hello, {name}!"


@tool(task=True)
async def slow_compute(seconds: float, ctx: ToolContext, label: str = "") -> str:
    """Work for ``seconds`` seconds, reporting progress each second, then say so."""
    for done in range(int(seconds)):
        await ctx.progress(done, seconds, f"working on {label or 'it'}")
        await asyncio.sleep(1)
    await asyncio.sleep(seconds - int(seconds))
    return f"computed {label or 'it'} in {seconds:g} s"


@tool(task="required")
async def failing_job() -> str:
    """Work for a second, then fail (a tool error: the task completes with isError)."""
    await asyncio.sleep(1)
    raise RuntimeError("the job failed on purpose")


@tool(task=True)
async def protocol_error_job() -> str:
    """Lose the worker it runs on: the tool could not run, so its task fails."""
    await asyncio.sleep(0.2)
    raise ToolUnavailable("the job's worker process went away")


@tool(task=True)
async def confirm_delete(filename: str, ctx: ToolContext) -> str:
    """Ask the user to confirm deleting ``filename`` (nothing is deleted)."""
    answer = await ctx.elicit(f"Delete {filename}?", _ask("confirm", "boolean"))
    confirmed = answer.accepted and bool(answer.content.get("confirm"))
    return f"{filename}: {'deleted' if confirmed else 'kept'}"


@tool(task=True)
async def multi_input(ctx: ToolContext) -> str:
    """Ask two questions at once."""
    first, second = await asyncio.gather(
        ctx.elicit("First name?", _ask("name")), ctx.elicit("Second name?", _ask("name"))
    )
    return f"{first.content.get('name')} and {second.content.get('name')}"


@tool(task="required", task_start="tool")
async def test_tool_with_task(ctx: ToolContext) -> str:
    """Ask the user's name in an input-required round, then go on as a task."""
    answer = await ctx.elicit("What is your name?", _ask("name"), key="user_name")
    await ctx.start_task()
    await asyncio.sleep(0.5)
    return f"Hello, {answer.content.get('name', 'stranger')}, from a task!"
