"""``nexus-tools publish FILE``: put a tool file into a cluster's Redis, so every replica
of ``nexus-tools serve --cluster`` loads it (within a few hundred milliseconds).

    nexus-tools publish tools/dynamic/add.py --cluster redis://127.0.0.1:6379/0
    nexus-tools publish add.py                      # the cluster of nex.yaml's `cluster:`
    nexus-tools publish --history add.py            # the versions the cluster holds

The file is loaded here first (in a fresh module, with the same checks as the tools
folder); a file that does not load, or defines no tool, is refused and nothing is stored.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as _dt
import json
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..core.errors import SourceError
from .main import UsageProblem

__all__ = ["add_parser", "run"]


def add_parser(sub: Any, parents: Sequence[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "publish", help="publish a tool file to a cluster (serve --cluster)", parents=list(parents)
    )
    p.add_argument("file", help="a tool file (*.py with @tool functions)")
    p.add_argument("--cluster", default=None, help="redis://HOST:PORT/N (default: nex.yaml)")
    p.add_argument(
        "--history", action="store_true", help="show the file's published versions instead"
    )


def run(args: argparse.Namespace) -> int:
    from ..app import resolve_settings
    from ..cluster.store import ClusterAddress

    root = Path(args.root).resolve()
    url = args.cluster or resolve_settings(root, args.config).cluster
    if not url:
        raise UsageProblem(
            "No cluster to publish to: pass --cluster redis://HOST:PORT/N or set "
            "`cluster:` in nex.yaml."
        )
    address = ClusterAddress.parse(url)
    path = Path(args.file)
    if args.history:
        return asyncio.run(_show_history(address, path.name, args.json))
    text = _checked_text(path)
    revision, new = asyncio.run(_publish(address, path.name, text))
    if args.json:
        print(json.dumps({"file": path.name, "revision": revision, "new": new}))
    elif new:
        print(f"published {path.name} as revision {revision} to {address.shown()}")
    else:
        print(f"{path.name} is already the current version (revision {revision}); nothing to do")
    return 0


def _checked_text(path: Path) -> str:
    from ..sources.directory import LOAD_TIMEOUT_S
    from ..sources.loader import load_tool_text

    if not path.exists():
        raise UsageProblem(f"No file {str(path)!r}; give the path of a tool file (*.py).")
    if path.suffix != ".py" or not path.is_file():
        raise UsageProblem(f"{str(path)!r} is not a tool file; give the path of a *.py file.")
    text = path.read_text(encoding="utf-8")
    loaded = load_tool_text(text, path.resolve(), timeout=LOAD_TIMEOUT_S)
    if not loaded.ok:
        raise SourceError(
            f"{path.name} does not load: {loaded.error} (line {loaded.line}); nothing was "
            "published. Fix the file and publish again."
        )
    if not loaded.names:
        raise SourceError(f"{path.name} defines no @tool function; nothing was published.")
    return text


async def _publish(address: Any, file: str, text: str) -> tuple[int, bool]:
    from redis.exceptions import RedisError

    from ..cluster.store import ClusterStore
    from ..sources.loader import content_hash

    store = ClusterStore(address)
    try:
        origin = f"publish@{socket.gethostname()}"
        return await store.publish_file(file, content_hash(text), text, origin)
    except (RedisError, OSError) as exc:
        raise SourceError(_unreachable(address, exc)) from None
    finally:
        await store.close()


async def _show_history(address: Any, file: str, as_json: bool) -> int:
    from redis.exceptions import RedisError

    from ..cluster.store import ClusterStore

    store = ClusterStore(address)
    try:
        versions = await store.history(file)
    except (RedisError, OSError) as exc:
        raise SourceError(_unreachable(address, exc)) from None
    finally:
        await store.close()
    if as_json:
        print(json.dumps([v.summary() for v in versions]))
        return 0
    if not versions:
        print(f"{file} has no published versions in {address.shown()}")
    for v in versions:
        when = _dt.datetime.fromtimestamp(v.at, _dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        print(f"r{v.revision}  {when}  {v.sha[:12]}  by {v.origin}")
    return 0


def _unreachable(address: Any, exc: Exception) -> str:
    return (
        f"Cannot reach the cluster's Redis at {address.shown()} ({exc}); check that "
        "redis-server runs there and the address in --cluster / nex.yaml `cluster:`."
    )
