"""The test cases of a live kernel's tools, on the Jupyter server (:class:`KernelToolTests`,
mixed into :class:`~nexus_jupyter.serve.jupyter_kernels.KernelSource`).

The kernel keeps and runs its notebook tools' cases (see
:mod:`nexus_jupyter.notebook.kernel_tests`); each tool's listing carries its status and cases.
So here the source

- reports that status (``test_status``: the registry shows it and never runs those cases
  again on the server) and those cases (``cases_for``);
- saves a case in the kernel, which puts it into the notebook's metadata (``save_case``: the
  sidebar's "Save as test" for a kernel's tool), and runs the cases there (``run_tests``),
  through the kernel's private tool.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Mapping
from typing import Any

from ..core.errors import TestCaseError, ToolUnavailable
from ..core.tools.kernel_listing import KERNEL_TESTS_TOOL, OLD_TESTS_META_KEY, TESTS_META_KEY
from ..core.tools.spec import ToolSpec
from ..core.tooltests.cases import TestCase
from ..core.tooltests.outcomes import TestStatus

__all__ = ["KernelToolTests"]

_ANSWER_S = 60.0


class KernelToolTests:
    """What a kernel reports of its tools' tests (mixed into the kernel's MCP source)."""

    name: str
    notebook: str
    _client: Any
    _loop: asyncio.AbstractEventLoop | None
    reported_tests: dict[str, Any]

    def _note_tests(self, remote: Any) -> None:
        """Remember the test status a ``tools/list`` entry carries."""
        reported = self.reported_tests
        meta = dict(remote.meta or {})
        data = meta.get(TESTS_META_KEY, meta.get(OLD_TESTS_META_KEY))
        if isinstance(data, Mapping):
            reported[remote.name] = dict(data)
        else:
            reported.pop(remote.name, None)

    def _report(self, spec: ToolSpec) -> Mapping[str, Any] | None:
        if spec.source != self.name:
            return None
        reported = self.reported_tests
        return reported.get(spec.name) or {}

    def tests_digest(self) -> dict[str, str]:
        """Tool -> its reported state and summary (in the source's status, so a change of
        one shows as a change of the source)."""
        reported = self.reported_tests
        return {
            name: f"{data.get('status', {}).get('state')}: {data.get('status', {}).get('summary')}"
            for name, data in reported.items()
        }

    # -- the store and status protocols --------------------------------------------------

    def test_status(self, spec: ToolSpec) -> TestStatus | None:
        report = self._report(spec)
        if report is None:
            return None
        status = report.get("status")
        return (
            TestStatus.from_dict(status) if isinstance(status, Mapping) else TestStatus(spec.name)
        )

    def cases_for(self, spec: ToolSpec) -> list[TestCase] | None:
        report = self._report(spec)
        if report is None:
            return None
        where = f"{self.notebook or 'the kernel'} metadata"
        return [
            TestCase.from_dict(c, where=f"{where} case {i + 1}", tool=spec.name)
            for i, c in enumerate(report.get("cases") or ())
        ]

    def save_case(self, spec: ToolSpec, case: TestCase) -> str | None:
        if spec.source != self.name:
            return None
        answer = self._ask_kernel({"action": "save", "tool": spec.name, "case": case.to_dict()})
        return str(answer.get("saved") or self.notebook)

    def run_tests(self, spec: ToolSpec) -> TestStatus:
        """Run the tool's cases in its kernel (where they belong); its status afterwards."""
        answer = self._ask_kernel({"action": "run", "tool": spec.name})
        return TestStatus.from_dict(answer.get("tests") or {"tool": spec.name})

    def _ask_kernel(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Call the kernel's private tests tool from a thread other than the connection's."""
        client, loop = self._client, self._loop
        if client is None or loop is None:
            raise ToolUnavailable(
                f"The kernel of {self.notebook or self.name} is not connected; its tool tests "
                "cannot be reached now."
            )

        async def call() -> Any:
            # A plain tools/call request: the private tool is never listed, and the SDK's
            # call_tool would relist the kernel's tools to find its output schema, then log
            # that it is "not listed by server" on every call.
            from mcp import types

            request = types.CallToolRequest(
                params=types.CallToolRequestParams(name=KERNEL_TESTS_TOOL, arguments=arguments)
            )
            return await client.session.send_request(request, types.CallToolResult)

        pending = asyncio.run_coroutine_threadsafe(call(), loop)
        try:
            result = pending.result(_ANSWER_S)
        except concurrent.futures.TimeoutError:
            pending.cancel()  # the kernel call stops too
            raise ToolUnavailable(
                f"The kernel of {self.notebook or self.name} did not answer within "
                f"{_ANSWER_S:g} s (is a cell running?); try again when it is idle."
            ) from None
        if result.is_error:
            text = " ".join(getattr(b, "text", "") for b in result.content).strip()
            raise TestCaseError(text or "the kernel refused the test case")
        structured = result.structured_content or {}
        return dict(structured.get("result", structured)) if isinstance(structured, Mapping) else {}
