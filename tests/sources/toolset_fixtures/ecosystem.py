"""One toolset per ecosystem library, built with the real libraries."""

from __future__ import annotations

from agents import function_tool
from langchain_core.tools import StructuredTool
from langchain_core.tools import tool as lc_tool
from pydantic_ai import Tool as PaTool
from pydantic_ai.toolsets import FunctionToolset


@lc_tool
def lc_multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


async def _shout(text: str) -> str:
    return text.upper()


lc_shout = StructuredTool.from_function(
    coroutine=_shout, name="lc_shout", description="Shout the text (async)."
)
langchain_tools = [lc_multiply, lc_shout]


def pa_subtract(a: int, b: int) -> int:
    """Subtract b from a."""
    return a - b


async def pa_wipe(path: str) -> str:
    """Pretend to wipe a path (pydantic-ai says it needs approval)."""
    return f"wiped {path}"


pydantic_ai_toolset = FunctionToolset([pa_subtract, PaTool(pa_wipe, requires_approval=True)])


@function_tool
def oa_power(base: int, exponent: int) -> int:
    """Raise base to exponent."""
    return base**exponent


@function_tool(needs_approval=True)
async def oa_delete(name: str) -> str:
    """Delete a record (the SDK says it needs approval)."""
    return f"deleted {name}"


@function_tool
def oa_find(name: str) -> str:
    """Find a record by name."""
    raise LookupError(f"no record named {name!r}")


openai_agents_tools = [oa_power, oa_delete, oa_find]
