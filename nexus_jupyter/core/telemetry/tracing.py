"""One OpenTelemetry span per tool call, when OpenTelemetry is set up; nothing otherwise.

**Turning it on.** :func:`configure_from_environment` (run by ``Registry.default()``, so by
the kernel, the Jupyter server, ``nexus-tools`` and ``serve``) follows the standard
``OTEL_*`` environment variables:

- a tracer provider the application set up already (``opentelemetry-instrument``, or code
  that called ``trace.set_tracer_provider``) is used as it is;
- otherwise ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``, any exporter installed under the
  entry-point group ``opentelemetry_traces_exporter``; ``none`` turns tracing off) or an
  ``OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT`` makes one: an SDK ``TracerProvider`` with
  ``Resource.create()`` (``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``; the service is
  ``nexus-jupyter`` unless they name it), a batch processor per exporter (``OTEL_BSP_*``) and
  the sampler of ``OTEL_TRACES_SAMPLER``. It becomes the global provider, so the MCP SDK's
  own spans go to the same place;
- ``OTEL_SDK_DISABLED=true`` turns it all off. Without any of these, nothing is imported
  and every call pays one attribute read (:data:`TRACER` is ``None``).

:func:`enable` turns it on in code (``enable(provider)``; tests pass a provider with an
in-memory exporter).

**The span** follows the OpenTelemetry GenAI and MCP semantic conventions: an ``INTERNAL``
span ``execute_tool {tool}``, current while the tool runs, so a call the tool makes to an
upstream MCP server (whose client span injects ``traceparent`` into that request's
``_meta``) and any span the tool opens are its children. A call that arrived over MCP is the
child of the MCP SDK's server span, which continues the ``traceparent`` the client sent in
the request's ``_meta``. Attributes:

==========================  =============================================================
``gen_ai.operation.name``   ``execute_tool``
``gen_ai.tool.name``        the tool's name
``gen_ai.tool.type``        ``function`` (Python code here) or ``extension`` (an MCP
                            server's or a kernel's tool)
``gen_ai.tool.call.id``     the request id (``mcp-7``, ``req-3``)
``mcp.method.name``         ``tools/call``, when the call came over MCP
``mcp.session.id``          the MCP session, when the call came over MCP in one
``user.id``                 the principal (``local``, ``unknown``, a token's subject)
``nexus.tool.source``       the source (``directory:tools/dynamic``, ``mcp:time``, ...)
``nexus.tool.version``      the tool's version (content hash)
``nexus.caller``            the face that took the call (notebook, rest, mcp, cli, python)
``nexus.call.outcome``      ``ok``, ``error``, ``timeout``, ``cancelled``, ``denied``,
                            ``approval_required``, ``invalid``, ``unavailable``,
                            ``missing_credential``, ``not_found``
``error.type``              the error's class name, when the call failed or was refused
==========================  =============================================================

The span's duration is the call's. A failed call's status is ``ERROR`` with the error's type
as its description: never its message, which may quote an argument. Argument values,
results and credentials are never recorded.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..registry.state import ToolEntry
    from ..tools.context import RequestInfo
    from ..tools.result import ToolResult

__all__ = [
    "TRACER",
    "configure_from_environment",
    "disable",
    "enable",
    "end_call",
    "end_refused",
    "start_call",
]

log = logging.getLogger(__name__)

#: The tracer spans are made with, or ``None`` while tracing is off (the call pipeline reads
#: only this name on a call when it is off).
TRACER: Any = None
_api: Any = None  # (trace, context, SpanKind, StatusCode) once enabled
_warned = False
_REMOTE_KINDS = frozenset({"mcp", "kernel"})
_OUTCOMES = {
    "ToolValidationError": "invalid",
    "PermissionDenied": "denied",
    "ApprovalRequired": "approval_required",
    "ToolUnavailable": "unavailable",
    "MissingCredential": "missing_credential",
    "CredentialRefreshFailed": "missing_credential",
    "ToolNotFound": "not_found",
    "TimeoutError": "timeout",
    "CancelledError": "cancelled",
}


def enable(provider: Any = None) -> Any:
    """Record a span per call with ``provider`` (default: the global tracer provider);
    returns the tracer."""
    global TRACER, _api
    from opentelemetry import context, trace
    from opentelemetry.trace import SpanKind, StatusCode

    from ... import __version__

    source = provider if provider is not None else trace.get_tracer_provider()
    _api = (trace, context, SpanKind, StatusCode)
    TRACER = source.get_tracer("nexus_jupyter", __version__)
    return TRACER


def disable() -> None:
    """Stop recording spans (calls then cost what they cost without OpenTelemetry)."""
    global TRACER
    TRACER = None


def _asks_for_tracing(env: os._Environ[str] | dict[str, str]) -> bool:
    return bool(
        env.get("OTEL_TRACES_EXPORTER")
        or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
        or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
        or env.get("OTEL_PYTHON_TRACER_PROVIDER")
    )


def configure_from_environment() -> bool:
    """Turn tracing on as the ``OTEL_*`` environment says (see the module docstring);
    returns whether it is on. Cheap and quiet when nothing asks for it."""
    env = os.environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        disable()
        return False
    if TRACER is not None:
        return True
    asked = _asks_for_tracing(env)
    if not asked and "opentelemetry.trace" not in sys.modules:
        return False  # nobody set up OpenTelemetry: import nothing
    try:
        from opentelemetry import trace
    except ImportError:
        return _warn_missing("opentelemetry-api") if asked else False
    current = trace.get_tracer_provider()
    if not isinstance(current, trace.ProxyTracerProvider | trace.NoOpTracerProvider):
        enable(current)  # the application's own provider
        return True
    names = [n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if n.strip()]
    names = [n for n in names if n != "none"]
    if not asked or not names:
        return False
    provider = _sdk_provider(names)
    if provider is None:
        return False
    trace.set_tracer_provider(provider)
    enable(trace.get_tracer_provider())
    return True


def _sdk_provider(exporters: list[str]) -> Any:
    """An SDK tracer provider exporting to ``exporters`` (entry-point names), or ``None``
    (with one warning) when the SDK or an exporter is not installed."""
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        return _warn_missing("opentelemetry-sdk")
    from importlib.metadata import entry_points

    attributes = {}
    named = os.environ.get("OTEL_SERVICE_NAME") or "service.name=" in os.environ.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = "nexus-jupyter"
    provider = TracerProvider(resource=Resource.create(attributes))
    for name in exporters:
        found = list(entry_points(group="opentelemetry_traces_exporter", name=name))
        if not found:
            global _warned
            if not _warned:
                _warned = True
                hint = (
                    "pip install opentelemetry-exporter-otlp"
                    if name.startswith("otlp")
                    else f"install the package that provides the {name!r} exporter"
                )
                log.warning(
                    "OTEL_TRACES_EXPORTER names %r, which is not installed, so its spans go "
                    "nowhere; %s.",
                    name,
                    hint,
                )
            continue
        provider.add_span_processor(BatchSpanProcessor(found[0].load()()))
    return provider


def _warn_missing(package: str) -> bool:
    global _warned
    if not _warned:
        _warned = True
        log.warning(
            "OpenTelemetry is configured in the environment (OTEL_*), but %s is not "
            "installed, so tool calls record no spans: pip install 'nexus-jupyter[otel]'.",
            package,
        )
    return False


def start_call(name: str, entry: ToolEntry | None, request: RequestInfo) -> tuple[Any, Any]:
    """Start the span of a call of tool ``name`` (its registry ``entry``, ``None`` when there
    is no such tool) and make it current; returns ``(span, token)`` for :func:`end_call` /
    :func:`end_refused`."""
    trace, context, kind, _status = _api
    caller = request.caller.face
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": request.request_id,
        "user.id": request.principal_name,
        "nexus.caller": caller,
    }
    if entry is not None:
        spec = entry.tool.spec
        remote = spec.source_kind in _REMOTE_KINDS
        attributes["gen_ai.tool.type"] = "extension" if remote else "function"
        attributes["nexus.tool.source"] = spec.source
        attributes["nexus.tool.version"] = spec.version
    if caller == "mcp":
        attributes["mcp.method.name"] = "tools/call"
        if request.session_id:
            attributes["mcp.session.id"] = request.session_id
    span = TRACER.start_span(f"execute_tool {name}", kind=kind.INTERNAL, attributes=attributes)
    return span, context.attach(trace.set_span_in_context(span))


def end_call(span: Any, token: Any, result: ToolResult) -> None:
    """End the span of a call that ran, with its outcome."""
    _end(span, token, None if result.error is None else (result.error_type or "Error"))


def end_refused(span: Any, token: Any, exc: BaseException) -> None:
    """End the span of a call that was refused before it ran (or failed in the pipeline)."""
    _end(span, token, type(exc).__name__)


def _end(span: Any, token: Any, error_type: str | None) -> None:
    _trace, context, _kind, status = _api
    try:
        if error_type is None:
            span.set_attribute("nexus.call.outcome", "ok")
        else:
            span.set_attribute("nexus.call.outcome", _OUTCOMES.get(error_type, "error"))
            span.set_attribute("error.type", error_type)
            span.set_status(status.ERROR, error_type)
        span.end()
    finally:
        context.detach(token)
