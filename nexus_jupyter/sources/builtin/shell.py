"""``bash``: run a shell command in the workspace (``danger_full_access``: it asks first).

The command runs in its own process group, so a timeout or a cancel kills the whole tree
(``sleep`` children included), not only the shell. Output beyond :data:`OUTPUT_CAP`
characters per stream is cut, with a note saying how much was dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any

from ...core.tools.decorator import tool
from ...core.tools.tool import Tool
from .paths import Workspace

__all__ = ["OUTPUT_CAP", "bash_tool"]

OUTPUT_CAP = 30_000
MAX_TIMEOUT = 600.0


class _Capped:
    """A stream's output, kept up to a few times the cap (the rest is only counted)."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.kept = 0
        self.dropped = 0

    async def drain(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while chunk := await stream.read(65536):
            room = OUTPUT_CAP * 4 - self.kept
            if room > 0:
                self.chunks.append(chunk[:room])
                self.kept += min(room, len(chunk))
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> tuple[str, bool]:
        """The output capped at :data:`OUTPUT_CAP` characters, and whether it was cut."""
        text = b"".join(self.chunks).decode("utf-8", errors="replace")
        extra = max(0, len(text) - OUTPUT_CAP) + self.dropped
        if not extra:
            return text, False
        return text[:OUTPUT_CAP] + f"\n… [{extra} more characters cut]", True


#: After a timeout kills the process group, how long to wait for the pipes to close.
_PIPE_GRACE_S = 2.0


def _kill(proc: asyncio.subprocess.Process) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def bash_tool(ws: Workspace) -> Tool:
    """The ``bash`` tool bound to workspace ``ws`` (its default working folder)."""

    @tool(
        permission="danger_full_access",
        categories=["shell"],
        capabilities=["run_command"],
        eager=True,
        summary="Running: {command}",
    )
    async def bash(command: str, timeout: float = 120.0, cwd: str = ".") -> dict[str, Any]:
        """Run a shell command (bash) in the workspace; returns exit code, stdout and stderr.

        Args:
            command: The command line, run with `bash -c`.
            timeout: Seconds before the command (and its children) is killed (max 600).
            cwd: Working folder, relative to the workspace root.
        """
        if not command.strip():
            raise ValueError("command is empty; give a shell command to run.")
        if not 0 < timeout <= MAX_TIMEOUT:
            raise ValueError(f"timeout must be between 0 and {MAX_TIMEOUT:g} s, got {timeout!r}.")
        folder = ws.resolve(cwd, what="cwd")
        if not folder.is_dir():
            raise NotADirectoryError(f"cwd {cwd!r} is not a folder of the workspace.")
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            command,
            cwd=folder,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        out_buf, err_buf = _Capped(), _Capped()
        readers = asyncio.gather(
            out_buf.drain(proc.stdout), err_buf.drain(proc.stderr), proc.wait()
        )
        timed_out = False
        try:
            # shield: on timeout the readers keep what they got and finish once killed
            await asyncio.wait_for(asyncio.shield(readers), timeout)
        except TimeoutError:
            timed_out = True
            _kill(proc)
            try:
                await asyncio.wait_for(readers, _PIPE_GRACE_S)
            except TimeoutError:
                pass  # a child outside the group (setsid, a daemon) holds the pipes: stop reading
        except asyncio.CancelledError:
            _kill(proc)
            readers.cancel()
            raise
        out, cut_out = out_buf.text()
        err, cut_err = err_buf.text()
        result: dict[str, Any] = {
            "exit_code": proc.returncode,
            "stdout": out,
            "stderr": err,
            "timed_out": timed_out,
            "truncated": cut_out or cut_err,
        }
        if timed_out:
            result["stderr"] = (err + f"\n[killed after {timeout:g} s]").lstrip("\n")
        return result

    return Tool.from_function(bash, source="builtin", source_kind="builtin")
