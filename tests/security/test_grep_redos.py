"""Finding: the read-only ``grep`` with ``(a+)+$`` on a line of 40 ``a`` and a ``!`` held
the GIL forever; ``nexus-tools serve`` stopped answering ``initialize`` and the Jupyter
server's ``/api/status`` timed out.

Now grep runs on a linear-time engine (ripgrep, else google-re2): the same call answers at
once over a real ``serve`` (with and without ripgrep on PATH) and a real Jupyter server, and
both keep answering.
"""

# ruff: noqa: F403, F405 -- the pytest-jupyter fixtures come in with a star import
from __future__ import annotations

import asyncio
import json
import shutil
import sys
import time
from pathlib import Path

import pytest
from jupyter_fixtures import *
from serving import call_text, mcp_client, serve_http

from nexus_jupyter import Registry
from nexus_jupyter.sources.builtin.grep_engines import MAX_PATTERN_CHARS

pytestmark = pytest.mark.e2e

BOMBS = ["(a+)+$", "(a|aa)+$", "(a|a)+$", "(.*a){20}$", "^(a?){40}a{40}$"]
PROMPT_S = 3.0


def plant(root: Path) -> None:
    (root / "tools" / "dynamic").mkdir(parents=True, exist_ok=True)
    lines = ["a" * 40 + "!", "a" * 4000 + "!", "normal line"] * 50
    (root / "victim.txt").write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("engine", ["ripgrep", "re2"])
async def test_catastrophic_patterns_answer_promptly_over_serve(
    tmp_path: Path, engine: str
) -> None:
    if engine == "ripgrep" and shutil.which("rg") is None:
        pytest.fail("ripgrep is not installed: run `make ripgrep` (Debian package ripgrep)")
    plant(tmp_path)
    # without ripgrep on PATH the server falls back to google-re2
    env = {} if engine == "ripgrep" else {"PATH": str(Path(sys.executable).parent)}
    with serve_http(tmp_path, env=env) as server:
        async with mcp_client(server.url) as client:
            slowest = 0.0
            for pattern in BOMBS:
                for mode in ("content", "count", "files_with_matches"):
                    started = time.perf_counter()
                    is_error, text = await asyncio.wait_for(
                        call_text(client, "grep", {"pattern": pattern, "output_mode": mode}),
                        PROMPT_S * 3,
                    )
                    slowest = max(slowest, time.perf_counter() - started)
                    assert not is_error, text
            # a second client can still connect and call while the first is open
            async with mcp_client(server.url) as other:
                is_error, text = await call_text(other, "read", {"path": "victim.txt", "limit": 1})
                assert not is_error and "!" in text
            is_error, text = await call_text(client, "grep", {"pattern": "normal", "head_limit": 5})
            assert not is_error and "victim.txt" in text
            is_error, text = await call_text(client, "grep", {"pattern": "(a)\\1"})
            assert is_error and "backreferences" in text
            is_error, text = await call_text(
                client, "grep", {"pattern": "a" * (MAX_PATTERN_CHARS + 1)}
            )
            assert is_error and "limit" in text
    print(
        f"\ngrep over serve ({engine}): attempts={len(BOMBS) * 3} slowest={slowest * 1000:.0f} ms "
        "hangs=0"
    )
    assert slowest < PROMPT_S


@pytest.fixture
def jp_server_config(jp_root_dir: Path) -> dict[str, object]:
    plant(Path(jp_root_dir))
    return nexus_server_config(lambda root: Registry.default(root=root, mcp=False))


@on_server_loop
async def test_catastrophic_patterns_answer_promptly_over_rest(jp_fetch: object) -> None:
    slowest = 0.0
    for pattern in BOMBS:
        started = time.perf_counter()
        status, text = await rest_call(
            jp_fetch, "grep", {"pattern": pattern, "output_mode": "count"}
        )
        slowest = max(slowest, time.perf_counter() - started)
        assert status == 200 and json.loads(text)["is_error"] is False, text
        response = await jp_fetch("api", "status")  # the Jupyter server's own route
        assert response.code == 200
    print(f"\ngrep over REST: attempts={len(BOMBS)} slowest={slowest * 1000:.0f} ms hangs=0")
    assert slowest < PROMPT_S
