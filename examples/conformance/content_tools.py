"""Tools of the conformance suite's tools-call-* scenarios: each content type, errors and
progress."""

from __future__ import annotations

import asyncio
import base64
import io
import wave

from nexus_jupyter import Audio, Content, EmbeddedResource, Image, ToolContext, tool

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


def _silent_wav() -> bytes:
    """A tenth of a second of 8 kHz mono silence."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\x00\x00" * 800)
    return out.getvalue()


@tool
def test_audio_content() -> Audio:
    """Return a short WAV clip."""
    return Audio(_silent_wav(), "audio/wav")


@tool
def test_embedded_resource() -> EmbeddedResource:
    """Return a text resource embedded in the result."""
    return EmbeddedResource(
        "test://embedded-resource",
        text="This is an embedded resource content.",
        mime_type="text/plain",
    )


@tool
def test_multiple_content_types() -> list[Content | str]:
    """Return text, an image and an embedded resource together."""
    return [
        "Multiple content types test:",
        Image(RED_PIXEL_PNG, "image/png"),
        EmbeddedResource(
            "test://mixed-content-resource",
            text='{"test": "data", "value": 123}',
            mime_type="application/json",
        ),
    ]


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


@tool
async def test_tool_with_logging(ctx: ToolContext) -> str:
    """Send three info log messages about 50 ms apart, then finish."""
    for step in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        ctx.log.info(step)
        await asyncio.sleep(0.05)
    return "Logging complete"
