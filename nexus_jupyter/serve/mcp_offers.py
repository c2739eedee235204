"""Resources, resource templates, prompts and completion for the MCP server, read live
from the registry's :class:`~nexus_jupyter.core.registry.catalog.Catalog`.

A URI that names no resource is ``-32602`` with the URI in the error's ``data``; so is an
unknown prompt or a prompt called with missing or unknown arguments. Completion offers the
values of ``Literal`` parameters of prompts and resource templates, those starting with what
the user typed first.

A resource or prompt that raises is an error worded for an agent, its class name after its
message (``Reading resource 'file:///notes' failed: [Errno 2] No such file ...
(FileNotFoundError). ...``); over HTTP its paths are shown as :mod:`.mcp_paths` says.
"""

from __future__ import annotations

import logging
from typing import Any

from ..core.errors import NexusError
from ..core.registry.catalog import Catalog
from ..core.tools.channel import CURRENT_CHANNEL, InputRequired
from ..core.tools.context import ToolContext
from ..core.tools.offers import PromptDef
from ..core.tools.tool_traceback import format_tool_traceback
from .mcp_bridge import failed_text, refusal_names
from .mcp_channel import LogLevels, McpClientChannel
from .mcp_input import RoundTrip, StateError
from .mcp_paths import ShownPaths

__all__ = ["OfferHandlers", "prompt_argument_errors", "prompt_arguments_text"]

log = logging.getLogger(__name__)

MAX_COMPLETIONS = 100  # what the protocol allows in one answer


