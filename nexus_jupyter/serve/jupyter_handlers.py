"""REST handlers of the Jupyter server extension, under ``/nexus/api/``.

Each handler is thin: it parses the request, asks the server's registry, and turns the
core's errors into HTTP answers::

    ToolNotFound        404 {"error": "not_found", "message", "suggestions"}
    ToolValidationError 422 {"error": "validation", "message", "errors": [FieldError...]}
    PermissionDenied    403 {"error": "permission_denied", "message"}
    ApprovalRequired    409 {"error": "approval_required", "message", "why" (the sidebar's owner)}
    MissingCredential   412 {"error": "missing_credential", "message", "service"}
    ToolUnavailable     503 {"error": "unavailable", "message"}
    other NexusError    400 {"error": "bad_request", "message"}

Every route needs an authenticated user and is authorized against the ``nexus`` resource
(``read`` for GET, ``write`` for POST); POSTs also pass Jupyter's XSRF check.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jupyter_server.auth.decorator import authorized
from jupyter_server.base.handlers import APIHandler
from tornado import web
from tornado.ioloop import IOLoop

from ..core.errors import (
    ApprovalRequired,
    MissingCredential,
    NexusError,
    PermissionDenied,
    SourceError,
    ToolNotFound,
    ToolUnavailable,
    ToolValidationError,
)
from ..core.registry.state import ToolEntry
from ..core.tools.context import CancellationToken
from ..core.tools.result import ToolResult
from ..core.toolsets.overview import toolset_rows
from ..sources.tool_files import exported_from
from .jupyter_caller import sidebar_request
from .jupyter_clashes import mark_rows, not_found_message, source_details
from .jupyter_events import AUTH_RESOURCE
from .jupyter_progress import ProgressStream

if TYPE_CHECKING:
    from ..core.registry.registry import Registry
    from .jupyter import NexusServerState

__all__ = ["CallHandler", "StatusHandler", "ToolHandler", "ToolsHandler", "entry_row", "entry_rows"]

_FILTERS = ("source", "permission", "category", "capability", "status", "toolset")
_MAX_LIMIT = 1000
_TOOL_NAME = r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]*)"


def entry_row(entry: ToolEntry, score: float | None = None) -> dict[str, Any]:
    """One catalog row: enough to list, group and badge a tool, not its whole schema."""
    spec = entry.spec
    return {
        "shadowed_by": None,
        "name": spec.name,
        "description": spec.description,
        "source": spec.source,
        "source_kind": spec.source_kind,
        "toolset": spec.toolset,
        "origin": spec.origin,
        "exported_from": exported_from(entry.tool.source_code)
        if spec.source_kind == "directory"
        else None,
        # a live kernel's tool: the notebook that defines it (the sidebar's "Go to cell")
        "notebook": spec.source[len("kernel:") :] if spec.source_kind == "kernel" else None,
        "permission": spec.permission,
        "categories": list(spec.categories),
        "capabilities": list(spec.capabilities),
        "status": entry.status,
        "reason": entry.reason,
        "shadowed": [t.spec.source for t in entry.shadowed],
        "version": spec.version,
        "score": score,
        "tests": None,  # filled in by entry_rows for the rows it lists (see jupyter_tests)
        "stale": None,  # filled in by entry_rows too: why the live version is an old one
    }


def stale_note(registry: Any, name: str) -> str | None:
    """What the tool's file says when it failed to reload and its last good version is the
    one that runs (``stale: hello.py failed to reload (...)``), else ``None``."""
    from ..core.registry.file_health import stale_file

    broken = stale_file(registry, name)
    return broken.note() if broken is not None else None


def entry_rows(
    entry: ToolEntry, score: float | None = None, registry: Any = None
) -> list[dict[str, Any]]:
    """The winner's row (with its test status when ``registry`` is given), then one row per
    tool it shadows (``shadowed_by`` set), so a source's group shows every tool it defines
    and which ones lost a name clash."""
    rows = [entry_row(entry, score)]
    if registry is not None:
        from .jupyter_tests import test_row

        rows[0]["tests"] = test_row(registry, entry.name)
        rows[0]["stale"] = stale_note(registry, entry.name)
    for loser in entry.shadowed:
        row = entry_row(ToolEntry(loser), score)
        row["shadowed_by"] = entry.spec.source
        rows.append(row)
    mark_rows(entry, rows, registry)  # a conflict, a file a live kernel exported
    return rows


def _error(status: int, kind: str, message: str, **extra: Any) -> web.HTTPError:
    err = web.HTTPError(status, reason=None)
    err.nexus_body = {"error": kind, "message": message, **extra}  # type: ignore[attr-defined]
    return err


class NexusHandler(APIHandler):
    """Base of the REST handlers: the registry and the JSON error shape."""

    auth_resource = AUTH_RESOURCE

    @property
    def nexus(self) -> NexusServerState:
        state: NexusServerState = self.settings["nexus"]
        return state

    @property
    def registry(self) -> Registry:
        return self.nexus.registry

    def write_error(self, status_code: int, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info", (None, None, None))[1]
        body = getattr(exc, "nexus_body", None)
        if body is None:
            super().write_error(status_code, **kwargs)
            return
        self.set_header("Content-Type", "application/json")
        self.finish(json.dumps(body, default=str))

    def int_argument(self, name: str, default: int, maximum: int) -> int:
        raw = self.get_query_argument(name, None)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise _error(400, "bad_request", f"{name} must be an integer, got {raw!r}.") from None
        if value < 0:
            raise _error(400, "bad_request", f"{name} must be >= 0, got {value!r}.")
        return min(value, maximum)

    def lookup(self, name: str) -> ToolEntry:
        try:
            return self.registry.entry(name)
        except ToolNotFound as exc:
            raise self.not_found(exc) from exc

    def not_found(self, exc: ToolNotFound) -> web.HTTPError:
        """A 404 worded for the sidebar (a tool that left with its kernel says why)."""
        message = not_found_message(exc, self.nexus.live)
        return _error(404, "not_found", message, suggestions=list(exc.suggestions))


class ToolsHandler(NexusHandler):
    """``GET /nexus/api/tools``: search (``q``), filters, paging.

    Without ``q`` the tools come sorted by name; with ``q`` by relevance. Each tool that
    shadows others is followed by their rows (``shadowed_by`` names the winner's source);
    ``total`` counts rows. ``suggestions`` holds close names when nothing matched,
    ``unserved`` the services the query names that no installed tool works with, and
    ``searched_for`` the query as search read it (misspelt words corrected; ``q`` itself
    when nothing was).
    """

    @web.authenticated
    @authorized
    async def get(self) -> None:
        query = (self.get_query_argument("q", "") or "").strip()
        offset = self.int_argument("offset", 0, 1_000_000)
        limit = self.int_argument("limit", 100, _MAX_LIMIT)
        filters: dict[str, Any] = {
            k: self.get_query_argument(k) for k in _FILTERS if self.get_query_argument(k, "")
        }
        reg = self.registry

        def find() -> tuple[list[dict[str, Any]], list[str], str]:
            """The rows, the services the query names that no tool works with, and the query
            as search read it (misspelt words corrected)."""
            if not query:
                every = [row for e in reg.entries(**filters) for row in entry_rows(e, None, reg)]
                return every, [], query
            rows: list[dict[str, Any]] = []
            found = reg.search_results(query, limit=_MAX_LIMIT, **filters)
            for hit in found.hits:
                entry = reg.snapshot.entries.get(hit.name)
                if entry is not None:
                    rows += entry_rows(entry, round(float(hit.score), 4), reg)
            return rows, list(found.unserved), found.searched_for

        try:
            # Off the server's loop: a first hybrid search embeds the catalog (seconds), and
            # every kernel, contents and terminal request of this server shares that loop;
            # the index lock a concurrent search holds is waited for there too.
            rows, unserved, searched_for = await IOLoop.current().run_in_executor(None, find)
        except NexusError as exc:
            raise _error(400, "bad_request", str(exc)) from exc
        suggestions = reg.suggest(query) if query and not rows else []
        self.finish(
            json.dumps(
                {
                    "tools": rows[offset : offset + limit],
                    "total": len(rows),
                    "offset": offset,
                    "limit": limit,
                    "suggestions": suggestions,
                    "unserved": unserved,
                    "searched_for": searched_for,
                },
                default=str,
            )
        )


class ToolHandler(NexusHandler):
    """``GET /nexus/api/tools/{name}``: spec, schema, status, shadowed versions, history;
    ``?source=S``: of the tool source ``S`` defines under the name (see :mod:`.jupyter_clashes`)."""

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        entry = self.lookup(name)
        # ?source=S: the tool S defines under this name (one of a conflict, or shadowed)
        source = self.get_query_argument("source", None) or entry.spec.source
        body = source_details(entry, source)
        if body is None:
            raise self.not_found(ToolNotFound(name, (), f"{source} does not define it (now)"))
        entry = entry.of_source(source) or entry
        body["exported_from"] = entry_row(entry)["exported_from"]
        body["versions"] = self.file_versions(entry) or self.nexus.history.versions(
            name, entry.spec.version
        )
        body["call_policy"] = await self.call_policy(entry)
        body["tests"] = self.registry.test_status(name).to_dict()
        body["stale"] = stale_note(self.registry, name)
        stats = self.registry.stats_of(name, entry.spec.source)
        body["stats"] = stats.to_dict() if stats is not None else None
        if entry.spec.source_kind == "kernel":
            body["notebook_stats"] = self.notebook_stats(entry)
        self.finish(json.dumps(body, default=str))

    def notebook_stats(self, entry: ToolEntry) -> dict[str, Any] | None:
        """A kernel's tool: the figures of the calls its notebook made in the kernel, as the
        kernel last reported them (calls through this server are in ``stats``)."""
        try:
            source = self.registry.source(entry.spec.source)
        except SourceError:  # the kernel left since the lookup
            return None
        figures: dict[str, Any] | None = getattr(source, "reported_calls", {}).get(entry.spec.name)
        return figures

    async def call_policy(self, entry: ToolEntry) -> dict[str, str] | None:
        """What policy decides for a call of this tool from this user over REST (no
        arguments: rules on arguments may still ask or deny a particular call), so the
        sidebar can disable Run, with the reason, where the call can never run."""
        policy = self.registry.policy
        if policy is None:
            return None
        decision = policy.check(entry.spec, {}, await sidebar_request(self))
        return {"action": decision.action, "reason": decision.reason}

    def file_versions(self, entry: ToolEntry) -> list[dict[str, Any]]:
        """A directory tool's file history (newest first), from the folder's version store;
        ``[]`` for other tools, which fall back to what this server has seen."""
        spec = entry.spec
        if spec.source_kind != "directory" or not spec.origin:
            return []
        try:
            from ..sources.versions import current_version, versions
        except ImportError:
            return []
        try:
            found = versions(spec.origin)
        except (NexusError, OSError, ValueError) as exc:
            self.log.warning("nexus_jupyter: no version history for %s: %s", spec.name, exc)
            return []
        runs = current_version(spec.origin, found)  # not a newer save that failed to load
        return [
            {**v.to_dict(), "version": v.short, "source": spec.source, "current": v is runs}
            for v in reversed(found)
        ]


class CallHandler(NexusHandler):
    """``POST /nexus/api/tools/{name}/call`` with ``{"arguments": {...}, "approved": bool}``
    (and ``"source": S`` to call the tool source ``S`` defines under the name).

    The call runs on the registry's background loop, so a slow tool never blocks the
    server. ``approved`` means the user approved this call in the UI after a 409;
    ``"always"`` approves the tool for the rest of the server's session.

    Cancel: a client that closes the connection (the sidebar aborts its request) cancels the
    call, as an MCP client's ``notifications/cancelled`` does: an async tool gets
    ``CancelledError``, a sync tool's ``ctx.cancellation`` is set. Why the connection and
    not a cancel endpoint keyed by a call id: there is no id table to share between
    handlers or to leak, no race between a cancel and the call it names arriving, and a
    call also stops when the tab closes or the network drops, not only on a Cancel click.
    A tool that raises ``CancelledError`` itself, with the client still there, is answered
    as a failed result.
    """

    _pending: concurrent.futures.Future[Any] | None = None
    _client_gone = False

    def on_connection_close(self) -> None:
        self._client_gone = True
        pending = self._pending
        if pending is not None and not pending.done():
            pending.cancel()  # cancels the task on the registry loop (run_coroutine_threadsafe)
        super().on_connection_close()

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        body = self._body()
        # "progress": true streams the tool's progress reports in this answer (jupyter_progress)
        stream = ProgressStream(self) if body.get("progress") is True else None
        try:
            result = await self._call(name, body, stream)
        except web.HTTPError as exc:
            if stream is None or not stream.started:
                raise
            said = getattr(exc, "nexus_body", None) or {"error": "error", "message": str(exc)}
            stream.end({**said, "status": exc.status_code})
            return
        except Exception as exc:
            if stream is None or not stream.started:
                raise  # tornado answers 500 and logs it
            # The status went out with the first report: the stream's last line says it
            # (tornado could only log "Cannot send error response after headers written").
            self.log.exception("nexus_jupyter: the call of %r failed after it reported", name)
            message = (
                f"The call of {name!r} failed on the Jupyter server after it reported progress: "
                f"{type(exc).__name__}: {exc}. The server's log has the traceback."
            )
            stream.end({"error": "internal", "message": message, "status": 500})
            return
        finally:
            if stream is not None:
                stream.ended = True  # the call is over: a report still on its way is dropped
        if result is None:
            return  # the client went away: there is no one to answer
        if stream is not None and stream.started:
            stream.end({"result": result.to_dict()})
            return
        self.finish(json.dumps(result.to_dict(), default=str))

    async def _call(self, name: str, body: dict[str, Any], stream: ProgressStream | None) -> Any:
        """Run the call; its result, or None when the client went away."""
        arguments = body.get("arguments") or {}
        if not isinstance(arguments, dict):
            kind = type(arguments).__name__
            raise _error(400, "bad_request", f"arguments must be a JSON object, got {kind}.")
        approved = body.get("approved", False) in (True, "always")
        source = body.get("source")  # the tool of that source (one of a conflict, shadowed)
        if source is not None and not isinstance(source, str):
            raise _error(400, "bad_request", f"source must be a string, got {source!r}.")
        if body.get("approved") == "always":
            self.approve_for_session(name)
        request = await sidebar_request(self)
        reg = self.registry
        token = CancellationToken()
        progress = stream.report if stream is not None else None
        call = reg.call(
            name,
            arguments,
            request=request,
            approved=approved,
            cancellation=token,
            progress=progress,
            source=source,
        )
        self._pending = reg.loop.submit(call)
        self._pending.add_done_callback(lambda f: token.cancel() if f.cancelled() else None)
        try:
            return await asyncio.wrap_future(self._pending)
        except asyncio.CancelledError:
            if self._client_gone:
                return None
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise  # this handler itself is being cancelled (the server stops)
            # The tool raised CancelledError itself: the client is still there, so answer.
            return ToolResult.failure(name, "the call was cancelled", "CancelledError")
        except ToolNotFound as exc:
            raise self.not_found(exc) from exc
        except ToolValidationError as exc:
            raise _error(
                422, "validation", str(exc), errors=[e.to_dict() for e in exc.errors]
            ) from exc
        except ApprovalRequired as exc:
            # why it asks names the rule, and what it matched: for the sidebar of a user who
            # may edit nex.yaml only (a token holder could reword its arguments around a rule)
            why = exc.why if request.caller.configures else None
            raise _error(409, "approval_required", str(exc), why=why) from exc
        except PermissionDenied as exc:
            raise _error(403, "permission_denied", str(exc)) from exc
        except MissingCredential as exc:
            raise _error(412, "missing_credential", str(exc), service=exc.service) from exc
        except ToolUnavailable as exc:
            raise _error(503, "unavailable", str(exc)) from exc
        except NexusError as exc:
            raise _error(400, "bad_request", str(exc)) from exc

    def approve_for_session(self, name: str) -> None:
        """``"approved": "always"``: this tool stops asking until the server restarts or its
        definition changes (a policy that denies it still denies it)."""
        policy = self.registry.policy
        entry = self.registry.snapshot.entries.get(name)
        if policy is not None and entry is not None and hasattr(policy, "remember"):
            policy.remember(entry.spec)

    def _body(self) -> dict[str, Any]:
        if not self.request.body:
            return {}
        try:
            body = json.loads(self.request.body)
        except ValueError as exc:
            raise _error(400, "bad_request", f"The request body is not JSON: {exc}.") from exc
        if not isinstance(body, dict):
            usage = 'The request body must be {"arguments": {...}, "approved": false}.'
            raise _error(400, "bad_request", usage)
        return body


class StatusHandler(NexusHandler):
    """``GET /nexus/api/status``: every source with its error and details (per-file errors,
    MCP server states), plus how many browsers follow the event stream."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        status = self.registry.status()
        status["toolsets"] = toolset_rows(self.registry)  # the sidebar groups and filters by them
        status["listeners"] = self.nexus.hub.listeners
        status["root"] = self.nexus.root
        self.finish(json.dumps(status, default=str))


def handlers(base_url: str, url_join: Callable[..., str]) -> list[tuple[str, type]]:
    """The routes, rooted at ``{base_url}nexus/api/``."""
    from .jupyter_events import EventsHandler
    from .jupyter_offers import offer_handlers
    from .jupyter_tests import RunTestsHandler, StatsHandler, TestsHandler

    api = url_join(base_url, "nexus", "api")
    return [
        (url_join(api, "tools"), ToolsHandler),
        (url_join(api, "tools", _TOOL_NAME), ToolHandler),
        (url_join(api, "tools", _TOOL_NAME, "call"), CallHandler),
        (url_join(api, "tools", _TOOL_NAME, "tests"), TestsHandler),
        (url_join(api, "tools", _TOOL_NAME, "tests", "run"), RunTestsHandler),
        (url_join(api, "status"), StatusHandler),
        (url_join(api, "stats"), StatsHandler),
        (url_join(api, "events"), EventsHandler),
        *offer_handlers(api, url_join),
    ]
