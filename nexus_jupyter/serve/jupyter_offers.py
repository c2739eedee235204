"""REST handlers for what the registry offers besides tools (the sidebar's "Resources" and
"Prompts"), under ``/nexus/api/``:

- ``GET offers``: ``{"resources": [...], "templates": [...], "prompts": [...]}``, each with
  its origin (a tool file, ``notebook``, ``mcp:<server>``);
- ``GET resources/read?uri=URI``: ``{"uri", "contents": [MCP resource contents]}`` (a
  template's URI with its parameters filled in reads through the template);
- ``POST prompts/{name}/render`` with ``{"arguments": {...}}``: ``{"messages": [...]}``.

Reads and renders run on the registry's background loop, like tool calls, so an upstream
MCP server's resource or prompt never blocks the Jupyter server. Errors use the JSON shape
of the tool handlers (404 unknown, 400 bad arguments, 502 the resource or prompt failed).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web

from ..core.errors import NexusError
from ..core.registry.catalog import Catalog, catalog_of
from ..core.tools.offers import PromptDef, ResourceDef
from .jupyter_handlers import NexusHandler, _error

__all__ = ["offer_handlers"]

log = logging.getLogger(__name__)

_PROMPT_NAME = r"(?P<name>[^/]+)"


def _resource_row(catalog: Catalog, item: ResourceDef) -> dict[str, Any]:
    return {
        "uri": item.uri,
        "name": item.name,
        "title": item.title,
        "description": item.description,
        "mime_type": item.mime_type,
        "template": item.is_template,
        "variables": item.variables,
        "origin": catalog.origin_of(item),
    }


def _prompt_row(catalog: Catalog, item: PromptDef) -> dict[str, Any]:
    return {
        "name": item.name,
        "title": item.title,
        "description": item.description,
        "arguments": [
            {"name": a.name, "required": a.required, "description": a.description}
            for a in item.arguments
        ],
        "choices": {k: list(v) for k, v in item.choices.items()},
        "origin": catalog.origin_of(item),
    }


class _OfferHandler(NexusHandler):
    @property
    def catalog(self) -> Catalog:
        return catalog_of(self.registry)

    async def on_registry_loop(self, what: str, make: Callable[[], Any]) -> Any:
        """``await make()`` on the registry's loop; a failure becomes a 400 or 502 answer."""
        try:
            return await asyncio.wrap_future(self.registry.loop.submit(make()))
        except NexusError as exc:
            raise _error(400, "bad_request", str(exc)) from exc
        except Exception as exc:
            log.warning("%s failed: %s", what, exc, exc_info=True)
            raise _error(502, "failed", f"{what} failed: {type(exc).__name__}: {exc}") from exc


class OffersHandler(_OfferHandler):
    """``GET /nexus/api/offers``: every resource, resource template and prompt."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        catalog = self.catalog
        body = {
            "resources": [_resource_row(catalog, r) for r in catalog.resources()],
            "templates": [_resource_row(catalog, t) for t in catalog.templates()],
            "prompts": [_prompt_row(catalog, p) for p in catalog.prompts()],
        }
        self.finish(json.dumps(body, default=str))


class ResourceReadHandler(_OfferHandler):
    """``GET /nexus/api/resources/read?uri=URI``: the resource's contents."""

    @web.authenticated
    @authorized
    async def get(self) -> None:
        uri = self.get_query_argument("uri", "")
        if not uri:
            raise _error(400, "bad_request", "Give the resource's URI: resources/read?uri=URI.")
        found = self.catalog.find_resource(uri)
        if found is None:
            known = [r.uri for r in self.catalog.resources() + self.catalog.templates()]
            raise _error(404, "not_found", f"No resource {uri!r}.", suggestions=known[:20])
        contents = await self.on_registry_loop(f"Reading {uri!r}", lambda: found.read(uri))
        self.finish(json.dumps({"uri": uri, "contents": contents}, default=str))


class PromptRenderHandler(_OfferHandler):
    """``POST /nexus/api/prompts/{name}/render`` with ``{"arguments": {"name": "value"}}``."""

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        found = self.catalog.find_prompt(name)
        if found is None:
            known = [p.name for p in self.catalog.prompts()]
            raise _error(404, "not_found", f"No prompt {name!r}.", suggestions=known[:20])
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError as exc:
            raise _error(400, "bad_request", f"The request body is not JSON: {exc}.") from exc
        arguments = body.get("arguments") if isinstance(body, dict) else None
        if not isinstance(arguments, dict) or not all(
            isinstance(v, str) for v in arguments.values()
        ):
            raise _error(
                400,
                "bad_request",
                'Prompt arguments are strings: send {"arguments": {"name": "value"}}.',
            )
        declared = {a.name for a in found.arguments}
        missing = [a.name for a in found.arguments if a.required and a.name not in arguments]
        unknown = sorted(set(arguments) - declared) if found.forward is None else []
        if missing or unknown:
            problems = [f"missing {', '.join(missing)}"] if missing else []
            problems += [f"unknown {', '.join(unknown)}"] if unknown else []
            takes = ", ".join(a.name for a in found.arguments) or "no arguments"
            raise _error(
                400, "bad_request", f"Prompt {name!r}: {'; '.join(problems)}. It takes: {takes}."
            )
        messages = await self.on_registry_loop(
            f"Prompt {name!r}", lambda: found.render(dict(arguments))
        )
        self.finish(json.dumps({"name": name, "messages": messages}, default=str))


def offer_handlers(api: str, url_join: Callable[..., str]) -> list[tuple[str, type]]:
    """The routes under ``api`` (``{base_url}nexus/api``)."""
    return [
        (url_join(api, "offers"), OffersHandler),
        (url_join(api, "resources", "read"), ResourceReadHandler),
        (url_join(api, "prompts", _PROMPT_NAME, "render"), PromptRenderHandler),
    ]
