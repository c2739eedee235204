"""Tools of the conformance suite's tools-call-* scenarios: each content type, errors and
progress."""

from __future__ import annotations

import asyncio
import base64

from nexus_jupyter import Image, ToolContext, tool

# A 1x1 red PNG, the smallest image the suite accepts.
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


@tool
def test_simple_text() -> str:
    """Return a fixed text (the simplest tool result)."""
    return "This is a simple text response for testing."


@tool
def test_image_content() -> Image:
    """Return a 1x1 red PNG image."""
    return Image(RED_PIXEL_PNG, "image/png")


@tool
def test_error_handling() -> str:
    """Always fail, so the client sees a tool error (isError) with a message."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool
async def test_tool_with_progress(ctx: ToolContext) -> str:
    """Report progress 0, 50 and 100 of 100, then finish."""
    for done in (0, 50, 100):
        await ctx.progress(done, 100, f"{done}% done")
        await asyncio.sleep(0.05)
    return "Progress complete"
