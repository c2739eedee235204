"""The built-in tools: behaviour and permission tiers (confinement: test_builtin_confinement)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from nexus_jupyter import Registry, RequestInfo
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.sources.builtin import BuiltinSource
from nexus_jupyter.sources.builtin.shell import OUTPUT_CAP


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("import os\n\ndef alpha():\n    return 'x'\n")
    (root / "pkg" / "b.txt").write_text("alpha beta\ngamma\nALPHA\n")
    (root / "notes.md").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    return root


@pytest.fixture
def reg(ws: Path) -> Any:
    registry = Registry(search="keyword")
    registry.add_source(BuiltinSource(root=ws, registry=registry))
    yield registry
    registry.close()


def ok(reg: Any, name: str, **args: Any) -> Any:
    result = reg.call_sync(name, args)
    assert not result.is_error, result.error
    return result.structured


def err(reg: Any, name: str, **args: Any) -> str:
    result = reg.call_sync(name, args)
    assert result.is_error, result.structured
    return str(result.error)


def test_permission_tiers(reg: Any) -> None:
    tiers = {t.name: t.spec.permission for t in reg.list(source="builtin")}
    assert {k: v for k, v in tiers.items() if k != "create_dynamic_tool"} == {
        "read": "read_only",
        "ls": "read_only",
        "glob": "read_only",
        "grep": "read_only",
        "tool_search": "read_only",
        "write": "workspace_write",
        "edit": "workspace_write",
        "bash": "danger_full_access",
        "web_fetch": "read_only",
        "web_search": "read_only",
    }
    assert all(t.spec.source_kind == "builtin" for t in reg.list(source="builtin"))


def test_read_with_offset_and_limit(reg: Any) -> None:
    text = ok(reg, "read", path="notes.md", offset=3, limit=2)
    assert text.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "6 more lines" in text
    assert "is a folder" in err(reg, "read", path="pkg")
    assert "No file 'nope.txt'" in err(reg, "read", path="nope.txt")


def test_write_creates_folders_and_replaces(reg: Any, ws: Path) -> None:
    assert (
        ok(reg, "write", path="new/deep/f.txt", content="héllo")
        == "Wrote 6 bytes to new/deep/f.txt"
    )
    ok(reg, "write", path="new/deep/f.txt", content="again")
    assert (ws / "new" / "deep" / "f.txt").read_text() == "again"


def test_edit_unique_match_replace_all_and_errors(reg: Any, ws: Path) -> None:
    ok(reg, "write", path="dup.txt", content="x = 1\nx = 1\n")
    message = err(reg, "edit", path="dup.txt", old_string="x = 1", new_string="x = 2")
    assert "occurs 2 times" in message and "replace_all" in message
    assert (
        ok(reg, "edit", path="dup.txt", old_string="x = 1", new_string="x = 2", replace_all=True)
        == "Replaced 2 occurrences in dup.txt"
    )
    assert (ws / "dup.txt").read_text() == "x = 2\nx = 2\n"
    assert "not found" in err(reg, "edit", path="dup.txt", old_string="zzz", new_string="y")
    assert "the same" in err(reg, "edit", path="dup.txt", old_string="x", new_string="x")
    assert (
        ok(reg, "edit", path="pkg/a.py", old_string="'x'", new_string="'y'")
        == "Replaced 1 occurrence in pkg/a.py"
    )


def test_ls_and_glob(reg: Any) -> None:
    assert ok(reg, "ls") == ["notes.md", "pkg/"]
    assert ok(reg, "glob", pattern="**/*.py") == ["pkg/a.py"]
    assert ok(reg, "glob", pattern="*.txt", path="pkg") == ["pkg/b.txt"]
    assert "reaches outside" in err(reg, "glob", pattern="../*")


def test_ls_glob_and_grep_skip_jupyter_checkpoints(reg: Any, ws: Path) -> None:
    saved = ws / "pkg" / ".ipynb_checkpoints"
    saved.mkdir()
    (saved / "a-checkpoint.py").write_text("def alpha(): ...\n")
    (ws / ".ipynb_checkpoints").mkdir()
    assert ok(reg, "ls") == ["notes.md", "pkg/"]
    assert ok(reg, "ls", path="pkg") == ["a.py", "b.txt"]
    assert ok(reg, "glob", pattern="**/*.py") == ["pkg/a.py"]
    assert ok(reg, "grep", pattern="alpha") == ["pkg/a.py", "pkg/b.txt"]
    # asked for by name, they are still there
    assert ok(reg, "glob", pattern="**/.ipynb_checkpoints/*.py") == [
        "pkg/.ipynb_checkpoints/a-checkpoint.py"
    ]


def test_grep_modes_context_and_filters(reg: Any) -> None:
    assert ok(reg, "grep", pattern="alpha") == ["pkg/a.py", "pkg/b.txt"]
    assert ok(reg, "grep", pattern="alpha", glob="*.txt") == ["pkg/b.txt"]
    assert ok(reg, "grep", pattern="alpha", output_mode="count", case_insensitive=True) == {
        "pkg/a.py": 1,
        "pkg/b.txt": 2,
    }
    content = ok(reg, "grep", pattern="def alpha", output_mode="content", context=1)
    assert content.splitlines() == [
        "pkg/a.py-2-",
        "pkg/a.py:3:def alpha():",
        "pkg/a.py-4-    return 'x'",
    ]
    assert "Invalid regular expression" in err(reg, "grep", pattern="(")
    assert ok(reg, "grep", pattern="line", head_limit=1) == ["notes.md"]


async def test_bash_runs_in_the_root_with_timeout_and_cap(reg: Any, ws: Path) -> None:
    out = (
        await reg.call("bash", {"command": "pwd; echo err >&2; exit 3"}, approved=True)
    ).structured
    real_root = str(ws.resolve())  # noqa: ASYNC240 - a test, nothing else runs on this loop
    assert out["stdout"].strip() == real_root and out["stderr"] == "err\n"
    assert out["exit_code"] == 3
    sub = (await reg.call("bash", {"command": "pwd", "cwd": "pkg"}, approved=True)).structured
    assert sub["stdout"].strip().endswith("/pkg")
    start = time.perf_counter()
    slow = (
        await reg.call(
            "bash", {"command": "echo started; sleep 30 & sleep 30", "timeout": 0.5}, approved=True
        )
    ).structured
    assert time.perf_counter() - start < 5
    assert (
        slow["timed_out"]
        and slow["stdout"] == "started\n"
        and "killed after 0.5 s" in slow["stderr"]
    )
    # A child in a session of its own survives the group kill and keeps the pipes open: the
    # call still returns soon after the timeout instead of waiting for that child.
    start = time.perf_counter()
    detached = (
        await reg.call(
            "bash", {"command": "setsid sleep 8 & echo hi; sleep 8", "timeout": 0.5}, approved=True
        )
    ).structured
    assert time.perf_counter() - start < 6
    assert detached["timed_out"] and detached["stdout"] == "hi\n"
    big = (
        await reg.call(
            "bash", {"command": f"head -c {OUTPUT_CAP * 2} /dev/zero | tr '\\0' a"}, approved=True
        )
    ).structured
    assert big["truncated"] and len(big["stdout"]) < OUTPUT_CAP + 100


async def test_bash_asks_and_remote_clients_are_refused(reg: Any) -> None:
    reg.policy = Policy()
    from nexus_jupyter import ApprovalRequired, PermissionDenied

    with pytest.raises(ApprovalRequired):
        await reg.call("bash", {"command": "true"})
    with pytest.raises(PermissionDenied, match="workspace_write"):
        await reg.call("bash", {"command": "true"}, request=RequestInfo(client="mcp"))
    assert (
        await reg.call("read", {"path": "notes.md"}, request=RequestInfo(client="mcp"))
    ).structured


def test_tool_search_select_and_free_text(reg: Any) -> None:
    picked = ok(reg, "tool_search", query="select:read,GREP,missing_tool")
    assert [t["name"] for t in picked["tools"]] == ["read", "grep"]
    assert picked["tools"][0]["input_schema"]["properties"]["path"]["type"] == "string"
    assert picked["not_found"] == ["missing_tool"]
    found = ok(reg, "tool_search", query="run a shell command", max_results=3)
    assert found["tools"][0]["name"] == "bash"
    assert set(found["tools"][0]) == {"name", "description", "input_schema", "score"}
    assert "\n" not in found["tools"][0]["description"]
    assert "select:" in err(reg, "tool_search", query="select:")


def test_tool_search_offers_a_caller_only_the_tools_it_may_call(reg: Any) -> None:
    reg.policy = Policy()  # MCP callers are granted workspace_write; bash needs more
    agent = RequestInfo(client="mcp")

    def search(query: str, request: RequestInfo | None = None) -> Any:
        result = reg.call_sync("tool_search", {"query": query}, request=request)
        assert not result.is_error, result.error
        return result.structured

    assert [t["name"] for t in search("run a shell command")["tools"]][:1] == ["bash"]
    assert "bash" not in [t["name"] for t in search("run a shell command", agent)["tools"]]
    picked = search("select:bash,read", agent)
    assert [t["name"] for t in picked["tools"]] == ["read"]
    assert "danger_full_access" in picked["not_allowed"]["bash"]
    assert "not_allowed" not in search("select:bash,read")


def test_tool_search_says_when_a_named_service_has_no_tool(reg: Any) -> None:
    found = ok(reg, "tool_search", query="create a card on our Trello board")
    assert found["tools"] == [] and found["not_installed"] == ["Trello"]
    assert "Trello" in found["note"]
    plain = ok(reg, "tool_search", query="read a file")
    assert plain["tools"] and "not_installed" not in plain
    nothing = ok(reg, "tool_search", query="compute the area of a circle")
    assert nothing["tools"] == [] and "not_installed" not in nothing
    assert "confidently" in nothing["note"] and "select:NAME" in nothing["note"]
    assert "searched_for" not in plain


def test_tool_search_says_how_it_read_a_misspelt_query(reg: Any) -> None:
    found = ok(reg, "tool_search", query="run a shell commnad", max_results=3)
    assert found["searched_for"] == "run a shell command"
    assert found["query"] == "run a shell commnad" and found["tools"][0]["name"] == "bash"
    misspelt = ok(reg, "tool_search", query="create a card on our Trelo board")
    assert misspelt["tools"] == [] and misspelt["not_installed"] == ["Trello"]


def test_tool_search_keeps_a_generic_fit_and_names_the_service_it_lacks(ws: Path) -> None:
    registry = Registry(search={"mode": "keyword", "services": ["Acmeboard"]})
    registry.add_source(BuiltinSource(root=ws, registry=registry))

    def add_card(column: str, title: str) -> str:
        """Add a card to a column of a board."""
        return title

    registry.add(add_card)
    try:
        found = ok(registry, "tool_search", query="add a card to a column of our Acmeboard board")
        assert [t["name"] for t in found["tools"]] == ["add_card"]
        assert found["not_installed"] == ["Acmeboard"]
        assert "fit the rest of the request" in found["note"]
    finally:
        registry.close()


def test_server_clients_cannot_write_code_into_a_watched_folder(tmp_path: Path) -> None:
    """A file in a watched tools folder is imported at once: over MCP/REST, `write` and
    `edit` there would run code with no approval, so they are refused."""
    from nexus_jupyter import Registry, RequestInfo
    from nexus_jupyter.sources.builtin import BuiltinSource

    reg = Registry(search="keyword")
    try:
        reg.add_source(BuiltinSource(root=tmp_path, registry=reg))
        (tmp_path / "tools" / "dynamic").mkdir(parents=True)
        reg.watch(tmp_path / "tools" / "dynamic")
        payload = {"path": "tools/dynamic/pwn.py", "content": "import os\n"}
        for client in ("mcp", "rest"):
            result = reg.call_sync("write", payload, request=RequestInfo(client=client))
            assert result.error_type == "PermissionDenied" and "create_dynamic_tool" in result.error
            # the folder as the caller names paths (relative to the workspace), not 'dynamic'
            assert "the watched tools folder 'tools/dynamic' would run" in result.error
        edited = reg.call_sync(
            "edit",
            {"path": "tools/dynamic/pwn.py", "old_string": "a", "new_string": "b"},
            request=RequestInfo(client="mcp"),
        )
        assert "the watched tools folder 'tools/dynamic' would run" in (edited.error or "")
        assert not (tmp_path / "tools" / "dynamic" / "pwn.py").exists()
        elsewhere = reg.call_sync(
            "write", {"path": "notes/a.txt", "content": "x"}, request=RequestInfo(client="mcp")
        )
        assert elsewhere.error is None
        local = reg.call_sync("write", payload)  # the person at the notebook may
        assert local.error is None and (tmp_path / "tools" / "dynamic" / "pwn.py").exists()
    finally:
        reg.close()
