"""Path confinement of the built-in tools: generated escape attempts, 0 escapes allowed.

Escapes are detected by effect, not by error text: a read/ls/glob/grep answer holding
something only the outside has, a bash working folder outside the root, or any change
to the files outside the root after a write/edit attempt.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import Registry
from nexus_jupyter.sources.builtin import BuiltinSource

CANARY = "OUTSIDE-CANARY-7f3a"
MARKER = "outside_marker_file.txt"


@pytest.fixture
def world(tmp_path: Path) -> Iterator[dict[str, Any]]:
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / MARKER).write_text(f"{CANARY}\n")
    (outside / "dir" / "nested.txt").write_text(f"{CANARY} nested\n")
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "inside.txt").write_text("inside text\n")
    os.symlink("../outside", ws / "link_out_dir")
    os.symlink(f"../outside/{MARKER}", ws / "link_out_file")
    os.symlink(str(outside), ws / "link_abs")
    os.symlink("../..", ws / "sub" / "link_up")
    os.symlink(str(tmp_path), ws / "link_parent")
    os.symlink("../outside/new_target.txt", ws / "dangling_out")
    os.symlink("inside.txt", ws / "link_in")
    reg = Registry(search="keyword")
    reg.add_source(BuiltinSource(root=ws, registry=reg))
    yield {"reg": reg, "ws": ws, "outside": outside, "tmp": tmp_path}
    reg.close()


def _prefixes(outside: Path, tmp: Path) -> list[str]:
    fw = "\uff0e\uff0e"  # two FULLWIDTH FULL STOPs
    return [
        "..",
        "../..",
        "./..",
        "sub/../..",
        "sub/../../outside",
        "../outside",
        "../ws/../outside",
        str(outside),
        str(tmp),
        f"{tmp}/ws/../outside",
        f"//{outside}",
        "/",
        "/tmp",
        "link_out_dir",
        "link_abs",
        "sub/link_up/outside",
        "link_parent/outside",
        "link_parent",
        "./link_out_dir/.",
        "link_out_dir/dir",
        "sub/link_up",
        "dangling_out",
        "~",
        "~/..",
        f"{fw}/outside",
        "..\uff0foutside",
        "\u2025/outside",
        "\u2024\u2024/outside",
        "..\\outside",
        "%2e%2e/outside",
        "..%2foutside",
        "....//outside",
        "..\u200b/outside",
        "inside.txt\x00/../..",
        "\x00..",
        "sub/\x00",
        "..\x00",
    ]


SUFFIXES = ["", f"/{MARKER}", "/new.txt", "/dir/nested.txt"]


def _snapshot(tmp: Path, ws: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for folder, dirs, files in os.walk(tmp, followlinks=False):
        if Path(folder) == ws:
            dirs[:] = []
            continue
        for name in dirs + files:
            path = Path(folder) / name
            if path == ws:
                continue
            out[str(path)] = (
                "link" if path.is_symlink() else ("dir" if path.is_dir() else path.read_bytes())
            )
    return out


def _leaked(value: Any) -> bool:
    text = repr(value)
    return CANARY in text or MARKER in text or "nested.txt" in text


def test_path_escape_attempts_all_fail(world: dict[str, Any]) -> None:
    reg, ws, outside, tmp = world["reg"], world["ws"], world["outside"], world["tmp"]
    paths = [p + s for p, s in itertools.product(_prefixes(outside, tmp), SUFFIXES)]
    attempts = 0
    escapes: list[str] = []
    refused = 0

    def attempt(tool: str, args: dict[str, Any], leaked: Any) -> None:
        nonlocal attempts, refused
        attempts += 1
        try:
            result = reg.call_sync(tool, args)
        except Exception:  # validation errors (e.g. a NUL byte) count as refused too
            refused += 1
            return
        if result.is_error:
            refused += 1
        elif leaked(result.structured):
            escapes.append(f"{tool} {args!r} -> {result.structured!r}"[:300])

    # read-only tools first (writes could create look-alike names inside the root)
    for path in paths:
        attempt("read", {"path": path}, _leaked)
        attempt("ls", {"path": path}, _leaked)
        attempt("grep", {"pattern": "CANARY", "path": path, "output_mode": "content"}, _leaked)
    for pattern in [
        "../*",
        "../outside/*",
        "**/*",
        "*/*",
        "link_out_dir/*",
        "link_abs/**/*",
        "sub/link_up/**/*",
        f"{outside}/*",
        "/*",
        "~/*",
        "link_parent/**/*",
    ]:
        attempt("glob", {"pattern": pattern}, _leaked)
    attempt("grep", {"pattern": "CANARY", "output_mode": "content"}, _leaked)
    for cwd in _prefixes(outside, tmp)[:22]:
        attempt(
            "bash",
            {"command": "pwd", "cwd": cwd},
            lambda r: not str(r.get("stdout", "")).strip().startswith(str(ws)),
        )

    before = _snapshot(tmp, ws)
    for path in paths:
        attempt("write", {"path": path, "content": "WRITTEN"}, lambda r: False)
        attempt(
            "edit", {"path": path, "old_string": CANARY, "new_string": "EDITED"}, lambda r: False
        )
        after = _snapshot(tmp, ws)
        if after != before:
            changed = sorted(
                k for k in after.keys() | before.keys() if after.get(k) != before.get(k)
            )
            escapes.append(f"write/edit {path!r} changed {changed}")
            before = after
    print(
        f"\npath-escape attempts: {attempts}, refused or harmless: {attempts - len(escapes)}, "
        f"escapes: {len(escapes)}"
    )
    assert attempts >= 200
    assert escapes == []
    assert refused > 0


def test_symlinks_inside_the_root_still_work(world: dict[str, Any]) -> None:
    reg = world["reg"]
    assert "inside text" in reg.call_sync("read", {"path": "link_in"}).structured
    written = reg.call_sync("write", {"path": "sub/new.txt", "content": "x"})
    assert not written.is_error and (world["ws"] / "sub" / "new.txt").read_text() == "x"
    absolute = str(world["ws"] / "inside.txt")
    assert "inside text" in reg.call_sync("read", {"path": absolute}).structured


def test_refusal_message_is_clear(world: dict[str, Any]) -> None:
    result = world["reg"].call_sync("read", {"path": "../outside/x"})
    assert result.error_type == "PermissionDenied"
    assert "outside the workspace" in result.error and "'../outside/x'" in result.error
    tilde = world["reg"].call_sync("write", {"path": "~/x", "content": "y"})
    assert "'~'" in tilde.error and "not expanded" in tilde.error
