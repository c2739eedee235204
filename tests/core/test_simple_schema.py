"""The directly written schema of simple signatures equals what pydantic derives."""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal, Optional

from hypothesis import given, settings
from hypothesis import strategies as st

from nexus_jupyter.core.tools.schema import derive_function_schema
from nexus_jupyter.core.tools.schema_refs import inline_refs, strip_generated_titles

SCALARS = [str, int, float, bool]


def annotations() -> st.SearchStrategy[Any]:
    base = st.sampled_from([*SCALARS, list, dict])
    literals = st.one_of(
        st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3, unique=True),
        st.lists(st.integers(-3, 3), min_size=1, max_size=3, unique=True),
    ).map(lambda values: Literal[tuple(values)])

    def extend(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(
            inner.map(lambda t: list[t]),
            inner.map(lambda t: dict[str, t]),
            inner.map(lambda t: Optional[t]),  # noqa: UP045 - both spellings must work
            inner.map(lambda t: t | None),
            st.tuples(inner, inner).map(lambda pair: pair[0] | pair[1]),
        )

    return st.recursive(st.one_of(base, literals), extend, max_leaves=4)


DEFAULTS = st.one_of(
    st.none(), st.integers(-5, 5), st.text(max_size=4), st.booleans(), st.just([]), st.just({})
)


@st.composite
def signatures(draw: st.DrawFn) -> inspect.Signature:
    count = draw(st.integers(0, 4))
    params, seen_default = [], False
    for i in range(count):
        annotation = draw(annotations())
        has_default = seen_default or draw(st.booleans())
        default = draw(DEFAULTS) if has_default else inspect.Parameter.empty
        seen_default = seen_default or has_default
        params.append(
            inspect.Parameter(
                f"p{i}",
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                annotation=annotation,
                default=default,
            )
        )
    return inspect.Signature(params)


def _function(sig: inspect.Signature, doc: str) -> Any:
    def tool_fn(*args: Any, **kwargs: Any) -> None:
        return None

    tool_fn.__signature__ = sig  # type: ignore[attr-defined]
    tool_fn.__annotations__ = {p.name: p.annotation for p in sig.parameters.values()}
    tool_fn.__doc__ = doc
    return tool_fn


@settings(max_examples=300, deadline=None)
@given(signatures(), st.booleans())
def test_simple_signatures_get_the_schema_pydantic_derives(
    sig: inspect.Signature, documented: bool
) -> None:
    doc = "A tool.\n\nArgs:\n" + "".join(f"    {n}: about {n}.\n" for n in sig.parameters)
    described = derive_function_schema(_function(sig, doc if documented else "A tool."))
    raw = described.model.model_json_schema(by_alias=True)
    from_pydantic = strip_generated_titles(inline_refs(raw), top_level=True)
    from_pydantic.setdefault("properties", {})
    assert described.input_schema == from_pydantic


def test_a_simple_signature_builds_its_validator_only_when_called() -> None:
    def add(a: int, b: int = 2) -> int:
        """Add."""
        return a + b

    described = derive_function_schema(add)
    assert described._model is None  # described without pydantic
    assert described.validate("add", {"a": "3"}) == {"a": 3, "b": 2}
    assert described._model is not None


def test_annotation_strings_follow_a_redefined_type() -> None:
    """Evaluated annotation texts are reused only while their names mean the same objects
    (a notebook that redefines a model in a later cell gets the new one)."""
    namespace: dict[str, Any] = {}
    first = "from __future__ import annotations\nfrom typing import TypedDict\n"
    code = (
        "class Point(TypedDict):\n    {field}: int\n\n"
        "def where(p: Point) -> int:\n    '''Where.'''\n    return 0\n"
    )
    exec(first + code.format(field="x"), namespace)
    assert set(
        derive_function_schema(namespace["where"]).input_schema["properties"]["p"]["properties"]
    ) == {"x"}
    exec(first + code.format(field="y"), namespace)
    assert set(
        derive_function_schema(namespace["where"]).input_schema["properties"]["p"]["properties"]
    ) == {"y"}


def test_annotated_with_unhashable_metadata_is_described_by_pydantic() -> None:
    def wait(seconds: Annotated[int, {"unit": "s"}], every: list[Annotated[int, {"u": 1}]]) -> str:
        """Wait."""
        return ""

    schema = derive_function_schema(wait).input_schema
    assert schema["properties"]["seconds"] == {"type": "integer"}
    assert schema["properties"]["every"] == {"items": {"type": "integer"}, "type": "array"}


def test_annotation_texts_with_attribute_access_follow_a_reloaded_module() -> None:
    import types

    models = types.ModuleType("models")
    namespace: dict[str, Any] = {"models": models}
    code = 'from __future__ import annotations\ndef keep(item: models.Item) -> None:\n    """Keep."""\n'
    define = "from typing import TypedDict\nclass Item(TypedDict):\n    {field}: int\n"

    def fields() -> set[str]:
        exec(code, namespace)
        schema = derive_function_schema(namespace["keep"]).input_schema
        return set(schema["properties"]["item"]["properties"])

    exec(define.format(field="a"), models.__dict__)
    assert fields() == {"a"}
    exec(define.format(field="b"), models.__dict__)  # same module object, same text, new Item
    assert fields() == {"b"}
