"""The nexus MCP client (:class:`McpSource`, as a registry uses it) driven by the conformance
suite's client scenarios: ``python nexus_client.py URL`` connects, lists the server's tools
and calls each one (with the arguments the scenario gives in ``MCP_CONFORMANCE_CONTEXT``,
else the smallest arguments its schema allows). A scripted user accepts every elicitation
without filling anything in, so the defaults the schema declares are what is sent."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from typing import Any

from nexus_jupyter import Registry
from nexus_jupyter.core.tools.channel import CURRENT_CHANNEL, Elicitation, Sampled
from nexus_jupyter.sources.mcp import McpSource
from nexus_jupyter.sources.mcp_auth import add_link_opener

SAMPLE_FOR_TYPE: dict[str, Any] = {
    "number": 1,
    "integer": 1,
    "string": "x",
    "boolean": True,
    "array": [],
    "object": {},
}


class ScriptedUser:
    """Stands in for the client that would answer the upstream's questions."""

    loop: Any = None

    def log(self, level: str, message: str, logger: str) -> None:
        print(f"[{level}] {logger}: {message}", file=sys.stderr)

    async def elicit(self, message: str, schema: dict[str, Any], *, key: str | None = None) -> Any:
        return Elicitation("accept", {})

    async def sample(
        self, messages: Any, *, max_tokens: int, system_prompt: Any, key: Any = None
    ) -> Any:
        return Sampled("a scripted answer", "scripted", "endTurn")

    async def list_roots(self, *, key: str | None = None) -> list[dict[str, Any]]:
        return [{"uri": "file:///tmp", "name": "tmp"}]


def smallest_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties") or {}
    return {
        name: SAMPLE_FOR_TYPE.get(str((properties.get(name) or {}).get("type")), "x")
        for name in schema.get("required") or ()
    }


class MemoryCredentials:
    """A credential store in memory: each scenario starts signed out."""

    def __init__(self) -> None:
        self.values: dict[tuple[str, str], str] = {}

    def lookup(self, service: str, key: str = "api_key") -> str | None:
        return self.values.get((service, key))

    def set(self, service: str, key: str, value: str, provider: str | None = None) -> str:
        self.values[(service, key)] = value
        return "memory"

    def mask(self, text: str) -> str:
        return text


def auth_for(scenario: str, context: dict[str, Any]) -> dict[str, Any] | None:
    """The ``auth:`` a user would write for the suite's auth scenarios: client credentials
    when the scenario hands out a secret without a sign-in, else a person signs in."""
    if not scenario.startswith("auth/"):
        return None
    if scenario.startswith("auth/client-credentials"):
        return {
            "type": "client_credentials",
            "client_id": context.get("client_id"),
            "client_secret": context.get("client_secret"),
            "issuer": context.get("issuer"),
        }
    return {
        "type": "oauth",
        "client_id": context.get("client_id"),
        "client_secret": context.get("client_secret"),
    }


def follow_sign_in_link(server: str, url: str) -> None:
    """Plays the person's browser: the suite's authorization server approves at once and
    redirects to our callback listener."""

    def follow() -> None:
        import httpx

        try:
            with httpx.Client(follow_redirects=True, timeout=10) as browser:
                browser.get(url)
        except httpx.HTTPError as exc:
            print(f"sign-in link failed: {exc}", file=sys.stderr)

    threading.Thread(target=follow, daemon=True).start()


async def main(url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    reg = Registry(search="keyword")
    auth = auth_for(os.environ.get("MCP_CONFORMANCE_SCENARIO", ""), context)
    if auth is not None:
        add_link_opener(follow_sign_in_link)
    source = McpSource("peer", url=url, timeout=20, auth=auth, credentials=MemoryCredentials())
    reg.add_source(source)
    try:
        for _ in range(500):  # up to 25 s: the suite runs scenarios side by side
            if source.state in ("ready", "error"):
                break
            await asyncio.sleep(0.05)
        if source.state != "ready":
            print(f"could not connect: {source.state}: {source.reason}", file=sys.stderr)
            return 1
        user = ScriptedUser()
        user.loop = asyncio.get_running_loop()
        CURRENT_CHANNEL.set(user)
        calls = context.get("toolCalls")
        if calls is None:
            calls = [
                {"name": e.name.split("__", 2)[-1], "arguments": None}
                for e in reg.entries()
                if e.name.startswith(source.namespace + "__")
            ]
        for call in calls:
            name = f"{source.namespace}__{call['name']}"
            tool = reg.find(name)
            arguments = call.get("arguments")
            if arguments is None:
                arguments = smallest_arguments(dict(tool.spec.input_schema)) if tool else {}
            result = await reg.call(name, arguments)
            print(name, "->", result.error or result.text[:200], file=sys.stderr)
        return 0
    finally:
        reg.close()


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[-1])))
