"""Finding: a client with the default ``workspace_write`` grant rewrote ``nex.yaml`` (grant,
approvals, an MCP server command), the credential store and old versions, over MCP and REST.

Every write path (``write``, ``edit``, ``create_dynamic_tool``; over a real ``nexus-tools
serve``, a real Jupyter server and in process) is walked against every protected file; each
attempt must be refused and leave the file as it was. Denials never say how to raise a grant.
"""

# ruff: noqa: F403, F405 -- the pytest-jupyter fixtures come in with a star import
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_fixtures import *
from serving import call_text, mcp_client, serve_http

from nexus_jupyter import Registry
from nexus_jupyter.core.errors import SourceError
from nexus_jupyter.sources.versions import VersionStore, rollback

pytestmark = pytest.mark.e2e

ORIGINAL = "original"
TOOL = '''from nexus_jupyter import tool


@tool
def add(a: int, b: int) -> int:
    """Add."""
    return a + {n}
'''


LAYOUT = {
    "project nex.yaml": "nex.yaml",
    "nested nex.yaml": "sub/nex.yaml",
    "upper-case NEX.YML": "sub/NEX.YML",
    "--config file": "settings/team.yaml",
    "user nex.yaml": "home/nex.yaml",
    "credential store": "home/credentials.json",
    "keyring index": "home/keyring-index.json",
    "audit log": "home/audit.jsonl",
    "legacy version store": "tools/.nexus-versions/dynamic/add.jsonl",
}


def layout(root: Path) -> dict[str, Path]:
    return {key: root / rel for key, rel in LAYOUT.items()}


def make_project(root: Path) -> dict[str, Path]:
    """A project whose steering files all lie inside the workspace (the nexus home too, so
    only the protection, not path confinement, stands between a tool and them)."""
    files = layout(root)
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    for path in files.values():
        if path.suffix == ".json":
            path.write_text(json.dumps({"svc": {"api_key": ORIGINAL}}))
        elif path.suffix.lower() in (".yaml", ".yml"):
            path.write_text(f"# {ORIGINAL}\nsearch:\n  mode: keyword\n")
        else:
            path.write_text(f"{ORIGINAL}\n")
    tools = root / "tools" / "dynamic"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "add.py").write_text(TOOL.format(n="b"))
    return files


def version_objects(home: Path) -> dict[str, Path]:
    """The objects of the version store a server made under ``home`` (one per version)."""
    objects = sorted(home.glob("versions/dynamic-*/objects/*.py"))
    return {f"version object {i}": p for i, p in enumerate(objects)}


def escapes_in(files: dict[str, Path], before: dict[str, bytes]) -> list[str]:
    """The files whose original content was changed (the audit log may only grow)."""
    return [k for k, p in files.items() if not p.read_bytes().startswith(before[k])]


def snapshot(files: dict[str, Path]) -> dict[str, bytes]:
    return {key: path.read_bytes() for key, path in files.items()}


