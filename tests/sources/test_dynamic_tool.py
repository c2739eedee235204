"""create_dynamic_tool: an agent writes a tool file; it is validated, written and live at once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from nexus_jupyter import Registry, ToolResult
from nexus_jupyter.sources.builtin.dynamic import create_dynamic_tool_tool, schema_to_signature
from nexus_jupyter.sources.tool_files import stamp_state


@pytest.fixture
def reg(tmp_path: Path) -> Iterator[Registry]:
    registry = Registry(search="keyword")
    registry.add(create_dynamic_tool_tool(tmp_path, registry))
    yield registry
    registry.close()


def create(reg: Registry, **arguments: object) -> ToolResult:
    result = reg.call_sync("create_dynamic_tool", arguments)
    return result


def test_the_builtin_is_a_workspace_write_tool(tmp_path: Path) -> None:
    made = create_dynamic_tool_tool(tmp_path, None)
    assert made.name == "create_dynamic_tool" and made.spec.permission == "danger_full_access"
    assert {"name", "description", "code"} <= set(made.spec.required)


def test_body_with_a_signature_string_is_live_at_once(reg: Registry, tmp_path: Path) -> None:
    result = create(
        reg,
        name="scale-it",
        description="Multiply a by b.",
        parameters="a: int, b: int = 2",
        code="return a * b",
    )
    assert not result.is_error, result.error
    path = tmp_path / "tools" / "dynamic" / "scale-it.py"
    assert result.structured["path"] == str(path.resolve()) and result.structured["status"] == "ok"
    assert stamp_state(path.read_text()) == "ours"
    tool = reg.get("scale-it")
    assert tool.spec.source_kind == "directory" and tool.spec.description == "Multiply a by b."
    assert reg.call_sync("scale-it", {"a": 4}).structured == 8


def test_json_schema_parameters_become_the_tool_schema(reg: Registry) -> None:
    schema = {
        "type": "object",
        "required": ["city"],
        "properties": {
            "city": {"type": "string", "description": "City name."},
            "units": {"type": "string", "enum": ["c", "f"], "default": "c"},
            "days": {"type": "integer"},
        },
    }
    result = create(
        reg,
        name="forecast",
        description="A fake forecast.",
        parameters=schema,
        code="return f'{city}:{units}:{days}'",
        permission="read_only",
    )
    assert not result.is_error, result.error
    spec = reg.get("forecast").spec
    assert spec.required == ("city",)
    assert spec.input_schema["properties"]["units"]["enum"] == ["c", "f"]
    assert spec.input_schema["properties"]["city"]["description"] == "City name."
    assert reg.call_sync("forecast", {"city": "Oslo"}).structured == "Oslo:c:None"


def test_full_source_and_async_bodies(reg: Registry) -> None:
    full = "import math\n\ndef hyp(a: float, b: float) -> float:\n    return math.hypot(a, b)\n"
    assert not create(reg, name="hyp", description="Hypotenuse.", code=full).is_error
    assert reg.call_sync("hyp", {"a": 3, "b": 4}).structured == 5.0
    body = "import asyncio\nawait asyncio.sleep(0)\nreturn text[::-1]"
    assert not create(
        reg, name="rev", description="Reverse.", parameters="text: str", code=body
    ).is_error
    assert reg.get("rev").is_async and reg.call_sync("rev", {"text": "abc"}).structured == "cba"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"name": "../evil", "code": "return 1"}, "Invalid tool file name '../evil'"),
        ({"name": "x" * 65, "code": "return 1"}, "at most 64 characters"),
        ({"name": "oops", "code": "return (1 +"}, "syntax error on line 1"),
        (
            {"name": "boom", "code": "import not_a_module_xyz\n\ndef boom() -> int:\n    return 1"},
            "does not load: ModuleNotFoundError",
        ),
        ({"name": "sig", "parameters": "a: int,, b", "code": "return a"}, "not a Python signature"),
    ],
)
def test_bad_requests_write_nothing(
    reg: Registry, tmp_path: Path, arguments: dict, message: str
) -> None:
    result = create(reg, description="d", **arguments)
    assert result.is_error and message in (result.error or "")
    folder = tmp_path / "tools" / "dynamic"
    assert not folder.exists() or not list(folder.glob("*.py"))
    assert not (tmp_path / "tools" / "evil.py").exists()


def test_existing_files_are_protected(reg: Registry, tmp_path: Path) -> None:
    assert not create(reg, name="one", description="d", code="return 1").is_error
    again = create(reg, name="one", description="d", code="return 2")
    assert again.is_error and "overwrite=true" in (again.error or "")
    assert not create(reg, name="one", description="d", code="return 2", overwrite=True).is_error
    assert reg.call_sync("one", {}).structured == 2
    mine = tmp_path / "tools" / "dynamic" / "mine.py"
    mine.write_text("# written by a person\n")
    refused = create(reg, name="mine", description="d", code="return 3", overwrite=True)
    assert refused.is_error and "not written by export" in (refused.error or "")
    assert mine.read_text() == "# written by a person\n"


def test_schema_to_signature_orders_required_first() -> None:
    signature, docs = schema_to_signature(
        {
            "type": "object",
            "properties": {
                "opt": {"type": ["string", "null"]},
                "req": {"type": "array", "items": {"type": "number"}, "description": "Values."},
            },
            "required": ["req"],
        }
    )
    assert signature == "req: list[float], opt: str | None = None"
    assert docs == {"req": "Values."}
    with pytest.raises(ValueError, match="not a Python identifier"):
        schema_to_signature({"type": "object", "properties": {"bad-name": {}}})


def test_builtin_names_are_reserved(tmp_path: Path) -> None:
    registry = Registry.default(
        root=tmp_path, config={"audit": False}, watch=False, mcp=False, search="keyword"
    )
    try:
        for name in ("read", "bash", "web_fetch", "tool_search"):
            refused = registry.call_sync(
                "create_dynamic_tool",
                {"name": name, "description": "Mine.", "code": "return 1"},
                approved=True,
            )
            assert refused.error_type == "ExportError", refused.error
            assert "built-in tool and is reserved" in (refused.error or "")
        assert not (tmp_path / "tools" / "dynamic" / "read.py").exists()
        assert registry.get("read").spec.source_kind == "builtin"
    finally:
        registry.close()


def test_allow_overrides_lets_a_reserved_name_through(tmp_path: Path) -> None:
    registry = Registry.default(
        root=tmp_path,
        config={"audit": False, "allow_overrides": ["ls"]},
        watch=False,
        mcp=False,
        search="keyword",
    )
    try:
        made = registry.call_sync(
            "create_dynamic_tool",
            {"name": "ls", "description": "Mine.", "code": "return 1"},
            approved=True,
        )
        assert made.ok, made.error
    finally:
        registry.close()


def test_a_name_of_another_source_is_refused(reg: Registry) -> None:
    from nexus_jupyter import tool

    @tool
    def weather(city: str) -> str:
        """A notebook tool."""
        return city

    reg.add(weather)
    refused = create(reg, name="weather", description="Shadow it.", code="return 1")
    assert refused.error_type == "ExportError" and "already comes from" in (refused.error or "")


def test_agent_files_follow_the_naming_convention_and_record_who(
    reg: Registry, tmp_path: Path
) -> None:
    made = create(
        reg,
        name="calc",
        description="Calculate.",
        parameters="a: int, operation: str, b: int",
        code="return a + b if operation == 'add' else a * b",
        agent_id="planner-7",
        human_readable_format="Calculating: {a} {operation} {b}",
    )
    assert made.ok, made.error
    path = tmp_path / "tools" / "dynamic" / "agent_planner-7_calc.py"
    text = path.read_text()
    assert "for agent 'planner-7' (principal 'local')" in text
    assert made.structured["path"] == str(path.resolve())
    called = reg.call_sync("calc", {"a": 2, "operation": "add", "b": 3})
    assert called.value == 5 and called.summary == "Calculating: 2 add 3"
    again = create(reg, name="calc", description="x", code="return 1", agent_id="planner-7")
    assert again.is_error and "already exists" in (again.error or "")
    bad = create(reg, name="calc2", description="x", code="return 1", agent_id="../up")
    assert bad.error_type == "ExportError" and "Invalid agent_id" in (bad.error or "")
