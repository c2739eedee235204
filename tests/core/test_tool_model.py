"""The tool model: decorator metadata, specs, versions, docstrings, results."""

from __future__ import annotations

from typing import Any

import pytest

from nexus_jupyter import Tool, ToolDefinitionError, ToolSpec, tool
from nexus_jupyter.core.tools.decorator import get_tool_meta
from nexus_jupyter.core.tools.docstrings import parse_docstring
from nexus_jupyter.core.tools.result import ToolResult


def test_bare_and_called_decorator_attach_frozen_meta() -> None:
    @tool
    def a(x: int) -> int:
        return x

    @tool(name="b_tool", capabilities=["cap"], requires_credentials="svc")
    def b(x: int) -> int:
        return x

    meta_a, meta_b = get_tool_meta(a), get_tool_meta(b)
    assert meta_a is not None and meta_a.name is None
    assert meta_b is not None and (
        meta_b.name,
        meta_b.capabilities,
        meta_b.requires_credentials,
    ) == ("b_tool", ("cap",), ("svc",))
    with pytest.raises(AttributeError):
        meta_b.name = "x"  # type: ignore[misc]
    assert get_tool_meta(lambda: 1) is None


def test_version_changes_with_code_and_description() -> None:
    def one(x: int) -> int:
        """Doc."""
        return x

    def one_b(x: int) -> int:
        """Doc."""
        return x + 1

    v1 = Tool.from_function(one, name="one").spec.version
    v2 = Tool.from_function(one_b, name="one").spec.version
    v3 = Tool.from_function(one, name="one", description="Other.").spec.version
    assert len({v1, v2, v3}) == 3
    assert Tool.from_function(one, name="one").spec.version == v1


def test_definition_hash_ignores_code_but_not_schema() -> None:
    def f(x: int) -> int:
        return x

    def g(x: int) -> int:
        return x * 2

    def h(x: str) -> int:
        return 1

    spec_f = Tool.from_function(f, name="t").spec
    assert spec_f.definition_hash == Tool.from_function(g, name="t").spec.definition_hash
    assert spec_f.definition_hash != Tool.from_function(h, name="t").spec.definition_hash


def test_spec_rejects_bad_input_clearly() -> None:
    with pytest.raises(ToolDefinitionError, match="Invalid tool name 'bad name'"):
        ToolSpec(name="bad name")
    with pytest.raises(ToolDefinitionError, match='"type": "object"'):
        ToolSpec(name="x", input_schema={"type": "string"})
    with pytest.raises(ToolDefinitionError, match="Unknown permission"):
        ToolSpec(name="x", permission="root")  # type: ignore[arg-type]


def test_lambda_needs_a_name() -> None:
    with pytest.raises(ToolDefinitionError, match="name"):
        Tool.from_function(lambda x: x)


def test_tool_object_still_calls_function_directly() -> None:
    def double(x: int) -> int:
        return 2 * x

    assert Tool.from_function(double)(4) == 8


def test_docstring_plain_and_multi_paragraph() -> None:
    parsed = parse_docstring("First line\ncontinues here.\n\nSecond paragraph.")
    # the whole prose, as written: a model reads every paragraph of it
    assert parsed.description == "First line\ncontinues here.\n\nSecond paragraph."
    assert parsed.params == {}


def test_docstring_google_with_types_and_kwargs() -> None:
    parsed = parse_docstring(
        """Do it.

        Args:
            path (str): Where.
            *items: Ignored star.
            **options: Extra.

        Raises:
            ValueError: never.
        """
    )
    assert parsed.params == {"path": "Where.", "items": "Ignored star.", "options": "Extra."}


def test_docstring_numpy_multiple_names() -> None:
    parsed = parse_docstring(
        """Sum.

        Parameters
        ----------
        x, y : int
            Operands.

        Returns
        -------
        int
            The sum.
        """
    )
    assert parsed.params == {"x": "Operands.", "y": "Operands."}
    assert parsed.returns == "The sum."


def test_result_repr_and_dict() -> None:
    ok = ToolResult("t", {"a": 1}, duration=0.0012)
    assert ok.to_dict()["structured"] == {"a": 1} and not ok.is_error
    assert "1.2 ms" in repr(ok)
    bad = ToolResult.failure("t", "boom", "ValueError")
    assert bad.to_dict()["is_error"] and bad.content == [{"type": "text", "text": "boom"}]


def test_result_from_parts_keeps_blocks() -> None:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    result = ToolResult.from_parts("t", content=blocks)
    assert result.value == "a\nb" and result.content == blocks
