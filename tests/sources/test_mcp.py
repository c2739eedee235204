"""McpSource against real MCP server processes: mcp-server-time (PyPI), the reference
filesystem server (npm, via npx) and a small SDK server of our own (tests/mcp_peers)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tcp_relay import tcp_relay  # tests/ is on sys.path (rootdir conftest)
from waiting import wait_until

from nexus_jupyter import Registry, ToolUnavailable
from nexus_jupyter.core.tools.context import CancellationToken
from nexus_jupyter.sources.mcp import McpSource

pytestmark = pytest.mark.e2e

VENV_BIN = Path(sys.executable).parent
PEERS = Path(__file__).resolve().parents[1] / "mcp_peers"
PEER_SERVER = PEERS / "peer_server.py"


def children_running(marker: str) -> list[int]:
    """PIDs of this process's children whose command line contains ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == os.getpid() and marker in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def reg() -> Iterator[Registry]:
    registry = Registry()
    yield registry
    registry.close()


def ready(reg: Registry, source: McpSource) -> Callable[[], bool]:
    return lambda: source.state == "ready"


def test_time_server_tools_are_namespaced_and_return_real_results(reg: Registry) -> None:
    source = reg.add_source(McpSource("time", command=str(VENV_BIN / "mcp-server-time")))
    assert source.name == "mcp:time" and source.kind == "mcp"
    wait_until(reg, ready(reg, source))
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(reg.names())
    spec = reg.get("mcp__time__get_current_time").spec
    assert spec.source == "mcp:time" and spec.source_kind == "mcp"
    assert spec.permission == "read_only"  # from the server's readOnlyHint
    assert "timezone" in spec.input_schema["properties"]
    result = reg.call_sync("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"})
    assert result.ok, result.error
    assert result.structured["timezone"] == "Asia/Tokyo"
    assert result.structured["datetime"].endswith("+09:00")
    converted = reg.call_sync(
        "mcp__time__convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Kolkata"},
    )
    assert converted.structured["target"]["datetime"].split("T")[1].startswith("17:30")
    failed = reg.call_sync("mcp__time__get_current_time", {"timezone": "Mars/Olympus"})
    assert failed.is_error and "Mars/Olympus" in (failed.error or "")


def test_arguments_are_validated_against_the_servers_schema_first(reg: Registry) -> None:
    from nexus_jupyter import ToolValidationError

    source = reg.add_source(McpSource("time", command=str(VENV_BIN / "mcp-server-time")))
    wait_until(reg, ready(reg, source))
    with pytest.raises(ToolValidationError) as info:
        reg.call_sync("mcp__time__get_current_time", {"timezone": 42})
    assert info.value.errors[0].path == "$.timezone"


def test_filesystem_server_from_npm(reg: Registry, tmp_path: Path) -> None:
    if not (PEERS / "node_modules" / ".bin" / "mcp-server-filesystem").exists():
        pytest.skip("run `npm ci` in tests/mcp_peers (make setup does) for the filesystem server")
    if shutil.which("npx") is None:
        pytest.skip("npx is not installed")
    (tmp_path / "hello.txt").write_text("hello from a file\n")
    source = reg.add_source(
        McpSource(
            "fs",
            command="npx",
            args=["--no-install", "mcp-server-filesystem", str(tmp_path)],
            cwd=str(PEERS),
        )
    )
    wait_until(reg, ready(reg, source), timeout=60)
    names = reg.names()
    assert "mcp__fs__read_text_file" in names and "mcp__fs__write_file" in names
    result = reg.call_sync("mcp__fs__read_text_file", {"path": str(tmp_path / "hello.txt")})
    assert result.ok, result.error
    assert "hello from a file" in result.text
    assert reg.get("mcp__fs__write_file").spec.permission != "read_only"
    denied = reg.call_sync("mcp__fs__read_text_file", {"path": "/etc/hostname"})
    assert denied.is_error  # outside the allowed folder: the server itself refuses


def test_killed_server_is_reconnected(reg: Registry) -> None:
    source = reg.add_source(McpSource("time", command=str(VENV_BIN / "mcp-server-time")))
    wait_until(reg, ready(reg, source))
    (pid,) = children_running("mcp-server-time")
    os.kill(pid, signal.SIGKILL)
    wait_until(reg, lambda: reg.entry("mcp__time__get_current_time").status == "unavailable")
    with pytest.raises(ToolUnavailable, match="time"):
        reg.call_sync("mcp__time__get_current_time", {"timezone": "UTC"})
    assert "mcp__time__get_current_time" in reg.names()  # still listed meanwhile
    wait_until(reg, ready(reg, source))
    assert source.connects == 2
    assert children_running("mcp-server-time") != [pid]
    assert reg.call_sync("mcp__time__get_current_time", {"timezone": "UTC"}).ok


