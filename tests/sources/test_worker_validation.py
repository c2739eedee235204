"""A tool in a worker process (``isolation: process``) is refused before its call is put to
an approver when its own model refuses the arguments (a custom validator, a model's field
check, an unknown nested key), not after: the registry asks the worker for its verdict
first, and the refusal is the one the same tool gives in-process, with its fields. Real
worker processes, a real folder; the MCP face through a real ``nexus-tools serve``."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp
import pytest
from serving import serve_tool_file  # tests/ is on sys.path (rootdir conftest)

from nexus_jupyter import Registry, RequestInfo, ToolValidationError
from nexus_jupyter.core.policy.policy import Policy
from nexus_jupyter.core.tools.context import NOTEBOOK_CALLER
from nexus_jupyter.serve.mcp_bridge import FIELD_ERRORS_META_KEY

pytestmark = pytest.mark.timeout(90)

TOOL = '''from typing import Annotated

from pydantic import AfterValidator, BaseModel, field_validator

from nexus_jupyter import Tool, tool


def _email(text: str) -> str:
    if "@" not in text:
        raise ValueError("not an email address")
    return text


class Spot(BaseModel):
    x: int
    flow: float = 0.0

    @field_validator("x")
    @classmethod
    def small(cls, x: int) -> int:
        if x > 10:
            raise ValueError("x must be at most 10")
        return x


@tool(permission="danger_full_access")
def signup(email: Annotated[str, AfterValidator(_email)], spot: Spot, n: int = 1) -> str:
    """Sign someone up at a spot."""
    return f"{email} at {spot.x}"


@tool(permission="danger_full_access")
def simple(n: int, flag: bool = False) -> str:
    """Takes simple types only: its JSON Schema says every check."""
    return f"{n} {flag}"


# a tool of its own JSON Schema (as an MCP server's): a key it does not list reaches it
declared = Tool.from_schema(
    "declared",
    "Lists the keys it gets.",
    {"type": "object", "properties": {"a": {"type": "integer"}}},
    lambda arguments: sorted(arguments),
)
'''

_module = types.ModuleType("signup_tool")
sys.modules[_module.__name__] = _module  # where pydantic looks the tool's types up
exec(TOOL, _module.__dict__)  # the very code the worker process loads

NOTEBOOK = RequestInfo(caller=NOTEBOOK_CALLER)


@pytest.fixture(scope="module")
def registries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The same tools in-process and in worker processes, both asking an approver."""
    folder = tmp_path_factory.mktemp("worker_validation") / "tools"
    folder.mkdir()
    (folder / "signup.py").write_text(TOOL)
    asked: list[Any] = []

    def approver(tool: Any, arguments: Any, request: RequestInfo) -> bool:
        asked.append((tool.spec.name, arguments))
        return True

    here = Registry(search="keyword")
    here.add(_module.signup)
    here.add(_module.simple)
    here.add(_module.declared)
    isolated = Registry(search="keyword")
    isolated.watch(folder, isolation="process", versions=False).wait_ready()
    for reg in (here, isolated):
        reg.policy = Policy(grant="danger_full_access")
        reg.approver = approver
    try:
        yield {"here": here, "isolated": isolated, "asked": asked}
    finally:
        isolated.close()
        here.close()


