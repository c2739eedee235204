"""Resources, prompts, completion, logging, elicitation, sampling and content types of
``nexus-tools serve``: a real server process on a real tools folder, the real SDK client."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

TOOL_FILE = '''
import asyncio
from typing import Literal

from nexus_jupyter import Audio, Content, Image, ResourceLink, ToolContext, prompt, resource, tool

PNG = bytes.fromhex("89504e470d0a1a0a")


@tool
def picture() -> Image:
    """An image."""
    return Image(PNG)


@tool
def mixed() -> list[Content | str]:
    """Text, audio and a link."""
    return ["look:", Audio(b"RIFF", "audio/wav"), ResourceLink("notes://today", "today")]


@tool
def untyped_picture() -> dict:
    """Declares a dict, returns an image."""
    return Image(PNG)


@tool
def is_on(flag: bool) -> bool:
    """Echo a boolean."""
    return flag


@tool
def count(n: int) -> int:
    """Echo an integer."""
    return n


@tool
def chatty(ctx: ToolContext) -> str:
    """Log at three levels from a sync tool."""
    ctx.log.debug("details")
    ctx.log.info("step one")
    ctx.log.warning("careful")
    return "done"


@tool
async def ask(ctx: ToolContext) -> str:
    """Ask the user, then the model."""
    answer = await ctx.elicit("Your name?", {"type": "object",
                              "properties": {"name": {"type": "string"}}})
    if not answer.accepted:
        return "declined"
    said = await ctx.sample(f"Greet {answer.content['name']}", max_tokens=20)
    return f"{answer.content['name']}: {said.text}"


@resource("notes://today", mime_type="text/markdown")
def today() -> str:
    """Today's notes."""
    return "# Today"


@resource("users://{user_id}/profile")
def profile(user_id: Literal["ada", "alan", "grace"]) -> dict:
    """A user's profile."""
    return {"id": user_id}


@prompt
def review(code: str, style: Literal["terse", "thorough"] = "terse") -> str:
    """Review code.

    Args:
        code: the code to review
    """
    return f"Review ({style}): {code}"
'''

SECOND_PROMPT = '''
from nexus_jupyter import prompt


@prompt
def summarise(text: str) -> str:
    """Summarise a text."""
    return "Summarise: " + text
