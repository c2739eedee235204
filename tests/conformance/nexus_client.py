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
from typing import Any

from nexus_jupyter import Registry
from nexus_jupyter.core.tools.channel import CURRENT_CHANNEL, Elicitation, Sampled
from nexus_jupyter.sources.mcp import McpSource

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


async def main(url: str) -> int:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    reg = Registry(search="keyword")
    source = McpSource("peer", url=url, timeout=20)
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