def _refusal(reg: Registry, arguments: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(ToolValidationError) as info:
        reg.call_sync("signup", arguments, request=NOTEBOOK)
    assert info.value.tool == "signup"
    return [(e["path"], e["message"]) for e in info.value.to_dict()["errors"]]


REFUSED: list[tuple[dict[str, Any], list[tuple[str, str]]]] = [
    (  # only the model knows: the schema takes both
        {"email": "nobody", "spot": {"x": 50}},
        [
            ("$.email", "not an email address"),
            ("$.spot.x", "x must be at most 10"),
        ],
    ),
    (  # the schema's refusal and the model's, in one answer
        {"email": "nobody", "spot": {"x": 1}, "n": "many"},
        [("$.email", "not an email address"), ("$.n", "expected an integer")],
    ),
    (
        {"email": "a@b.org", "spot": {"x": 1, "flor": 2.5}},
        [("$.spot.flor", 'unexpected field (did you mean "flow"?); this object takes: x, flow')],
    ),
]


@pytest.mark.parametrize(("arguments", "said"), REFUSED)
def test_the_worker_refuses_before_the_approver_is_asked(
    registries: dict[str, Any], arguments: dict[str, Any], said: list[tuple[str, str]]
) -> None:
    asked = registries["asked"]
    asked.clear()
    for reg in (registries["here"], registries["isolated"]):
        assert _refusal(reg, arguments) == said
    assert asked == []  # nobody was asked to approve a call that cannot run


def test_a_good_call_is_asked_about_once_and_runs(registries: dict[str, Any]) -> None:
    asked = registries["asked"]
    asked.clear()
    arguments = {"email": "a@b.org", "spot": {"x": "3"}}
    for reg in (registries["here"], registries["isolated"]):
        assert reg.call_sync("signup", arguments, request=NOTEBOOK).value == "a@b.org at 3"
    # in-process the approver sees the model's values; the worker's registry, the schema's
    assert [name for name, _ in asked] == ["signup", "signup"]
    assert asked[1][1] == {"email": "a@b.org", "spot": {"x": 3}}


def test_only_a_tool_whose_schema_does_not_say_all_asks_its_worker(
    registries: dict[str, Any],
) -> None:
    """A tool of simple types is checked by its JSON Schema alone: no round trip to a
    worker before its call (the worker would give the same answer)."""
    isolated = registries["isolated"]
    assert isolated.find("signup").check_elsewhere is not None
    assert isolated.find("simple").check_elsewhere is None
    assert isolated.call_sync("simple", {"n": "2", "flag": "yes"}, request=NOTEBOOK).value == (
        "2 True"
    )


def test_the_parent_checks_a_worker_tool_s_keys_as_the_tool_does(
    registries: dict[str, Any],
) -> None:
    """The stand-in for a Python tool in a worker process reads its schema as derived from
    Python, as the tool's own model does: its check in the parent (the pipeline's first, the
    Try form's only one) refuses a nested typo in the same words as the tool in-process. A
    tool of its own JSON Schema in the same file takes a key it does not list, in both."""
    lines = []
    for reg in (registries["here"], registries["isolated"]):
        signup = reg.find("signup")
        assert signup.schema_from_python
        with pytest.raises(ToolValidationError) as info:
            signup.validate({"email": "a@b.org", "spot": {"x": 1, "flor": 2.5}})
        lines.append([e.line for e in info.value.errors])
        assert not reg.find("declared").schema_from_python
        taken = reg.call_sync("declared", {"a": 1, "b": 2}, request=NOTEBOOK)
        assert taken.value == ["a", "b"]
    assert (
        lines[0]
        == lines[1]
        == [
            '$.spot.flor: unexpected field (did you mean "flow"?); this object takes: x, flow '
            "(got 2.5)"
        ]
    )


@pytest.mark.e2e
async def test_an_agent_gets_the_field_errors_not_an_approval_question(tmp_path: Path) -> None:
    """Over MCP (``nexus-tools serve`` runs tool files in worker processes), a call that
    needs approval and that the tool's model refuses is an invalid-arguments result with
    its fields, not a request to approve it."""
    (tmp_path / "nex.yaml").write_text("grant: {mcp: danger_full_access}\n")
    with serve_tool_file(tmp_path, "signup.py", TOOL) as url:
        async with mcp.Client(url, mode="legacy") as client:
            result = await client.call_tool(
                "signup", {"email": "nobody", "spot": {"x": 1, "flor": 2}}
            )
            assert result.is_error
            text = result.content[0].text  # type: ignore[union-attr]
            assert "needs approval" not in text
            assert "- $.email: not an email address" in text
            fields = (result.meta or {})[FIELD_ERRORS_META_KEY]
            assert [f["path"] for f in fields] == ["$.email", "$.spot.flor"]
            # a boolean for a number is refused with the worker's own refusals, in one answer
            mixed = await client.call_tool(
                "signup", {"email": "nobody", "spot": {"x": 1}, "n": True}
            )
            fields = (mixed.meta or {})[FIELD_ERRORS_META_KEY]
            assert sorted(f["path"] for f in fields) == ["$.email", "$.n"]
            good = await client.call_tool("signup", {"email": "a@b.org", "spot": {"x": 1}})
            assert good.is_error and "needs approval" in good.content[0].text  # type: ignore[union-attr]