def test_status_shows_error_reason_and_stderr(reg: Registry) -> None:
    script = "import sys; sys.stderr.write('fatal: NEED_API_KEY is not set\\n'); sys.exit(3)"
    reg.add_source(McpSource("broken", command=sys.executable, args=["-c", script]))
    failed: list[Any] = []  # the published status that showed the failure (not a later retry)

    def published_failure() -> bool:
        state = next(s for s in reg.sources() if s.name == "mcp:broken")
        if state.details.get("state") == "error" and state.details.get("stderr"):
            failed.append(state)
        return bool(failed)

    wait_until(reg, published_failure)
    state = failed[0]
    assert state.error and "reconnecting" in state.error
    assert any("NEED_API_KEY" in line for line in state.details["stderr"])
    missing = reg.add_source(McpSource("missing", command="/nonexistent/mcp-server"))
    wait_until(reg, lambda: missing.state == "error")
    assert "nonexistent" in (missing.reason or "") or "No such file" in (missing.reason or "")


def test_a_server_process_that_exits_is_named_with_its_exit_code_and_stderr(
    reg: Registry,
) -> None:
    """Not the SDK's "Connection closed": the process exited, with which code, and what it
    last wrote to stderr (only its own lines, not an earlier process's)."""
    script = (
        "import sys; sys.stderr.write('dead: starting\\n\\nfatal: NEED_API_KEY is not set\\n')"
        "; sys.exit(3)"
    )
    source = reg.add_source(McpSource("dead", command=sys.executable, args=["-c", script]))
    wait_until(reg, lambda: "exited" in (source.reason or ""))
    expected = (
        "the server process exited with code 3; the last lines of its stderr: "
        "dead: starting | fatal: NEED_API_KEY is not set"
    )
    assert (source.reason or "").startswith(expected), source.reason
    state = next(s for s in reg.sources() if s.name == "mcp:dead")
    assert (state.error or "").startswith(expected) and "Connection closed" not in state.error


def test_a_ready_server_that_crashes_says_how_it_ended(reg: Registry) -> None:
    reasons: list[str] = []
    source = reg.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    unsubscribe = reg.subscribe(lambda _change: reasons.append(source.reason or ""))
    for crashes in (1, 2):  # the second one's stderr holds its own lines, not the first's
        wait_until(reg, lambda: source.state == "ready" and source.connects == crashes)
        assert reg.call_sync("mcp__peer__crash", {}).is_error
    wait_until(reg, lambda: source.state == "ready" and source.connects == 3)
    unsubscribe()
    crashed = {r.split("; reconnecting")[0] for r in reasons if "exited" in r}
    assert crashed == {
        "the server process exited with code 7; the last lines of its stderr: "
        "peer: started | peer: crashing on request"
    }, crashed


def test_a_server_that_closes_its_output_is_not_said_to_die_of_our_signal(
    reg: Registry,
) -> None:
    """It closed stdout and kept running; closing the session stopped it with SIGTERM. The
    reason says what happened, not "ended by signal SIGTERM" (a signal we sent)."""
    reasons: list[str] = []
    source = reg.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    wait_until(reg, ready(reg, source))
    unsubscribe = reg.subscribe(lambda _change: reasons.append(source.reason or ""))
    try:
        assert reg.call_sync("mcp__peer__hang_up", {}).is_error
        wait_until(reg, lambda: any("stdout" in r or "signal" in r for r in reasons))
    finally:
        unsubscribe()
    said = next(r for r in reasons if "stdout" in r or "signal" in r).split("; reconnecting")[0]
    assert said == (
        "the server closed its output (stdout) while its process kept running, so the "
        "process was stopped (SIGTERM); the last lines of its stderr: "
        "peer: started | peer: closing stdout"
    ), said


def test_a_server_that_failed_stays_broken_while_it_tries_again(reg: Registry) -> None:
    """Every status published between the first failure and the next success carries the
    error: a check that reads it during a retry must not see a healthy source."""
    seen: list[tuple[str, str | None]] = []

    def record(_change: object) -> None:
        state = next((s for s in reg.sources() if s.name == "mcp:missing"), None)
        if state is not None:
            seen.append((state.details.get("state", ""), state.error))

    unsubscribe = reg.subscribe(record)
    source = reg.add_source(McpSource("missing", command="/nonexistent/mcp-server"))
    wait_until(reg, lambda: sum(phase == "reconnecting" for phase, _ in seen) >= 2)
    unsubscribe()
    assert source.connects == 0
    first_failure = next(i for i, (phase, _) in enumerate(seen) if phase == "error")
    after = seen[first_failure:]
    assert all(error for _, error in after), after
    retrying = [error for phase, error in after if phase == "reconnecting"]
    assert all(e and e.endswith("; reconnecting") and "nonexistent" in e for e in retrying)


