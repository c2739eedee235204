"""Malformed JSON-RPC and foreign Host/Origin headers against ``nexus-tools serve`` over
streamable HTTP (a real process, raw HTTP/1.1 over a socket so every byte is ours)."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Iterator

import mcp
import mcp_types as types
import pytest
from serving import INIT, serve_http  # tests/ is on sys.path (rootdir conftest)

pytestmark = pytest.mark.e2e

TOOL = '''from nexus_jupyter import tool


@tool
def echo(text: str) -> str:
    """Return the text."""
    return text
'''
MODERN = "2026-07-28"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    project = tmp_path_factory.mktemp("fuzz")
    (project / "tools" / "dynamic").mkdir(parents=True)
    (project / "tools" / "dynamic" / "echo.py").write_text(TOOL)
    with serve_http(project, "--dir", "tools/dynamic", clean_stop=True) as served:
        yield served.url, int(served.url.rsplit(":", 1)[1].split("/")[0])


async def raw_post(
    port: int,
    body: bytes,
    headers: dict[str, str] | None = None,
    *,
    host: str | None = "default",
    extra: tuple[tuple[str, str], ...] = (),
) -> int:
    """POST ``body`` to /mcp with exactly these headers; returns the HTTP status."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    lines = ["POST /mcp HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {f'127.0.0.1:{port}' if host == 'default' else host}")
    base = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Connection": "close",
        "Content-Length": str(len(body)),
    }
    lines += [f"{k}: {v}" for k, v in {**base, **(headers or {})}.items()]
    lines += [f"{k}: {v}" for k, v in extra]
    # A body over the server's 4 MiB limit is refused from its Content-Length alone; sending
    # it anyway would make the kernel reset the connection under the 413 answer.
    oversized = len(body) > 4 * 1024 * 1024
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + (b"" if oversized else body))
    try:
        await writer.drain()
    except ConnectionResetError:
        pass  # the server answered (413) and closed before reading it all: read the answer
    try:
        status_line = await asyncio.wait_for(reader.readline(), 15)
        await asyncio.wait_for(reader.read(), 15)  # the rest; Connection: close ends it
    except ConnectionResetError:
        status_line = b""
    finally:
        writer.close()
    return int(status_line.split()[1]) if status_line else 0


def corpus() -> list[bytes]:
    """Malformed or hostile bodies: bad JSON, bad UTF-8, wrong types, huge, deep."""
    bad_json = [
        b"",
        b" ",
        b"{",
        b"}",
        b"[",
        b"]",
        b"{]",
        b'{"jsonrpc":',
        b'{"jsonrpc":"2.0",}',
        b"{'jsonrpc':'2.0'}",
        b'{"a":1}{"b":2}',
        b"NaN",
        b'{"id":NaN}',
        b"null",
        b"true",
        b"0",
        b"-",
        b"1e99999",
        b'"just a string"',
        b"[]",
        b"[[]]",
        b"{}",
        b'{"jsonrpc":"2.0","method":"tools/list","id":1',
        b"\x00\x00\x00",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list"}garbage',
        b"\xef\xbb\xbf{}",
    ]
    bad_utf8 = [
        b"\xff\xfe\xfd",
        b'{"jsonrpc":"2.0","id":1,"method":"\xc3\x28"}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"\xed\xa0\x80"}}}',
        b'{"k":"\xc0\xaf"}',
        b"\x80" * 64,
        b'{"jsonrpc":"2.0","id":"\xf5\x80\x80\x80","method":"ping"}',
        '{"jsonrpc":"2.0","id":1,"method":"x"}'.encode("utf-16"),
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"text":"\\ud800"}}}',
    ]
    wrong = [
        {"jsonrpc": 2, "id": 1, "method": "tools/list"},
        {"jsonrpc": "1.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": 7},
        {"jsonrpc": "2.0", "id": 1, "method": None},
        {"jsonrpc": "2.0", "id": {}, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": [1], "method": "tools/list"},
        {"jsonrpc": "2.0", "id": True, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": "x"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": 5},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": 5}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": "x"},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": [1]},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": 5}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "../../etc"}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 5}},
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": None},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1, 2]},
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": 1, "error": "x"},
        {"jsonrpc": "2.0", "id": 1},
        {"method": "tools/list"},
        [{"jsonrpc": "2.0"}],
        [INIT, INIT],
        [[INIT]],
        {"jsonrpc": "2.0", "id": 1, "method": "x" * 100_000},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": 5}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/list",
            "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": 12}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {}},
        {"jsonrpc": "2.0", "id": 2**80, "method": "tools/list"},
    ]
    huge = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": "x" * 3_000_000}},
            }
        ).encode(),
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"p":' + b"9" * 100_000 + b"}}",
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {"a": list(range(200_000))},
            }
        ).encode(),
        b" " * (5 * 1024 * 1024),
    ]  # over the 4 MiB limit
    deep = [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b"[" * 5_000,
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": nest(900)}},
            }
        ).encode(),
    ]
    return bad_json + bad_utf8 + [json.dumps(w).encode() for w in wrong] + huge + deep


