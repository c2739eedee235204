"""Running declared command-line and script tools: the argv template and the process.

>>> expand_argv(["--target", "{target}", "{files}", "{verbose}", "--opt", "{opt}"],
...             {"target": "web", "files": ["a", "b"], "verbose": True})
['--target', 'web', 'a', 'b', '--verbose']

Each run gets its own process group (``start_new_session``), so a timeout or a cancelled
call kills the program and everything it started, not just the first process.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["expand_argv", "run_process"]

_WHOLE = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)\}$")
_INSIDE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value)
    return str(value)


def expand_argv(template: Sequence[str], arguments: Mapping[str, Any]) -> list[str]:
    """Fill ``template`` with ``arguments``.

    - ``"{name}"`` alone: the value as one word; a list as one word per item; a boolean as
      ``--name`` (underscores become dashes) or nothing; a missing value as nothing, and an
      option word just before it (``"--target"``) is dropped with it.
    - ``"--name={name}"``: the value put inside the word; the word is dropped when missing.
    - ``"{{"`` and ``"}}"`` are literal braces.
    """
    out: list[str] = []
    for word in template:
        whole = _WHOLE.match(word)
        if whole:
            name = whole.group(1)
            value = arguments.get(name)
            if isinstance(value, bool):
                value = f"--{name.replace('_', '-')}" if value else None
            if value is None:
                if out and out[-1].startswith("-") and _pending_option(template, out):
                    out.pop()
                continue
            if isinstance(value, list):
                out.extend(_word(v) for v in value)
            else:
                out.append(_word(value))
            continue
        names = _INSIDE.findall(word.replace("{{", "").replace("}}", ""))
        if any(arguments.get(n) is None for n in names):
            continue
        filled = _INSIDE.sub(lambda m: _word(arguments[m.group(1)]), word)
        out.append(filled.replace("{{", "{").replace("}}", "}"))
    return out


def _pending_option(template: Sequence[str], out: list[str]) -> bool:
    """Whether the last word written is an option taken from the template literally (so it
    belongs to the placeholder that follows it)."""
    return out[-1] in template and not _INSIDE.search(out[-1])


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    stdin: str | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Run ``argv`` in ``cwd``; ``{"exit_code", "stdout", "stderr"}``. On timeout or
    cancellation the whole process group is killed and the error re-raised."""
    full_env = {**os.environ, **env} if env else None
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=full_env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        out, err = await asyncio.wait_for(
            proc.communicate(stdin.encode() if stdin is not None else None), timeout
        )
    except TimeoutError:
        await _kill_group(proc)
        raise TimeoutError(
            f"{argv[0]!r} did not finish in {timeout:g} s; its process group was killed. "
            "Raise `timeout` in the tool's source in nex.yaml if it needs longer."
        ) from None
    except asyncio.CancelledError:
        await _kill_group(proc)
        raise
    return {
        "exit_code": proc.returncode,
        "stdout": out.decode(errors="replace"),
        "stderr": err.decode(errors="replace"),
    }


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()
    await proc.wait()