'''


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``nexus-tools serve --transport http`` on a folder with one tool file."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "features.py").write_text(TOOL_FILE)
    extra = ("--root", str(tmp_path), "--dir", str(folder))
    with serve_http(tmp_path, *extra, clean_stop=True) as served:
        yield served.url, folder


class Client:
    """What the client saw: log messages and notifications."""

    def __init__(self) -> None:
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.prompts_changed = asyncio.Event()
        self.elicited: list[Any] = []

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, types.PromptListChangedNotification):
            self.prompts_changed.set()

    async def on_elicit(self, context: Any, params: Any) -> types.ElicitResult:
        self.elicited.append(params)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def on_sample(self, context: Any, params: Any) -> types.CreateMessageResult:
        text = params.messages[0].content.text
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text=f"hello ({text})"),
            model="fake-model",
        )

    def connect(self, url: str, mode: str) -> mcp.Client:
        return mcp.Client(
            url,
            mode=mode,  # type: ignore[arg-type]
            logging_callback=self.on_log,
            message_handler=self.on_message,
            elicitation_callback=self.on_elicit,
            sampling_callback=self.on_sample,
        )


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_resources_prompts_and_completion(server: tuple[str, Path], mode: str) -> None:
    url, _ = server
    async with Client().connect(url, mode) as client:
        resources = {r.uri: r for r in (await client.list_resources()).resources}
        assert resources["notes://today"].mime_type == "text/markdown"
        assert resources["notes://today"].description == "Today's notes."
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["users://{user_id}/profile"]
        read = await client.read_resource("notes://today")
        assert read.contents[0].text == "# Today"  # type: ignore[union-attr]
        profile = await client.read_resource("users://ada/profile")
        assert profile.contents[0].text == '{"id": "ada"}'  # type: ignore[union-attr]
        with pytest.raises(mcp.MCPError) as missing:
            await client.read_resource("notes://nowhere")
        assert missing.value.code == types.INVALID_PARAMS
        assert missing.value.data == {"uri": "notes://nowhere"}

        (review,) = (await client.list_prompts()).prompts
        assert review.name == "review" and review.arguments is not None
        args = {a.name: a for a in review.arguments}
        assert args["code"].required and not args["style"].required
        assert args["code"].description == "the code to review"
        got = await client.get_prompt("review", {"code": "x = 1", "style": "thorough"})
        assert got.messages[0].content.text == "Review (thorough): x = 1"  # type: ignore[union-attr]
        with pytest.raises(mcp.MCPError, match="required argument 'code' is missing"):
            await client.get_prompt("review", {})

        ref = types.PromptReference(type="ref/prompt", name="review")
        done = await client.complete(ref, {"name": "style", "value": "th"})
        assert done.completion.values == ["thorough"]
        template_ref = types.ResourceTemplateReference(
            type="ref/resource", uri="users://{user_id}/profile"
        )
        done = await client.complete(template_ref, {"name": "user_id", "value": "a"})
        assert done.completion.values == ["ada", "alan"]


async def test_content_types_and_strict_types(server: tuple[str, Path]) -> None:
    url, _ = server
    async with Client().connect(url, "legacy") as client:
        listing = {t.name: t for t in (await client.list_tools()).tools}
        assert listing["picture"].output_schema is None  # content only: no schema
        assert listing["mixed"].output_schema is None
        picture = await client.call_tool("picture", {})
        assert [b.type for b in picture.content] == ["image"]
        assert picture.structured_content is None
        wrong = await client.call_tool("untyped_picture", {})
        assert wrong.is_error and "Annotate its return type" in wrong.content[0].text  # type: ignore[union-attr]
        mixed = await client.call_tool("mixed", {})
        assert [b.type for b in mixed.content] == ["text", "audio", "resource_link"]
        # A JSON boolean is not an integer, nor an integer a boolean.
        assert (await client.call_tool("count", {"n": True})).is_error
        assert (await client.call_tool("is_on", {"flag": 1})).is_error
        assert (await client.call_tool("count", {"n": 3})).structured_content == {"result": 3}


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_logging_elicitation_and_sampling_at_2025(server: tuple[str, Path]) -> None:
    url, _ = server
    seen = Client()
    async with seen.connect(url, "legacy") as client:
        await client.set_logging_level("info")
        result = await client.call_tool("chatty", {})
        assert not result.is_error
        # sent before the result, in order, and below the chosen level nothing
        assert [(m.level, m.data, m.logger) for m in seen.logs] == [
            ("info", "step one", "chatty"),
            ("warning", "careful", "chatty"),
        ]
        asked = await client.call_tool("ask", {})
        assert asked.content[0].text == "Ada: hello (Greet Ada)"  # type: ignore[union-attr]
        assert seen.elicited[0].message == "Your name?"


async def test_at_2026_logs_need_opt_in_and_questions_take_rounds(
    server: tuple[str, Path],
) -> None:
    url, _ = server
    seen = Client()
    async with seen.connect(url, "auto") as client:
        await client.call_tool("chatty", {})
        assert seen.logs == []  # no logLevel in the request: nothing may be sent
        # The SDK client answers the input-required results and calls again, twice here.
        asked = await client.call_tool("ask", {})
        assert asked.content[0].text == "Ada: hello (Greet Ada)"  # type: ignore[union-attr]
        first = await client.session.call_tool("ask", {}, allow_input_required=True)
        assert isinstance(first, types.InputRequiredResult)
        assert list(first.input_requests) == ["elicitation-1"]
        assert first.request_state
        forged = first.request_state[:-4] + "AAAA"
        with pytest.raises(mcp.MCPError, match="integrity"):
            await client.session.call_tool(
                "ask", {}, request_state=forged, allow_input_required=True
            )


async def test_a_prompt_saved_during_the_session_is_announced(server: tuple[str, Path]) -> None:
    url, folder = server
    seen = Client()
    async with seen.connect(url, "legacy") as client:
        assert [p.name for p in (await client.list_prompts()).prompts] == ["review"]
        (folder / "more.py").write_text(SECOND_PROMPT)
        await asyncio.wait_for(seen.prompts_changed.wait(), 15)
        names = {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}
        assert names == {"review", "summarise"}
        got = await client.get_prompt("summarise", {"text": "abc"})
        assert got.messages[0].content.text == "Summarise: abc"  # type: ignore[union-attr]
        (folder / "more.py").unlink()
        seen.prompts_changed.clear()
        await asyncio.wait_for(seen.prompts_changed.wait(), 15)
        names = {p.name for p in (await client.list_prompts(cache_mode="refresh")).prompts}
        assert names == {"review"}
