"""Translate between the registry's types and MCP wire types (for the MCP server face).

- :func:`mcp_tool` — a :class:`ToolSpec` as an MCP ``Tool`` listing entry;
- :func:`call_result` — a :class:`ToolResult` as a ``CallToolResult``;
- :func:`error_result` — a pre-call failure (invalid arguments, policy, missing credential,
  server down) as a tool error (``isError``) the model can read and correct;
- :func:`shown_search` — ``tool_search``'s answer with its tools' descriptions shown as
  ``tools/list`` shows them.

Errors are sentences for an agent, never a Python class name before the message: a refusal
(one of our errors) is its reason; a tool's own exception says the tool failed, what it
raised and what to do; a timeout says so. A failed call's class name and bare message travel in
its result's ``_meta`` (``nexus-jupyter/error``) for a nexus client (:mod:`..sources.mcp_session`).
Each function takes ``paths`` (a :class:`~.mcp_paths.ShownPaths`) when the client is shown
this machine's paths in short (over HTTP): a tool's origin, source, description (its quoted
command line as the origin), errors and tracebacks.

MCP (through 2025-11-25) requires a tool's ``outputSchema`` and ``structuredContent`` to be
JSON objects, so a tool whose output is not an object is advertised with its schema wrapped
as ``{"result": <schema>}`` and its value sent as ``{"result": value}`` (as the SDK's own
MCPServer does).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from collections.abc import Mapping
from typing import Any

from ..core.errors import MissingCredential, NexusError, ToolValidationError
from ..core.tools.content import content_blocks
from ..core.tools.result import ToolResult
from ..core.tools.spec import WRAP_MARK, ToolSpec
from ..core.tools.tool_traceback import has_tool_frames
from .mcp_grant import SEARCH_TOOL
from .mcp_paths import ShownPaths

__all__ = [
    "ERROR_META_KEY",
    "FIELD_ERRORS_META_KEY",
    "META_PREFIX",
    "SUMMARY_META_KEY",
    "WRAP_MARK",
    "call_result",
    "error_result",
    "failed_text",
    "mcp_tool",
    "output_schema",
    "read_meta",
    "refusal_names",
    "shown_search",
    "validation_text",
]

#: ``_meta`` key of a validation error result: the per-field errors as JSON.
FIELD_ERRORS_META_KEY = "nexus-jupyter/fieldErrors"
#: ``_meta`` key of a call's result: the call in one human-readable line.
SUMMARY_META_KEY = "nexus-jupyter/summary"
#: ``_meta`` key of a failed call's result: ``{"type": <class name>, "message": <its text>}``.
ERROR_META_KEY = "nexus-jupyter/error"
#: The prefix of this project's ``_meta`` keys (MCP allows letters, digits and hyphens in a
#: prefix's labels); :data:`OLD_META_PREFIX` is how earlier releases spelt it.
META_PREFIX = "nexus-jupyter/"
OLD_META_PREFIX = "nexus_jupyter/"


def read_meta(meta: Mapping[str, Any] | None, name: str) -> Any:
    """``meta``'s value for key ``name`` under this project's prefix, or under the old
    spelling (a nexus server or kernel of an earlier release); ``None`` when absent."""
    meta = meta or {}
    value = meta.get(META_PREFIX + name)
    return value if value is not None else meta.get(OLD_META_PREFIX + name)


def output_schema(spec: ToolSpec) -> dict[str, Any] | None:
    """The ``outputSchema`` to advertise (see :attr:`ToolSpec.wire_output_schema`)."""
    return spec.wire_output_schema


def _is_object_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("type") == "object"


def _annotations(spec: ToolSpec) -> dict[str, Any]:
    """The tool's own MCP annotations, plus what its declared permission says for sure.

    A hint is claimed only when it is known: ``readOnlyHint`` from a permission the tool's
    author declared (an undeclared one runs as ``read_only`` under the policy, which says
    nothing about what the code does), never ``destructiveHint: false`` from a permission
    (``workspace_write`` may replace content); the built-ins declare their hints as they
    behave. Absent hints mean the MCP defaults: not read-only, possibly destructive. A tool
    from an MCP server or an external toolset keeps exactly what its source declared."""
    out = dict(spec.annotations)
    if spec.source_kind == "mcp" or spec.source.startswith("toolset:"):
        return out
    if spec.permission_declared:
        out.setdefault("readOnlyHint", spec.permission == "read_only")
    if spec.permission == "danger_full_access":
        out.setdefault("destructiveHint", True)
    return out


def mcp_tool(spec: ToolSpec, paths: ShownPaths | None = None) -> Any:
    """The MCP ``Tool`` listing entry for ``spec`` (its origin and description show paths
    as ``paths`` says, when given)."""
    import mcp_types as types

    origin, description, source = spec.origin, spec.description, spec.source
    if paths is not None:
        description = paths.description(description, origin)
        origin, source = paths.command(origin), paths.source(source)
    data: dict[str, Any] = {
        "name": spec.name,
        "description": description,
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
        META_PREFIX + "source": source,
        META_PREFIX + "version": spec.version,
        META_PREFIX + "origin": origin,
        # the level this registry's policy runs the tool at (declared or not): another
        # nexus registry serving it (a kernel's tools in the Jupyter server) applies the same
        META_PREFIX + "permission": spec.permission,
    }
    if spec.needs_approval:  # the tool itself asks for a person's yes on every call
        meta[META_PREFIX + "needs_approval"] = True
        if spec.approval_why:  # (or the registry it comes from does, and says why)
            meta[META_PREFIX + "approval_why"] = spec.approval_why
    if spec.categories:
        meta[META_PREFIX + "categories"] = list(spec.categories)
    data["_meta"] = meta
    return types.Tool.model_validate(data)


#: Marks the content block of an error result that holds the tool's traceback.
TRACEBACK_MARK = META_PREFIX + "traceback"


def call_result(result: ToolResult, spec: ToolSpec | None, paths: ShownPaths | None = None) -> Any:
    """The ``CallToolResult`` for a finished call (a failed tool gives ``isError``)."""
    import mcp_types as types

    # the call in one readable line, for clients that show what ran ("Fetching https://...")
    meta = {SUMMARY_META_KEY: result.summary} if result.describer is not None else None
    if result.is_error:
        shown = result.redacted()
        message = shown.error or "the tool failed"
        trace = shown.traceback if _shows_the_tools_code(result) else None
        if paths is not None:
            message = paths.text(message)
            trace = paths.traceback(trace) if trace else trace
        text = agent_error(result.tool, message, result.error_type, result, bool(trace))
        blocks: list[Any] = [types.TextContent(type="text", text=text)]
        if trace:  # the tool's own frames: an agent (or the server of a kernel) can fix it
            blocks.append(types.TextContent(type="text", text=trace, _meta={TRACEBACK_MARK: True}))
        said = {ERROR_META_KEY: {"type": result.error_type or "Error", "message": message}}
        return types.CallToolResult(content=blocks, is_error=True, _meta={**(meta or {}), **said})
    structured = result.structured
    if _has_non_finite(structured):  # JSON has no infinity or NaN: a schema check would fail
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text",
                    text=f"Tool {result.tool!r} returned infinity or NaN, which JSON cannot "
                    "carry (its result would break its output schema). Call it with other "
                    "arguments, or treat the result as out of range.",
                )
            ],
            is_error=True,
            _meta=meta,
        )
    content = [_block(b) for b in result.content]
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


#: what our call machinery reports as these (no exception of the tool's own)
_RUNNER_ERRORS = frozenset({"TimeoutError", "CancelledError"})


def agent_error(
    tool: str, message: str, error_type: str | None, result: ToolResult, traced: bool
) -> str:
    """A failed call's message as an agent reads it: plain sentences with what to do, no
    Python class name in front. ``traced``: a traceback block follows."""
    message = message.strip()
    if not error_type or error_type in refusal_names() or error_type == "McpToolError":
        # our refusals are written as sentences with their fix; an upstream MCP server's
        # error is worded by that server for its callers
        return _sentence(message)
    if error_type in _RUNNER_ERRORS and result.exception is None:
        what = message.removeprefix("the call ")
        advice = (
            " It may finish with less to do per call; otherwise tell the user it timed out."
            if error_type == "TimeoutError"
            else ""
        )
        return _sentence(f"The call to tool {tool!r} {what}") + advice
    where = "Its traceback is in the next block. " if traced else ""
    return failed_text(
        f"Tool {tool!r}",
        message,
        error_type,
        f"{where}If your arguments caused it, call it again with other ones; otherwise tell "
        "the user the tool is failing.",
    )


def failed_text(what: str, message: str, error_type: str, advice: str) -> str:
    """``<what> failed: <message> (<class name>). <advice>``: an exception raised by a
    tool, a resource or a prompt, as an agent reads it (its class name after its message)."""
    message = message.strip()
    said = (
        f"{message.rstrip('.')} ({error_type})" if message not in ("", error_type) else error_type
    )
    return f"{what} failed: {said}. {advice}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?", ")", "`")) else text + "."


def _has_non_finite(value: Any) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_non_finite(v) for v in value)
    return False


def _shows_the_tools_code(result: ToolResult) -> bool:
    """Whether a failed call's traceback is worth a block: it shows the tool's own frames
    (here, or where the tool ran: a worker process, an upstream nexus). A refusal (one of
    our errors, raised on purpose with its reason) and a failure inside our own code have
    only our call machinery to show, which helps no one fix the tool."""
    if result.error_type in refusal_names():
        return False
    exc = result.exception
    return exc is None or (not isinstance(exc, NexusError) and has_tool_frames(exc))


def refusal_names() -> frozenset[str]:
    """The class names of our errors (a tool in a worker process raising one arrives as a
    look-alike class of that name); read each time, as modules may add subclasses."""
    names: set[str] = set()
    todo: list[type[BaseException]] = [NexusError]
    while todo:
        cls = todo.pop()
        names.add(cls.__name__)
        todo.extend(cls.__subclasses__())
    return frozenset(names)


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


def shown_search(
    result: ToolResult, spec: ToolSpec, registry: Any, paths: ShownPaths
) -> ToolResult:
    """``result`` as the client is shown it: for the built-in ``tool_search``, each tool's
    description as ``tools/list`` shows it (:meth:`~.mcp_paths.ShownPaths.description`) and
    each reason a tool is not available with its paths shown; any other result unchanged."""
    answer = result.structured
    if (
        spec.name != SEARCH_TOOL
        or spec.source != "builtin"
        or result.is_error
        or not isinstance(answer, dict)
    ):
        return result
    tools = []
    for hit in answer.get("tools") or []:
        found = registry.find(hit.get("name")) if isinstance(hit, dict) else None
        if found is not None and isinstance(hit.get("description"), str):
            hit = {**hit, "description": paths.description(hit["description"], found.spec.origin)}
        tools.append(hit)
    shown = {**answer, "tools": tools}
    if isinstance(answer.get("not_available"), dict):
        shown["not_available"] = {
            name: paths.text(str(why)) for name, why in answer["not_available"].items()
        }
    return dataclasses.replace(result, value=shown, _structured=shown, _content=None)


def error_result(
    exc: NexusError, spec: ToolSpec | None = None, paths: ShownPaths | None = None
) -> Any:
    """A pre-call failure as a tool error: one readable message (one line per invalid
    field, then what the tool takes when ``spec`` is known), with the field errors as JSON
    in ``_meta`` for clients that show forms."""
    import mcp_types as types

    meta = None
    if isinstance(exc, ToolValidationError):
        text = validation_text(exc, spec)
        meta = {FIELD_ERRORS_META_KEY: [e.to_dict() for e in exc.errors]}
    elif isinstance(exc, MissingCredential):
        text = exc.for_agent()
    else:
        text = str(exc)
    if paths is not None:
        text = paths.text(text)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], is_error=True, _meta=meta
    )


def validation_text(exc: ToolValidationError, spec: ToolSpec | None = None) -> str:
    """Invalid arguments, worded for an agent: each argument's JSON path, what was wrong
    with the value it sent, and the tool's parameters to call it again with."""
    lines = [f"Invalid arguments for tool {exc.tool!r}:"]
    lines += [f"- {e.line}" for e in exc.errors]  # worded as on every face
    takes = _parameters(spec.input_schema) if spec is not None else None
    if takes is not None:
        takes = f"takes: {takes}" if takes else "takes no arguments"
        lines.append(f"{exc.tool!r} {takes}. Call it again with arguments that fit.")
    return "\n".join(lines)


