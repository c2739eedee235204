"""Translate between the registry's types and MCP wire types (for the MCP server face).

- :func:`mcp_tool` — a :class:`ToolSpec` as an MCP ``Tool`` listing entry;
- :func:`call_result` — a :class:`ToolResult` as a ``CallToolResult``;
- :func:`error_result` — a pre-call failure (invalid arguments, policy, missing credential,
  server down) as a tool error (``isError``) the model can read and correct.

MCP (through 2025-11-25) requires a tool's ``outputSchema`` and ``structuredContent`` to be
JSON objects, so a tool whose output is not an object is advertised with its schema wrapped
as ``{"result": <schema>}`` and its value sent as ``{"result": value}`` (as the SDK's own
MCPServer does).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..core.errors import NexusError, ToolValidationError
from ..core.tools.content import content_blocks
from ..core.tools.result import ToolResult
from ..core.tools.spec import ToolSpec

__all__ = [
    "FIELD_ERRORS_META_KEY",
    "SUMMARY_META_KEY",
    "WRAP_MARK",
    "call_result",
    "error_result",
    "mcp_tool",
    "output_schema",
]

#: ``_meta`` key of a validation error result: the per-field errors as JSON.
FIELD_ERRORS_META_KEY = "nexus-jupyter/fieldErrors"
#: ``_meta`` key of a call's result: the call in one human-readable line.
SUMMARY_META_KEY = "nexus-jupyter/summary"
WRAP_MARK = "x-nexus-wrapped"


def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The ``outputSchema`` to advertise: the tool's own when it is an object schema,
    otherwise wrapped as ``{"result": ...}``; ``None`` when the tool declares none."""
    schema = spec.output_schema
    if not schema:
        return None
    if _is_object_schema(schema):
        return dict(schema)
    return {
        "type": "object",
        "properties": {"result": dict(schema)},
        "required": ["result"],
        WRAP_MARK: True,
    }


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


def _annotations(spec: ToolSpec) -> dict[str, Any]:
    """The tool's own MCP annotations, else hints derived from its permission. A tool from
    an MCP server or an external toolset keeps what its source declared: absent stays
    absent (a client then assumes the MCP defaults: it may be destructive)."""
    if spec.source_kind == "mcp" or spec.source.startswith("toolset:"):
        return dict(spec.annotations)
    out: dict[str, Any] = {}
    for key, value in dict(spec.annotations).items():
        out[key] = value
    if "readOnlyHint" not in out:
        out["readOnlyHint"] = spec.permission == "read_only"
    if "destructiveHint" not in out and spec.permission != "read_only":
        out["destructiveHint"] = spec.permission == "danger_full_access"
    return out


def mcp_tool(spec: ToolSpec) -> Any:
    """The MCP ``Tool`` listing entry for ``spec``."""
    import mcp_types as types

    data: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "inputSchema": dict(spec.input_schema),
        **dict(spec.display),  # title, icons: as the tool's MCP server declared them
    }
    annotations = _annotations(spec)
    if annotations:
        data["annotations"] = annotations
    schema = output_schema(spec)
    if schema is not None:
        data["outputSchema"] = schema
    if spec.task_support != "forbidden":  # (a 2026-07-28 listing drops it: tasks/* tell there)
        data["execution"] = {"taskSupport": spec.task_support}
    meta: dict[str, Any] = {
        "nexus_jupyter/source": spec.source,
        "nexus_jupyter/version": spec.version,
        "nexus_jupyter/origin": spec.origin,
    }
    if spec.categories:
        meta["nexus_jupyter/categories"] = list(spec.categories)
    data["_meta"] = meta
    return types.Tool.model_validate(data)


#: Marks the content block of an error result that holds the tool's traceback.
TRACEBACK_MARK = "nexus_jupyter/traceback"


def call_result(result: ToolResult, spec: ToolSpec | None) -> Any:
    """The ``CallToolResult`` for a finished call (a failed tool gives ``isError``)."""
    import mcp_types as types

    # the call in one readable line, for clients that show what ran ("Fetching https://...")
    meta = {SUMMARY_META_KEY: result.summary} if result.describer is not None else None
    if result.is_error:
        text = result.error or "the tool failed"
        if result.error_type and result.error_type not in text:
            text = f"{result.error_type}: {text}"
        blocks: list[Any] = [types.TextContent(type="text", text=text)]
        trace = result.redacted().traceback
        if trace:  # the tool's own frames: an agent (or the server of a kernel) can fix it
            blocks.append(types.TextContent(type="text", text=trace, _meta={TRACEBACK_MARK: True}))
        return types.CallToolResult(content=blocks, is_error=True, _meta=meta)
    content = [_block(b) for b in result.content]
    structured = result.structured
    schema = output_schema(spec) if spec is not None else None
    if schema is not None and content_blocks(result.value) is not None:
        # A declared output schema must come with structured content, which an image or a
        # resource does not have: say how to fix the tool rather than break the protocol.
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text",
                    text=f"Tool {result.tool!r} declares a JSON return type but returned "
                    "content (an image, audio or a resource). Annotate its return type as "
                    "that content (e.g. -> Image or -> list[Content | str]).",
                )
            ],
            is_error=True,
        )
    if schema is not None and spec is not None:
        # Wrapped when this server wrapped the schema; an upstream nexus's schema keeps its
        # mark, but its structured content arrives wrapped already.
        wrapped = not _is_object_schema(spec.output_schema or {})
        structured = {"result": structured} if wrapped else structured
    elif not isinstance(structured, dict):
        structured = None
    return types.CallToolResult(content=content, structured_content=structured, _meta=meta)


def _block(block: dict[str, Any]) -> Any:
    import mcp_types as types

    if block.get("type") == "text" and len(block) == 2:  # the common case, built directly
        return types.TextContent(type="text", text=block["text"])
    return _content_adapter().validate_python(block)


@functools.cache
def _content_adapter() -> Any:
    import mcp_types as types
    from pydantic import TypeAdapter

    return TypeAdapter(types.ContentBlock)


def error_result(exc: NexusError) -> Any:
    """A pre-call failure as a tool error: one readable message (one line per invalid
    field), with the field errors as JSON in ``_meta`` for clients that show forms."""
    import mcp_types as types

    meta = None
    if isinstance(exc, ToolValidationError):
        lines = [f"Invalid arguments for tool {exc.tool!r}:"]
        lines += [f"- {e.path}: {e.message}" for e in exc.errors]
        text = "\n".join(lines)
        meta = {FIELD_ERRORS_META_KEY: [e.to_dict() for e in exc.errors]}
    else:
        text = str(exc)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True, _meta=meta
    )