def nest(depth: int) -> object:
    value: object = "leaf"
    for _ in range(depth):
        value = {"k": value}
    return value


async def valid_call(url: str, mode: str) -> str:
    async with mcp.Client(url, mode=mode) as client:
        result = await client.call_tool("echo", {"text": "still here"})
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        return block.text


async def open_session(port: int) -> str:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    body = json.dumps(INIT).encode()
    writer.write(
        f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: application/json, text/event-stream\r\nConnection: close\r\n"
        f"Content-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    raw = await asyncio.wait_for(reader.read(), 15)
    writer.close()
    head = raw.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
    session = next(
        line.split(":", 1)[1].strip()
        for line in head.split("\r\n")
        if line.startswith("mcp-session-id:")
    )
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
    await raw_post(port, note, {"Mcp-Session-Id": session})
    return session


async def test_malformed_messages_never_take_the_server_down(server: tuple[str, int]) -> None:
    url, port = server
    session = await open_session(port)
    contexts = {
        "no session": {},
        "legacy session": {"Mcp-Session-Id": session},
        "2026-07-28": {"MCP-Protocol-Version": MODERN},
    }
    bodies = corpus()
    statuses: Counter[int] = Counter()
    sent = 0
    for name, headers in contexts.items():
        for i, body in enumerate(bodies):
            status = await raw_post(port, body, headers)
            assert status != 0, f"no answer to message {i} ({name}): {body[:80]!r}"
            statuses[status] += 1
            sent += 1
            if i % 25 == 0:
                assert await valid_call(url, "auto") == "still here"
    assert sent >= 150
    assert await valid_call(url, "legacy") == "still here"
    assert await valid_call(url, "auto") == "still here"
    server_errors = sum(n for s, n in statuses.items() if s >= 500)
    print(
        f"\nfuzz: {sent} malformed messages, statuses {dict(sorted(statuses.items()))}, "
        f"5xx: {server_errors}; the server answered every one and the next valid calls"
    )
    assert server_errors == 0


FOREIGN_HOSTS = [
    "evil.com",
    "evil.com:{port}",
    "127.0.0.1.evil.com:{port}",
    "localhost.evil.com:{port}",
    "attacker.localhost:{port}",
    "127.0.0.2:{port}",
    "127.0.0.1:1",
    "localhost:{port}1",
    "localhost:{port}@evil.com",
    "evil.com#@127.0.0.1:{port}",
    "0.0.0.0:{port}",
    "[::2]:{port}",
    "",
    "localhost:abc",
    "LOCALHOST:{port}.evil",
    "192.168.1.1:{port}",
    "10.0.0.1:{port}",
    "metadata.google.internal",
    "127.0.0.1:{port}/x",
    "%00:{port}",
]
FOREIGN_ORIGINS = [
    "http://evil.com",
    "https://evil.com",
    "http://evil.com:{port}",
    "null",
    "http://127.0.0.1.evil.com:{port}",
    "http://localhost.evil.com",
    "http://attacker.localhost:{port}",
    "http://localhost:{port}@evil.com",
    "file://",
    "chrome-extension://abcdef",
    "http://127.0.0.2:{port}",
    "http://192.168.1.1",
    "ftp://127.0.0.1:{port}",
    "http://[::2]:{port}",
    "http://localhost:{port}/path",
    "data:text/html,hi",
    "http://0.0.0.0:{port}",
    "http://evil.com/http://localhost:{port}",
    "  ",
    "http://localhost:99999",
]


async def test_foreign_host_and_origin_are_always_rejected(server: tuple[str, int]) -> None:
    url, port = server
    body = json.dumps(INIT).encode()
    rejected = total = 0
    for host in FOREIGN_HOSTS:
        for headers in ({}, {"MCP-Protocol-Version": MODERN}):
            status = await raw_post(port, body, headers, host=host.format(port=port))
            total += 1
            rejected += status in (400, 403, 421)
            assert status in (400, 421), f"Host {host!r} got {status}"
    for dup in ([("Host", "evil.com")],):
        status = await raw_post(port, body, extra=tuple(dup))  # a second, foreign Host header
        total += 1
        rejected += status in (400, 421)
    status = await raw_post(port, body, host=None)  # no Host at all
    total += 1
    rejected += status in (400, 421)
    for origin in FOREIGN_ORIGINS:
        for headers in ({}, {"MCP-Protocol-Version": MODERN}):
            status = await raw_post(port, body, {**headers, "Origin": origin.format(port=port)})
            total += 1
            rejected += status == 403
            assert status == 403, f"Origin {origin!r} got {status}"
    print(f"\nforeign Host/Origin: {rejected}/{total} rejected ({100 * rejected / total:.0f}%)")
    assert rejected == total
    # and the legitimate ones still work
    assert await raw_post(port, body, host=f"localhost:{port}") == 200
    assert await raw_post(port, body, {"Origin": "http://localhost:5173"}) == 200
    assert await valid_call(url, "auto") == "still here"


def test_host_guard_names_when_binding_every_interface() -> None:
    from nexus_jupyter.serve.mcp_http import HostGuard

    guard = HostGuard(app=None, host="0.0.0.0", port=8765, extra_names=["devbox.lan"])
    assert guard.host_ok("devbox.lan:8765") and guard.host_ok("localhost:8765")
    assert guard.host_ok("[::1]:8765") and guard.host_ok("DEVBOX.LAN:8765")
    for bad in (
        "0.0.0.0:8765",
        "devbox.lan:8766",
        "devbox.lan.evil.com:8765",
        "evil.com:8765",
        "devbox.lan:8765@evil.com",
        "",
        "devbox.lan:87x5",
    ):
        assert not guard.host_ok(bad), bad
    assert guard.origin_ok(None) and guard.origin_ok("http://devbox.lan:3000")
    assert not guard.origin_ok("http://devbox.lan.evil.com") and not guard.origin_ok("null")


@pytest.mark.parametrize(
    ("host", "port", "message"),
    [
        ("0.0.0.0", 8765, "binds loopback only"),
        ("192.0.2.7", 8765, "binds loopback only"),
        ("example.com", 8765, "binds loopback only"),
        ("127.0.0.1", 99999, "out of range"),
        ("::1", -1, "out of range"),
    ],
)
def test_http_server_refuses_non_loopback_hosts_and_bad_ports(
    host: str, port: int, message: str
) -> None:
    from nexus_jupyter import ConfigError
    from nexus_jupyter.serve.mcp_http import bind_socket

    with pytest.raises(ConfigError, match=message):
        bind_socket(host, port)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
def test_http_server_binds_loopback(host: str) -> None:
    from nexus_jupyter.serve.mcp_http import bind_socket

    try:
        sock = bind_socket(host, 0)
    except OSError as exc:  # a machine without IPv6 loopback
        pytest.skip(f"cannot bind {host}: {exc}")
    sock.close()