def _json_preview(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # a circular value, which no client sends
        text = repr(value)
    return text if len(text) <= 80 else text[:80] + "…"


#: At most this many parameters are spelled out after a validation error.
_MAX_LISTED = 20


def _parameters(schema: Mapping[str, Any]) -> str | None:
    """``"path (string, required), limit (integer)"``: a tool's top-level parameters
    (``""``: none); ``None`` when its schema does not name them."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return None
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    parts = []
    for name, sub in list(props.items())[:_MAX_LISTED]:
        facts = [_kind(sub)] if isinstance(sub, Mapping) and _kind(sub) else []
        if name in needed:
            facts.append("required")
        parts.append(f"{name} ({', '.join(facts)})" if facts else str(name))
    if len(props) > _MAX_LISTED:
        parts.append(f"and {len(props) - _MAX_LISTED} more (see its inputSchema)")
    return ", ".join(parts)


def _kind(schema: Mapping[str, Any]) -> str:
    """A parameter's type in a few words: ``integer``, ``one of "a", "b"``, ``string or null``."""
    values = schema.get("enum")
    if isinstance(values, list) and values:
        return "one of " + ", ".join(_json_preview(v) for v in values[:10])
    declared = schema.get("type")
    if isinstance(declared, str):
        return "array of " + _kind(schema["items"]) if _typed_items(schema) else declared
    if isinstance(declared, list):
        return " or ".join(str(t) for t in declared)
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list):
        kinds = [_kind(o) for o in options if isinstance(o, Mapping)]
        return " or ".join(k for k in kinds if k)
    return ""


def _typed_items(schema: Mapping[str, Any]) -> bool:
    items = schema.get("items")
    return schema.get("type") == "array" and isinstance(items, Mapping) and bool(_kind(items))