def test_list_changed_refreshes_the_tools(reg: Registry) -> None:
    source = reg.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    wait_until(reg, ready(reg, source))
    assert "peer: started" in source.status["stderr"]
    assert reg.call_sync("mcp__peer__grow", {"name": "sprout"}).ok
    wait_until(reg, lambda: "mcp__peer__sprout" in reg)
    assert reg.call_sync("mcp__peer__sprout", {}).text == "I am sprout"


def test_progress_timeout_and_cancellation_pass_through(reg: Registry, tmp_path: Path) -> None:
    source = reg.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    wait_until(reg, ready(reg, source))
    seen: list[tuple[float, float | None, str | None]] = []
    done = reg.call_sync(
        "mcp__peer__slow", {"seconds": 0}, progress=lambda p, t, m: seen.append((p, t, m))
    )
    assert done.ok and done.text == "done"
    assert seen == [(1, 2, "started"), (2, 2, "sleeping")]
    marker = tmp_path / "cancelled"
    timed_out = reg.call_sync(
        "mcp__peer__slow", {"seconds": 30, "marker": str(marker)}, timeout=0.5
    )
    assert timed_out.error_type == "TimeoutError"
    wait_for_file(marker)  # the server's handler was cancelled too
    token = CancellationToken()
    marker2 = tmp_path / "cancelled2"
    cancelled = reg.call_sync(  # cancelled once the server says it is sleeping
        "mcp__peer__slow",
        {"seconds": 30, "marker": str(marker2)},
        cancellation=token,
        progress=lambda p, t, m: token.cancel() if m == "sleeping" else None,
    )
    assert cancelled.error_type == "CancelledError"
    wait_for_file(marker2)


def test_a_crashing_server_keeps_the_registry_alive(reg: Registry) -> None:
    source = reg.add_source(McpSource("peer", command=sys.executable, args=[str(PEER_SERVER)]))
    wait_until(reg, ready(reg, source))
    result = reg.call_sync("mcp__peer__crash", {})
    assert result.is_error
    wait_until(reg, lambda: source.connects >= 2 and source.state == "ready")
    assert any("crashing on request" in line for line in source.status["stderr"])
    assert reg.call_sync("mcp__peer__echo", {"text": "back"}).text == "back"