class OfferHandlers:
    """The low-level ``Server`` handlers over one catalog; ``paths``: how the client is
    shown this machine's paths in errors (``None``: in full, over stdio)."""

    def __init__(
        self, catalog: Catalog, log_levels: LogLevels, paths: ShownPaths | None = None
    ) -> None:
        self.catalog = catalog
        self.log_levels = log_levels
        self.paths = paths

    def _shown(self, text: str) -> str:
        return self.paths.text(text) if self.paths is not None else text

    def _described(self, text: str | None) -> str | None:
        """A description as this client is shown it (paths in the workspace short over HTTP,
        as tools' descriptions are)."""
        return self._shown(text) if text else text

    def _failed(self, what: str, exc: Exception, advice: str) -> str:
        """An exception a resource or prompt raised, worded for the agent."""
        return failed_text(what, self._shown(str(exc)), type(exc).__name__, advice)

    async def list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourcesResult(
            resources=[
                types.Resource(
                    uri=r.uri,
                    name=r.name,
                    title=r.title,
                    description=self._described(r.description),
                    mime_type=r.mime_type,
                )
                for r in self.catalog.resources()
            ]
        )

    async def list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=t.uri,
                    name=t.name,
                    title=t.title,
                    description=self._described(t.description),
                    mime_type=t.mime_type,
                )
                for t in self.catalog.templates()
            ]
        )

    async def read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError
        from pydantic import TypeAdapter

        uri = str(params.uri)
        found = self.catalog.find_resource(uri)
        if found is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Resource not found: {uri!r}. List them with resources/list and "
                "resources/templates/list.",
                data={"uri": uri},
            )
        try:
            contents = await found.read(uri)
        except NexusError as exc:
            raise MCPError(types.INVALID_PARAMS, self._shown(str(exc)), data={"uri": uri}) from None
        except Exception as exc:
            log.warning("resource %s failed: %s", uri, exc, exc_info=True)
            text = self._failed(
                f"Reading resource {uri!r}",
                exc,
                "If the URI was wrong, read another one; otherwise tell the user the resource "
                "is failing.",
            )
            raise MCPError(types.INTERNAL_ERROR, text, data={"uri": uri}) from None
        adapter: Any = TypeAdapter(types.TextResourceContents | types.BlobResourceContents)
        return types.ReadResourceResult(contents=[adapter.validate_python(c) for c in contents])

    async def list_prompts(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=p.name,
                    title=p.title,
                    description=self._described(p.description),
                    arguments=[
                        types.PromptArgument(
                            name=a.name,
                            description=self._described(a.description),
                            required=a.required,
                        )
                        for a in p.arguments
                    ],
                )
                for p in self.catalog.prompts()
            ]
        )

    async def get_prompt(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        found = self.catalog.find_prompt(params.name)
        if found is None:
            known = ", ".join(p.name for p in self.catalog.prompts()) or "none"
            raise MCPError(
                types.INVALID_PARAMS, f"Unknown prompt {params.name!r}; the prompts are: {known}."
            )
        arguments = dict(params.arguments or {})
        wrong = prompt_argument_errors(found, arguments)
        if wrong:
            raise MCPError(
                types.INVALID_PARAMS,
                prompt_arguments_text(found, wrong),
                data={"prompt": found.name, "errors": wrong},
            )
        try:
            asked = await self._render_asking(ctx, found, arguments, params)
            if not isinstance(asked, list):
                return asked  # the prompt asked the client: an input-required result
            messages = asked
        except StateError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None
        except NexusError as exc:
            raise MCPError(types.INVALID_PARAMS, self._shown(str(exc))) from None
        except Exception as exc:
            if type(exc).__name__ in refusal_names():  # ours, from a worker process
                raise MCPError(types.INVALID_PARAMS, self._shown(str(exc))) from None
            # the prompt's own frames (where it ran: here or a worker), not our machinery
            log.warning("prompt %s failed:\n%s", found.name, format_tool_traceback(exc))
            text = self._failed(
                f"Prompt {found.name!r}",
                exc,
                "If your arguments caused it, get it again with other ones; otherwise tell the "
                "user the prompt is failing.",
            )
            raise MCPError(types.INTERNAL_ERROR, text) from None
        return types.GetPromptResult(
            description=self._described(found.description),
            messages=[types.PromptMessage.model_validate(m) for m in messages],
        )

    async def _render_asking(
        self, ctx: Any, found: PromptDef, arguments: dict[str, str], params: Any
    ) -> Any:
        """Render a prompt that may ask the client, as a tool does: its messages, or the
        input-required result for its questions (2026-07-28)."""
        if found.context_param is None:
            return await found.render(arguments)
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        round_trip = None
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            round_trip = RoundTrip(
                f"prompt:{found.name}", arguments, params.input_responses, params.request_state
            )
        caller = McpClientChannel(ctx, self.log_levels, round_trip)
        bound = CURRENT_CHANNEL.set(caller)
        try:
            tool_ctx = ToolContext(tool_name=found.name)
        finally:
            CURRENT_CHANNEL.reset(bound)
        try:
            messages = await found.render(arguments, tool_ctx)
        except InputRequired:
            if round_trip is None or not round_trip.questions:
                raise
            return round_trip.result()
        finally:
            await caller.flush()
        return messages

    async def complete(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        ref = params.ref
        if getattr(ref, "type", "") == "ref/prompt":
            target: Any = self.catalog.find_prompt(ref.name)
        else:
            target = self.catalog.find_template(str(getattr(ref, "uri", "")))
        choices = target.choices.get(params.argument.name, ()) if target is not None else ()
        typed = params.argument.value or ""
        values = [c for c in choices if c.startswith(typed)]
        return types.CompleteResult(
            completion=types.Completion(
                values=values[:MAX_COMPLETIONS],
                total=len(values),
                has_more=len(values) > MAX_COMPLETIONS,
            )
        )


def prompt_argument_errors(found: PromptDef, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """What is wrong with ``arguments`` for prompt ``found``, by its signature: a required
    argument missing, an argument it does not take, a value its ``Literal`` does not allow.
    Each as ``{"argument", "problem"}`` (and ``"value"``, ``"allowed"`` for a value not
    allowed); ``[]`` when they fit."""
    known = {a.name for a in found.arguments}
    wrong: list[dict[str, Any]] = [
        {"argument": a.name, "problem": "missing"}
        for a in found.arguments
        if a.required and a.name not in arguments
    ]
    wrong += [{"argument": name, "problem": "unknown"} for name in arguments if name not in known]
    for name, value in arguments.items():
        allowed = found.choices.get(name)
        if allowed and name in known and str(value) not in allowed:
            wrong.append(
                {
                    "argument": name,
                    "problem": "not allowed",
                    "value": value,
                    "allowed": list(allowed),
                }
            )
    return wrong


def prompt_arguments_text(found: PromptDef, wrong: list[dict[str, Any]]) -> str:
    """The client's error for ``wrong`` arguments: each problem, then what the prompt
    takes (which are required, and the values of those that allow only some)."""
    problems = []
    for w in wrong:
        name = w["argument"]
        if w["problem"] == "missing":
            problems.append(f"the required argument {name!r} is missing")
        elif w["problem"] == "unknown":
            problems.append(f"it has no argument {name!r}")
        else:
            values = ", ".join(repr(v) for v in w["allowed"])
            problems.append(f"argument {name!r} must be one of {values}, not {w['value']!r}")
    takes = []
    for a in found.arguments:
        facts = ["required" if a.required else "optional"]
        if found.choices.get(a.name):
            facts.append("one of " + ", ".join(repr(v) for v in found.choices[a.name]))
        takes.append(f"{a.name} ({'; '.join(facts)})")
    return (
        f"Prompt {found.name!r}: {'; '.join(problems)}. It takes: "
        + (", ".join(takes) or "no arguments")
        + "."
    )
