"""Per-tool call statistics: counted on the call path (also from many threads at once), with
refusals apart, percentiles over a bounded window, and the same figures from an audit log."""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path

import pytest

from nexus_jupyter import Registry, tool
from nexus_jupyter.core.errors import ToolUnavailable, ToolValidationError
from nexus_jupyter.core.registry.source import MutableSource
from nexus_jupyter.core.telemetry.stats import WINDOW, CallStats, stats_from_calls, stats_key
from nexus_jupyter.core.tools.tool import Tool


@tool(threadsafe=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def explode() -> None:
    """Always fails."""
    raise RuntimeError("kaboom")


def test_calls_errors_and_refusals_are_counted_apart() -> None:
    with Registry(search="keyword") as reg:
        reg.add_many([add, explode])
        reg.call_sync("add", {"a": 1, "b": 2})
        reg.call_sync("explode", {})
        try:
            reg.call_sync("add", {"a": "x", "b": 2})
        except ToolValidationError:
            pass
        stats = reg.stats()
    assert (stats["add"].calls, stats["add"].errors, stats["add"].refused) == (1, 0, 1)
    assert (stats["explode"].calls, stats["explode"].errors) == (1, 1)
    assert stats["explode"].error_rate == 1.0
    assert stats["add"].p50 is not None and stats["add"].p50 <= stats["add"].p95
    assert stats["add"].to_dict()["p50_ms"] > 0


def test_no_call_is_lost_when_threads_call_at_once() -> None:
    with Registry(search="keyword") as reg:
        reg.add(add)

        def calls() -> None:
            for i in range(500):
                reg.call_sync("add", {"a": i, "b": 1})

        threads = [threading.Thread(target=calls) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert reg.stats()["add"].calls == 4000


def test_percentiles_are_nearest_rank_over_the_last_window_of_calls() -> None:
    stats = CallStats()
    for ms in range(1, 101):
        stats.record("t", ms / 1000, failed=ms % 10 == 0)
    row = stats.snapshot()["t"]
    assert (row.p50, row.p95, row.max) == (0.05, 0.095, 0.1)
    assert (row.calls, row.errors) == (100, 10)
    for _ in range(WINDOW):
        stats.record("t", 1.0, failed=False)
    row = stats.snapshot()["t"]
    assert row.p50 == row.max == 1.0  # the old calls left the window
    assert row.calls == 100 + WINDOW  # counts are for the whole life


def test_the_same_figures_from_audit_lines() -> None:
    lines = [
        {
            "tool": "add",
            "decision": "allow",
            "duration": 0.002,
            "error": None,
            "time": "2026-11-25T10:00:00.000+00:00",
        },
        {
            "tool": "add",
            "decision": "allow",
            "duration": 0.004,
            "error": "boom",
            "time": "2026-11-25T10:00:01.000+00:00",
        },
        {"tool": "add", "decision": "deny", "duration": 0.0, "error": "no"},
        {"tool": "ls", "decision": "invalid", "duration": 0.0, "error": "bad"},
        # a tool-test run's calls and refusals are audited but are not use
        {"tool": "add", "client": "test", "decision": "allow", "duration": 9.0, "error": "x"},
        {"tool": "add", "client": "test", "decision": "deny", "duration": 0.0, "error": "no"},
        {"tool": "only_tested", "client": "test", "decision": "allow", "duration": 0.1},
    ]
    stats = stats_from_calls(lines)
    assert "only_tested" not in stats
    assert (stats["add"].calls, stats["add"].errors, stats["add"].refused) == (2, 1, 1)
    assert (stats["add"].p50, stats["add"].p95) == (0.002, 0.004)
    assert stats["ls"].calls == 0 and stats["ls"].refused == 1 and stats["ls"].p50 is None


async def test_a_call_its_caller_cancels_counts_as_cancelled_not_failed() -> None:
    import asyncio

    from nexus_jupyter.core.tools.context import CancellationToken

    started = asyncio.Event()

    @tool
    async def nap() -> None:
        """Sleeps."""
        started.set()
        await asyncio.sleep(30)

    from nexus_jupyter.core.policy.audit import AuditLog

    log = Path(tempfile.mkdtemp()) / "audit.jsonl"
    reg = Registry(audit=AuditLog(log))
    reg.add_many([nap, explode])
    # the caller's task is cancelled (a client that went away)
    call = asyncio.ensure_future(reg.call("nap"))
    await asyncio.wait_for(started.wait(), 10)
    call.cancel()
    await asyncio.gather(call, return_exceptions=True)
    # the cancel signal (a Cancel button): the call answers, cancelled
    started.clear()
    token = CancellationToken()
    answer = asyncio.ensure_future(reg.call("nap", cancellation=token))
    await asyncio.wait_for(started.wait(), 10)
    token.cancel()
    assert (await answer).error_type == "CancelledError"
    reg.call_sync("explode", {})
    figures = reg.stats()["nap"]
    assert (figures.calls, figures.errors, figures.cancelled, figures.refused) == (2, 0, 2, 0)
    assert figures.error_rate == 0.0 and figures.to_dict()["cancelled"] == 2
    assert (reg.stats()["explode"].errors, reg.stats()["explode"].cancelled) == (1, 0)
    # the audit log says so too: `nexus-tools stats` reads the same figures from it
    reg.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [line.get("error_type") for line in lines if line["tool"] == "nap"][-1] == (
        "CancelledError"
    )
    audited = stats_from_calls(lines)
    assert (audited["nap"].errors, audited["nap"].cancelled) == (0, 2)  # as the live figures
    assert (audited["explode"].errors, audited["explode"].cancelled) == (1, 0)


def test_a_test_runs_calls_and_refusals_count_in_no_statistics() -> None:
    from nexus_jupyter.core.tooltests.runner import request_for_tests

    with Registry(search="keyword") as reg:
        reg.add_many([add, explode])
        tests = request_for_tests()
        reg.call_sync("add", {"a": 1, "b": 2}, request=tests)
        reg.call_sync("explode", {}, request=tests)
        try:
            reg.call_sync("add", {"a": "one"}, request=tests)
        except ToolValidationError:
            pass
        assert reg.stats() == {}
        reg.call_sync("add", {"a": 1, "b": 2})
        assert reg.stats()["add"].calls == 1 and reg.stats()["add"].refused == 0


async def test_names_that_are_no_tool_get_no_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A client guessing names (or a typo) must not grow the table: only tools that exist or
    were called before are listed, here, in the audit log and in ``nexus-tools stats``."""
    from nexus_jupyter.cli.main import main
    from nexus_jupyter.core.errors import ToolNotFound
    from nexus_jupyter.core.policy.audit import AuditLog

    log = tmp_path / "audit.jsonl"
    reg = Registry(search="keyword", audit=AuditLog(log))
    reg.add(add)
    for name in ("ad", "addd", "guess-1", "guess-2"):
        try:
            reg.call_sync(name, {"a": 1})
        except ToolNotFound:
            pass
        try:
            await reg.call(name, {"a": 1})
        except ToolNotFound:
            pass
    reg.call_sync("add", {"a": 1, "b": 2})
    assert set(reg.stats()) == {"add"}
    reg.remove("add")  # a tool that was called keeps its row, and its refusals count there
    try:
        reg.call_sync("add", {"a": 1, "b": 2})
    except ToolNotFound:
        pass
    assert (reg.stats()["add"].calls, reg.stats()["add"].refused) == (1, 1)
    reg.close()
    assert main(["stats", "--audit", str(log), "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"add"}


def test_two_sources_of_one_name_are_counted_apart_and_summed_by_name() -> None:
    reg = Registry(search="keyword")
    try:
        for source, times in (("kernel:first.ipynb", 1), ("kernel:second.ipynb", 10)):
            defs = MutableSource(source, "kernel")

            def scale(a: int, times: int = times) -> int:
                """Scale a number."""
                return a * times

            defs.put(Tool.from_function(scale, source=source, source_kind="kernel"))
            reg.add_source(defs)
        assert reg.snapshot.entries["scale"].status == "error"  # a conflict
        assert reg.call_sync("scale", {"a": 2}, source="kernel:first.ipynb").structured == 2
        for _ in range(2):
            result = reg.call_sync("scale", {"a": 2}, source="kernel:second.ipynb")
            assert result.structured == 20
        with pytest.raises(ToolUnavailable):  # by name alone: which one is not known
            reg.call_sync("scale", {"a": 2})
        with pytest.raises(ToolValidationError):  # refused, on its own definition's line
            reg.call_sync("scale", {"a": "two"}, source="kernel:first.ipynb")
        by_source = {s: (row.calls, row.refused) for s, row in reg.stats_by_source("scale").items()}
        assert by_source == {
            "": (0, 1),
            "kernel:first.ipynb": (1, 1),
            "kernel:second.ipynb": (2, 0),
        }
        row = reg.stats()["scale"]
        assert (row.calls, row.refused, reg.call_counts()["scale"]) == (3, 2, (3, 2))
        # what a view of one definition shows: its own line (another defines the name)
        first = reg.stats_of("scale", "kernel:first.ipynb")
        assert first is not None and (first.calls, first.refused) == (1, 1)
        tool = reg.snapshot.entries["scale"].tool
        assert tool.stats_key == stats_key("scale", tool.spec.source)
    finally:
        reg.close()
