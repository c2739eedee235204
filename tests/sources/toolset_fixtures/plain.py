"""A module of plain functions: a toolset with no library."""

from __future__ import annotations

import asyncio


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def slow_echo(text: str) -> str:
    """Echo text after yielding to the loop."""
    await asyncio.sleep(0)
    return text


def _private() -> None:
    """Not a tool: private."""


def research_tools() -> list[object]:
    """What an entry point names: a function returning the toolset's tools."""
    return [add, slow_echo]
