"""Finding: stored secrets leaked as dict keys of structured results, in validation errors
(``got 'canary-…'``, REST ``value``), in a tool's own log lines, and in simple variants
(upper case, base64, split across lines).

A canary secret is stored; tools return, print and log it in every form. Nothing that a
real ``nexus-tools serve`` writes to its stderr, no REST answer of a real Jupyter server, no
``nexus-tools call`` output and no validation error over MCP, REST or the CLI may contain it.
"""

# ruff: noqa: F403, F405 -- the pytest-jupyter fixtures come in with a star import
from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from jupyter_fixtures import *
from serving import call_text, mcp_client, serve_http

from nexus_jupyter import Registry

pytestmark = pytest.mark.e2e

CANARY = "canary-Zq81wXk5-secret"
ENV = {"NEXUS_CRED_CANARY_TOKEN": CANARY}
LEAKY = '''import base64
import logging
import urllib.parse

from nexus_jupyter import ToolContext, tool

own_log = logging.getLogger("leaky_tool_module")


@tool
def leak(*, ctx: ToolContext) -> dict:
    """Hands its secret out in every form it can."""
    s = ctx.credentials.get_sync("canary", "token")
    print("printing", s, s.upper(), base64.b64encode(s.encode()).decode(), flush=True)
    own_log.warning("own logger: %s / %s", s, s.encode().hex())
    ctx.log.warning("ctx log: %s", urllib.parse.quote(s, safe=""))
    return {
        s: "as a key",
        "upper": s.upper(),
        "b64": base64.b64encode(s.encode()).decode(),
        "b64url": base64.urlsafe_b64encode(("x" + s).encode()).decode(),
        "hex": s.encode().hex(),
        "url": urllib.parse.quote(s, safe=""),
        "split": s[:9] + "\\n" + s[9:],
        "nested": [{"deep": f"token={s};"}],
    }


@tool
def typed(n: int, items: list[int] = []) -> int:
    """Takes numbers only."""
    return n
'''


def leaks(text: str) -> list[str]:
    """The forms of the canary found in ``text`` (checked independently of the masker)."""
    flat = re.sub(r"\s|\\n", "", text)  # whitespace and escaped newlines removed
    checks = {
        "raw": CANARY.lower() in text.lower(),
        "split": CANARY.lower() in flat.lower(),
        "base64": base64.b64encode(CANARY.encode()).decode().rstrip("=") in text,
        "base64url-shifted": base64.urlsafe_b64encode(("x" + CANARY).encode()).decode()[4:-4]
        in text,
        "hex": CANARY.encode().hex() in text.lower(),
        "url": urllib.parse.quote(CANARY, safe="").lower() in text.lower(),
    }
    return [name for name, hit in checks.items() if hit]


def plant(root: Path) -> None:
    folder = root / "tools" / "dynamic"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "leaky.py").write_text(LEAKY)
    (root / "nex.yaml").write_text("search: {mode: keyword}\n")


@pytest.mark.parametrize("isolation", ["thread", "process"])
async def test_serve_masks_validation_errors_prints_and_logs(
    tmp_path: Path, isolation: str
) -> None:
    plant(tmp_path)
    config = tmp_path / "nex.yaml"
    config.write_text(config.read_text() + f"isolation: {isolation}\n")
    with serve_http(tmp_path, "--log-level", "INFO", env=ENV) as server:
        async with mcp_client(server.url) as client:
            is_error, _ = await call_text(client, "leak", {})
            assert not is_error
            for arguments in ({"n": CANARY}, {"n": 1, "items": [CANARY]}, {"n": {CANARY: 1}}):
                result = await client.call_tool("typed", arguments)
                assert result.is_error
                shown = json.dumps(result.model_dump(mode="json"))
                assert leaks(shown) == [], shown
        await asyncio.sleep(0.3)
        stderr = "".join(server.output)
    assert "printing" in stderr and "own logger" in stderr, stderr[-2000:]
    found = leaks(stderr)
    print(
        f"\nserve ({isolation}): validation errors over MCP=3, "
        f"lines={len(stderr.splitlines())}, leaks={found}"
    )
    assert found == []


@pytest.fixture
def jp_server_config(jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    plant(Path(jp_root_dir))
    monkeypatch.setenv("NEXUS_CRED_CANARY_TOKEN", CANARY)
    return nexus_server_config(lambda root: Registry.default(root=root, mcp=False))


@on_server_loop
async def test_rest_answers_mask_every_form(jp_fetch: object) -> None:
    status, body = await rest_call(jp_fetch, "leak", {})
    assert status == 200 and "as a key" in body
    answers = [body]
    for arguments in ({"n": CANARY}, {"n": 1, "items": [CANARY]}):
        status, body = await rest_call(jp_fetch, "typed", arguments)
        assert status == 422
        answers.append(body)
    found = [leaks(a) for a in answers]
    print(f"\nREST: answers={len(answers)} leaks={found}")
    assert found == [[], [], []], answers


def test_cli_masks_results_and_validation_errors(tmp_path: Path) -> None:
    plant(tmp_path)
    env = {**os.environ, **ENV, "NEXUS_HOME": str(tmp_path / "home")}
    exe = str(Path(sys.executable).parent / "nexus-tools")
    outputs = []
    for args in (["call", "leak"], ["--json", "call", "leak"], ["call", "typed", f"n={CANARY}"]):
        proc = subprocess.run(
            [exe, "--root", str(tmp_path), *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        outputs.append(proc.stdout + proc.stderr)
    assert "as a key" in outputs[0]
    found = [leaks(o) for o in outputs]
    print(f"\nCLI: runs={len(outputs)} leaks={found}")
    assert found == [[], [], []], outputs
