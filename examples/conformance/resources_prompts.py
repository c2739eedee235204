"""Resources and prompts of the conformance suite's resources-* and prompts-* scenarios."""

from __future__ import annotations

import base64
import json

from nexus_jupyter import EmbeddedResource, Image, ToolContext, prompt, resource

# A 1x1 red PNG.
RED_PIXEL_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)


@resource("test://static-text", mime_type="text/plain")
def static_text() -> str:
    """A fixed text resource."""
    return "This is the content of the static text resource."


@resource("test://static-binary", mime_type="image/png")
def static_binary() -> bytes:
    """A fixed binary resource (a PNG image)."""
    return RED_PIXEL_PNG


@resource("test://template/{id}/data", mime_type="application/json")
def template_data(id: str) -> str:
    """Data for one id (a resource template)."""
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@resource("test://watched-resource", mime_type="text/plain")
def watched_resource() -> str:
    """A resource clients may subscribe to."""
    return "Watched resource content"


@prompt
def test_simple_prompt() -> str:
    """A prompt without arguments."""
    return "This is a simple prompt for testing."


@prompt
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    """A prompt with two required arguments.

    Args:
        arg1: First test argument
        arg2: Second test argument
    """
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@prompt
def test_prompt_with_embedded_resource(resourceUri: str) -> list[object]:
    """A prompt that embeds the resource it is given.

    Args:
        resourceUri: URI of the resource to embed
    """
    return [
        EmbeddedResource(
            resourceUri, text="Embedded resource content for testing.", mime_type="text/plain"
        ),
        "Please process the embedded resource above.",
    ]


@prompt
def test_prompt_with_image() -> list[object]:
    """A prompt with an image."""
    return [Image(RED_PIXEL_PNG, "image/png"), "Please analyze the image above."]


@prompt
async def test_input_required_result_prompt(ctx: ToolContext) -> str:
    """A prompt that asks the user for its context first."""
    answer = await ctx.elicit(
        "What context should the prompt use?",
        {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]},
        key="user_context",
    )
    return f"Use this context: {answer.content.get('context')}"