def test_from_config_interpolates_at_connect_time(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXUS_TEST_TIME_BIN", str(VENV_BIN / "mcp-server-time"))
    source = McpSource.from_config({"name": "t", "command": "${env:NEXUS_TEST_TIME_BIN}"})
    reg.add_source(source)
    wait_until(reg, ready(reg, source))
    bad = reg.add_source(
        McpSource.from_config(
            {
                "name": "bad",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer ${credentials:svc/token}"},
            }
        )
    )
    wait_until(reg, lambda: bad.state == "error")
    assert "svc/token" in (bad.reason or "")


def test_stop_and_restart(reg: Registry) -> None:
    source = reg.add_source(McpSource("time", command=str(VENV_BIN / "mcp-server-time")))
    wait_until(reg, ready(reg, source))
    source.restart().result(10)
    wait_until(reg, lambda: source.connects == 2 and source.state == "ready")
    reg.remove_source("mcp:time")
    assert "mcp__time__get_current_time" not in reg
    assert children_running("mcp-server-time") == [] or wait_no_children("mcp-server-time")


def wait_for_file(path: Path, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} was not written"
        time.sleep(0.02)


def wait_no_children(marker: str, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while children_running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def shouting_server() -> tuple[Registry, Any]:
    """A registry with a ``shout`` tool, served over streamable HTTP on a free port."""
    from nexus_jupyter import tool
    from nexus_jupyter.serve.mcp_server import McpServerHandle

    @tool
    def shout(text: str) -> str:
        """Upper-case the text."""
        return text.upper()

    remote = Registry()
    remote.add(shout)
    return remote, McpServerHandle.start(remote, port=0)


def test_http_server_source_lists_calls_refreshes_and_reconnects(reg: Registry) -> None:
    from nexus_jupyter import tool
    from nexus_jupyter.serve.mcp_server import McpServerHandle

    @tool
    def whisper(text: str) -> str:
        """Lower-case the text."""
        return text.lower()

    remote, handle = shouting_server()
    try:
        source = reg.add_source(McpSource("remote", url=handle.url, headers={"X-Test": "1"}))
        wait_until(reg, ready(reg, source))
        assert source.status["transport"] == "http"
        assert reg.call_sync("mcp__remote__shout", {"text": "hi"}).text == "HI"
        remote.add(whisper)  # the server's list_changed refreshes our copy
        wait_until(reg, lambda: "mcp__remote__whisper" in reg)
        port = handle.port
        handle.stop()
        wait_until(reg, lambda: source.state == "error")
        assert reg.entry("mcp__remote__shout").status == "unavailable"
        handle = McpServerHandle.start(remote, port=port)
        wait_until(reg, lambda: source.state == "ready", timeout=60)
        assert reg.call_sync("mcp__remote__whisper", {"text": "HI"}).text == "hi"
    finally:
        handle.stop()
        remote.close()


def test_a_request_the_http_transport_fails_reconnects_the_source(reg: Registry) -> None:
    """Finding: when a request's POST failed inside the SDK's HTTP transport (the server's
    port already closed under a re-listing, a proxy hanging up), the transport cancelled the
    source's connection task from within, and the source took that for its own stop: it
    stayed "ready" on a dead connection and never reconnected. A relay in front of the
    server hangs up on new requests while the listen stream stays open."""
    remote, handle = shouting_server()
    try:
        with tcp_relay(handle.port) as relay:
            url = f"http://127.0.0.1:{relay.port}/mcp"
            host = {"Host": f"127.0.0.1:{handle.port}"}  # the server's own address
            source = reg.add_source(McpSource("remote", url=url, headers=host))
            wait_until(reg, ready(reg, source))
            relay.refuse_requests()
            failed = reg.call_sync("mcp__remote__shout", {"text": "hi"}, timeout=30)
            assert failed.is_error and failed.error_type != "TimeoutError", failed.error
            wait_until(reg, lambda: source.state != "ready")
            relay.forward_again()
            wait_until(reg, lambda: source.state == "ready" and source.connects == 2, timeout=60)
            assert reg.call_sync("mcp__remote__shout", {"text": "hi"}).text == "HI"
    finally:
        handle.stop()
        remote.close()


def test_status_masks_secrets_a_failing_server_echoes(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nexus_jupyter.core.policy.credentials import CredentialStore

    secret = "canary-mcp-secret-4711"
    monkeypatch.setenv("NEXUS_CRED_SVC_TOKEN", secret)
    script = "import sys; sys.stderr.write('bad token: ' + sys.argv[1] + '\\n'); sys.exit(2)"
    source = reg.add_source(
        McpSource.from_config(
            {
                "name": "leaky",
                "command": sys.executable,
                "args": ["-c", script, "${credentials:svc/token}"],
            },
            credentials=CredentialStore(),
        )
    )
    wait_until(reg, lambda: source.state == "error" and bool(source.status["stderr"]))
    status = repr(reg.status())
    assert "bad token: ***" in status
    assert secret not in status


def test_a_change_while_the_source_connects_is_not_lost(reg: Registry) -> None:
    """A tool the server gains right after answering the source's first ``tools/list``
    (a notebook cell that runs while the Jupyter server connects to its kernel) reaches
    the registry: the source subscribes to changes before it lists, so the change comes
    as an event and is never lost between the listing and the subscription."""
    from nexus_jupyter import tool
    from nexus_jupyter.serve.mcp_server import McpServerHandle

    @tool
    def early() -> str:
        """Defined before the source connected."""
        return "early"

    @tool
    def late() -> str:
        """Defined while the source connected."""
        return "late"

    class ChangesWhileListed(Registry):
        """Gains ``late`` as soon as its first listing over MCP is taken."""

        armed = False

        def entries(self, **filters: object) -> list:  # type: ignore[type-arg]
            listed = super().entries(**filters)
            if self.armed:
                self.armed = False
                self.add(late)
            return listed

    remote = ChangesWhileListed()
    remote.add(early)
    handle = McpServerHandle.start(remote, port=0)
    try:
        remote.armed = True
        source = reg.add_source(McpSource("remote", url=handle.url))
        wait_until(reg, ready(reg, source))
        assert not remote.armed, "the server was never asked for its tools"
        wait_until(reg, lambda: "mcp__remote__late" in reg, timeout=10)
        assert reg.call_sync("mcp__remote__late", {}).text == "late"
    finally:
        handle.stop()
        remote.close()
