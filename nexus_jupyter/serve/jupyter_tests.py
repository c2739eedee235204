"""REST routes for tool tests and call statistics, under ``/nexus/api/``.

    GET  tools/{name}/tests        the tool's cases and its test status
    POST tools/{name}/tests        save a case: {"arguments": {...}, "expect": V} (or
                                   "expect_error": T, "expect_subset": J, "check": E; "name")
                                   -> 201 {"saved": where, "case": {...}, "tests": status}
    POST tools/{name}/tests/run    run the tool's cases now -> {"report", "tests"}
    GET  stats                     calls, errors, refusals, p50/p95/max ms per tool (this server)

A malformed case is a 400 whose message names the key; a tool with nowhere to keep cases says
so (400). The work runs off the server's loop (files, and the calls of a run).
"""

from __future__ import annotations

import json
from typing import Any

from jupyter_server.auth.decorator import authorized
from tornado import web
from tornado.ioloop import IOLoop

from ..core.errors import NexusError, TestCaseError, ToolNotFound
from ..core.tools.context import REST_CALLER
from ..core.tooltests.cases import TestCase
from .jupyter_handlers import NexusHandler, _error

#: How long ``tests/run`` waits for a background run of the same tool (a save started it) to
#: end before it answers with the status as it stands.
_SETTLE_S = 10.0

__all__ = ["RunTestsHandler", "StatsHandler", "TestsHandler", "test_row"]


def test_row(registry: Any, name: str) -> dict[str, Any] | None:
    """A catalog row's ``tests``: state, summary and counts (``None`` without cases)."""
    try:
        status = registry.test_status(name)
    except ToolNotFound:
        return None
    except Exception as exc:  # a store that failed must not hide the row
        return {"state": "error", "summary": str(exc), "cases": 0}
    row: dict[str, Any] | None = status.row()
    return row


class TestsHandler(NexusHandler):
    """``GET|POST /nexus/api/tools/{name}/tests``."""

    __test__ = False  # not a pytest test class, whatever its name

    @web.authenticated
    @authorized
    async def get(self, name: str) -> None:
        self.lookup(name)
        reg = self.registry

        def read() -> dict[str, Any]:
            try:
                cases = [c.to_dict() for c in reg.tests.cases(name)]
                problem = None
            except TestCaseError as exc:
                cases, problem = [], str(exc)
            return {"cases": cases, "problem": problem, "tests": reg.test_status(name).to_dict()}

        body = await IOLoop.current().run_in_executor(None, read)
        self.finish(json.dumps(body, default=str))

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        self.lookup(name)
        data = self._body()
        try:
            case = TestCase.from_dict(data, where="the case", tool=name)
        except TestCaseError as exc:
            raise _error(400, "bad_request", str(exc)) from exc
        reg = self.registry

        def save() -> tuple[str, dict[str, Any]]:
            where = reg.tests.save(name, case)
            return where, reg.test_status(name).to_dict()

        try:
            where, status = await IOLoop.current().run_in_executor(None, save)
        except NexusError as exc:
            raise _error(400, "bad_request", str(exc)) from exc
        self.set_status(201)
        self.finish(
            json.dumps({"saved": where, "case": case.to_dict(), "tests": status}, default=str)
        )

    def _body(self) -> dict[str, Any]:
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError as exc:
            raise _error(400, "bad_request", f"The request body is not JSON: {exc}.") from exc
        if not isinstance(body, dict):
            raise _error(
                400,
                "bad_request",
                'The request body must be {"arguments": {...}, "expect": VALUE} (or '
                "expect_error, expect_subset, check).",
            )
        return body


class RunTestsHandler(NexusHandler):
    """``POST /nexus/api/tools/{name}/tests/run``: the tool's cases, now."""

    @web.authenticated
    @authorized
    async def post(self, name: str) -> None:
        self.lookup(name)
        reg = self.registry

        principal = getattr(self.current_user, "username", None)

        def run() -> dict[str, Any]:
            report = reg.tests.run([name], caller=REST_CALLER, principal=principal)
            # A save starts a run in the background too: the answer's status waits (bounded)
            # for that one to end, so it agrees with the report (it said "running" beside a
            # report that passed).
            status = reg.tests.wait_settled(name, _SETTLE_S)
            return {"report": report.to_dict(), "tests": status.to_dict()}

        body = await IOLoop.current().run_in_executor(None, run)
        self.finish(json.dumps(body, default=str))


class StatsHandler(NexusHandler):
    """``GET /nexus/api/stats``: this server's per-tool call figures since it started."""

    @web.authenticated
    @authorized
    def get(self) -> None:
        stats = {name: s.to_dict() for name, s in self.registry.stats().items()}
        self.finish(json.dumps({"tools": stats}, default=str))