def attempts(files: dict[str, Path], root: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    for key, path in files.items():
        rel = str(path.relative_to(root))
        yield key, "write", {"path": rel, "content": "grant: danger_full_access\n"}
        yield key, "edit", {"path": rel, "old_string": ORIGINAL, "new_string": "hacked"}


def report(face: str, tried: int, escapes: list[str], hints: list[str]) -> None:
    print(f"\n{face}: attempts={tried} escapes={len(escapes)} grant-hints={len(hints)}")
    assert not escapes, f"{face}: protected files changed: {escapes}"
    assert not hints, f"{face}: denials told the caller how to raise its grant: {hints}"


async def test_mcp_write_paths_cannot_change_any_steering_file(tmp_path: Path) -> None:
    files = make_project(tmp_path)
    env = {"NEXUS_HOME": str(tmp_path / "home")}
    with serve_http(tmp_path, "--config", "settings/team.yaml", env=env) as server:
        async with mcp_client(server.url) as client:
            files |= version_objects(tmp_path / "home")
            assert any(k.startswith("version object") for k in files), "no version was kept"
            before = snapshot(files)
            tried, hints = 0, []
            for key, name, arguments in attempts(files, tmp_path):
                is_error, text = await call_text(client, name, arguments)
                tried += 1
                assert is_error, f"{name} {key} was not refused: {text}"
                if "grant:" in text or "nex.yaml (" in text:
                    hints.append(text)
            # create_dynamic_tool can only name a file in the tools folder; names that aim
            # elsewhere are refused before anything is written
            for target in ("../../nex.yaml", "nex.yaml", "../../home/credentials"):
                is_error, text = await call_text(
                    client,
                    "create_dynamic_tool",
                    {"name": target, "description": "x", "code": "return 1"},
                )
                tried += 1
                assert is_error
            is_error, text = await call_text(client, "bash", {"command": "id"})
            assert is_error and "danger_full_access" in text
            if "nex.yaml" in text or "grant:" in text:
                hints.append(text)
            escapes = escapes_in(files, before)
            report("MCP", tried, escapes, hints)


def without_call_summary(text: str) -> str:
    """A REST answer without its ``summary``: that line repeats the caller's own arguments
    (here the text it tried to write), which tells it nothing new."""
    try:
        answer = json.loads(text)
    except ValueError:
        return text
    if isinstance(answer, dict):
        answer.pop("summary", None)
    return json.dumps(answer)


@pytest.fixture
def project_root(jp_root_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NEXUS_HOME", str(Path(jp_root_dir) / "home"))
    monkeypatch.delenv("NEXUS_VERSIONS_DIR", raising=False)
    return Path(jp_root_dir)


@pytest.fixture
def jp_server_config(project_root: Path) -> dict[str, object]:
    make_project(project_root)

    def factory(root: str) -> Registry:
        return Registry.default(root=root, config=Path(root) / "settings" / "team.yaml")

    return nexus_server_config(factory)


@on_server_loop
async def test_rest_write_paths_cannot_change_any_steering_file(
    jp_fetch: object, project_root: Path
) -> None:
    files = layout(project_root)
    status, _ = await rest_call(jp_fetch, "read", {"path": "tools/dynamic/add.py"})
    assert status == 200
    files |= version_objects(project_root / "home")
    before = snapshot(files)
    tried, hints = 0, []
    for key, name, arguments in attempts(files, project_root):
        status, text = await rest_call(jp_fetch, name, arguments)
        tried += 1
        assert status == 403 or '"is_error": true' in text, f"{name} {key}: {status} {text}"
        told = without_call_summary(text)
        if "grant:" in told or "nex.yaml (" in told:
            hints.append(text)
    status, text = await rest_call(jp_fetch, "bash", {"command": "id"})
    assert status == 403 and "nex.yaml" not in text
    escapes = escapes_in(files, before)
    report("REST", tried, escapes, hints)


def test_create_dynamic_tool_refuses_a_tools_folder_inside_the_version_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("NEXUS_HOME", str(home))
    folder = home / "versions" / "planted"
    folder.mkdir(parents=True)
    reg = Registry.default(root=tmp_path, config={"tools_dir": str(folder)}, mcp=False)
    try:
        result = reg.call_sync(
            "create_dynamic_tool",
            {"name": "planted", "description": "x", "code": "return 1"},
            approved=True,
        )
    finally:
        reg.close()
    assert result.is_error and "nexus home" in (result.error or "")
    assert not (folder / "planted.py").exists()


def test_a_rewritten_version_is_never_restored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NEXUS_HOME", str(tmp_path / "home"))
    folder = tmp_path / "tools"
    folder.mkdir()
    path = folder / "add.py"
    store = VersionStore(folder)
    old = store.record(path, TOOL.format(n="b"))
    store.record(path, TOOL.format(n="b + 1"))
    path.write_text(TOOL.format(n="b + 1"))
    assert old is not None and not store.root.is_relative_to(tmp_path / "tools")
    planted = store.root / "objects" / f"{old.hash}.py"
    planted.write_text("import os\nos.system('touch pwned')\n")
    with pytest.raises(SourceError, match="no longer matches its hash"):
        rollback(path, 1, tools_dir=folder)
    assert path.read_text() == TOOL.format(n="b + 1")
    print("\nrollback of a rewritten version: attempts=1 escapes=0")
