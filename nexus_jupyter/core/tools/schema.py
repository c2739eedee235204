"""Turn a Python signature into a JSON Schema and a validator: one module, one model.

:func:`derive_function_schema` reads type hints, defaults and the docstring and builds a
pydantic model of the arguments. The same model produces the ``input_schema`` and validates
every call, so the schema an agent sees and the checks a call goes through cannot drift.

Supported parameter types: everything pydantic understands (scalars, ``Optional``/``X | None``,
``Literal``, ``Enum``, ``list``/``dict``/``tuple``/``set``, ``Annotated[..., Field(...)]``,
pydantic models, dataclasses, TypedDict, ...). ``$ref``s are inlined so that MCP clients that
do not follow references still work; only recursive types keep a ``$defs`` block.

Refused, with a one-line reason naming the function and parameter: ``*args``, ``**kwargs``,
unannotated parameters, and types that have no JSON Schema.
"""

from __future__ import annotations

import copy
import inspect
import json
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError

from ..errors import FieldError, ToolDefinitionError, ToolValidationError
from .annotations import compat_annotation, is_context, resolve_hints
from .content import is_content_annotation
from .docstrings import parse_docstring
from .field_messages import from_pydantic, ordered
from .schema_refs import inline_refs, strip_generated_titles
from .simple_schema import simple_input_schema
from .strict_types import argument_checker
from .unknown_keys import unknown_keys_check

__all__ = ["FunctionSchema", "derive_function_schema", "pydantic_errors_to_fields"]

_RESERVED = set(dir(BaseModel))
_UNSET: Any = object()
# ``allow_inf_nan=False``: JSON has no NaN nor infinity, and a tool checked by its JSON Schema
# refuses "nan" and "inf" (NaN would pass every bound): a Python tool refuses them alike.
_MODEL_CONFIG = ConfigDict(extra="forbid", arbitrary_types_allowed=False, allow_inf_nan=False)


class FunctionSchema:
    """What :func:`derive_function_schema` learned about a function.

    ``model`` is the pydantic model that validates calls. For signatures of simple types the
    schema is written directly (:mod:`.simple_schema`) and the model is built on first use, so
    describing a tool costs microseconds and only called tools pay for a validator.
    """

    __slots__ = (
        "_fields",
        "_model",
        "_type_check",
        "_unknown_keys",
        "_validate_python",
        "context_param",
        "description",
        "input_schema",
        "json_fields",
        "name",
        "output_schema",
        "param_names",
        "positional_only",
        "renames",
        "says_all",
    )

    def __init__(
        self,
        *,
        name: str,
        description: str,
        input_schema: dict[str, Any],
        output_schema: dict[str, Any] | None,
        model: type[BaseModel] | None,
        fields: dict[str, _Param],
        context_param: str | None,
        positional_only: tuple[str, ...],
        json_fields: frozenset[str],
        renames: tuple[tuple[str, str], ...],
        param_names: tuple[str, ...],
        says_all: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema
        self.output_schema = output_schema
        self._model = model
        self._type_check: Callable[[Mapping[str, Any]], list[FieldError]] | None = None
        self._unknown_keys: Any = _UNSET  # see unknown_keys_check, made on first use
        self._validate_python: Callable[[Any], BaseModel] | None = None
        self._fields = fields
        self.context_param = context_param
        self.positional_only = positional_only
        self.json_fields = json_fields
        self.renames = renames  # (model field, parameter) where they differ
        self.param_names = param_names
        #: The schema was written from simple types (:mod:`.simple_schema`): it says every
        #: check the model makes, so a JSON Schema validator gives the same verdict.
        self.says_all = says_all

    @property
    def model(self) -> type[BaseModel]:
        """The arguments model (built on first use for simple signatures)."""
        model = self._model
        if model is None:
            model = self._model = _create_model(self.name, self._fields)
        return model

    @property
    def type_check(self) -> Callable[[Mapping[str, Any]], list[FieldError]]:
        """The boolean-versus-number check of the arguments (built on first use)."""
        check = self._type_check
        if check is None:
            check = self._type_check = argument_checker(self.input_schema)
        return check

    def validate(self, tool_name: str, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check ``arguments`` and return the keyword arguments for the function.

        JSON strings sent for list/object parameters are parsed first (LLM clients do that).
        Numbers and booleans sent as strings are fine (``"2"``, ``"true"``: as pydantic's lax
        mode reads them), but a boolean is not a number nor a number a boolean
        (:mod:`.strict_types`), whichever face the call comes from; a key that a nested
        object's schema does not take is refused, not dropped (:mod:`.unknown_keys`).
        Raises :class:`ToolValidationError` with one :class:`FieldError` per bad field.
        """
        if arguments.__class__ is not dict:  # the common case skips the Mapping check
            if arguments is None:
                arguments = {}
            elif not isinstance(arguments, Mapping):
                raise ToolValidationError(
                    tool_name, [FieldError((), "arguments must be a JSON object", arguments)]
                )
        data = dict(arguments) if self.json_fields else arguments
        for key in self.json_fields:
            value = data.get(key)
            if isinstance(value, str) and value[:1] in ("[", "{"):
                try:
                    data[key] = json.loads(value)  # type: ignore[index]
                except ValueError:
                    pass  # leave it: the validator reports the field with the original value
        # pydantic's lax mode would take true for 1: every face refuses that, as MCP does
        check = self._type_check or self.type_check
        wrong = check(data)
        unknown = self._unknown_keys
        if unknown is not None:
            if unknown is _UNSET:
                unknown = self._unknown_keys = unknown_keys_check(self.input_schema)
            if unknown is not None:
                wrong = wrong + unknown(data)
        if wrong:
            raise ToolValidationError(tool_name, self._all_errors(wrong, data))
        validate = self._validate_python
        if validate is None:
            validate = self._validate_python = self.model.__pydantic_validator__.validate_python
        try:
            validated = validate(data)
        except ValidationError as exc:
            validated = self._without_nulls(tool_name, data, exc)
        values: dict[str, Any] = validated.__dict__
        if not self.renames:
            return dict(values)
        out = dict(values)
        for field_name, param in self.renames:
            out[param] = out.pop(field_name)
        return out

    def _without_nulls(
        self, tool_name: str, data: Mapping[str, Any], exc: ValidationError
    ) -> BaseModel:
        """The arguments validated again without the nulls sent for optional arguments that
        do not take None (agents send null for arguments they leave out: "not given", so the
        default applies); raises when that is not what was wrong."""
        unset = self._refused_nulls(data, exc)
        if unset:
            data = {key: value for key, value in data.items() if key not in unset}
            try:
                return self.model.__pydantic_validator__.validate_python(data)
            except ValidationError as again:
                exc = again
        fields = pydantic_errors_to_fields(exc, self.param_names, self.input_schema)
        raise ToolValidationError(tool_name, fields) from None

    def _all_errors(self, wrong: list[FieldError], data: Mapping[str, Any]) -> list[FieldError]:
        """The boolean-versus-number refusals (and unknown keys of nested objects) and
        pydantic's about the other places: a JSON Schema validator finds them all at once,
        so the answer is the same on every face."""
        try:
            self.model.__pydantic_validator__.validate_python(data)
        except ValidationError as exc:
            try:
                self._without_nulls("", data, exc)
            except ToolValidationError as refused:
                seen = {e.loc for e in wrong}
                others = [e for e in refused.errors if e.loc not in seen]
                return ordered([*wrong, *others], self.input_schema)
        return wrong

    def _refused_nulls(self, data: Mapping[str, Any], exc: ValidationError) -> set[str]:
        """Arguments given as ``None`` that an error is about and that have a default."""
        optional = {
            field.alias or name
            for name, field in self.model.model_fields.items()
            if not field.is_required()
        }
        return {
            loc[0]
            for err in exc.errors(include_url=False)
            if (loc := err["loc"])
            and isinstance(loc[0], str)
            and loc[0] in optional
            and data.get(loc[0], ...) is None
        }


def pydantic_errors_to_fields(
    exc: ValidationError, accepted: tuple[str, ...] = (), schema: Mapping[str, Any] | None = None
) -> list[FieldError]:
    """One :class:`FieldError` per place pydantic refused, worded by :mod:`.field_messages`
    as the JSON Schema validator words the same refusal (``schema``: the tool's input schema)."""
    return from_pydantic(exc.errors(include_url=False), schema or {}, accepted)


def derive_function_schema(
    fn: Callable[..., Any], *, name: str | None = None, description: str | None = None
) -> FunctionSchema:
    """Describe ``fn`` as a tool. Raises :class:`ToolDefinitionError` when it cannot be one."""
    fname = name or getattr(fn, "__name__", None) or type(fn).__name__
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"Tool {fname!r}: cannot read its signature ({exc}).") from None
    hints = resolve_hints(fn, fname)
    doc = parse_docstring(inspect.getdoc(fn))

    fields: dict[str, _Param] = {}
    renames: list[tuple[str, str]] = []
    positional_only: list[str] = []
    param_names: list[str] = []
    context_param: str | None = None
    for index, param in enumerate(sig.parameters.values()):
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f"Tool {fname!r}: parameter *{param.name} is not supported; tools take named "
                "arguments only, so list each argument explicitly."
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            raise ToolDefinitionError(
                f"Tool {fname!r}: parameter **{param.name} is not supported; tools need a fixed "
                "set of named arguments to describe in their schema."
            )
        annotation = hints.get(param.name, param.annotation)
        if annotation is inspect.Parameter.empty:
            raise ToolDefinitionError(
                f"Tool {fname!r}: parameter {param.name!r} has no type annotation; annotate it "
                f"(e.g. `{param.name}: str`) so its schema can be derived."
            )
        if is_context(annotation):
            context_param = param.name
            continue
        annotation = compat_annotation(annotation)
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(param.name)
        param_names.append(param.name)
        field_name = param.name
        if param.name in _RESERVED or param.name.startswith(("_", "model_")):
            field_name = f"p{index}_{param.name.lstrip('_')}"
            renames.append((field_name, param.name))
        default = ... if param.default is inspect.Parameter.empty else param.default
        alias = param.name if field_name != param.name else None
        fields[field_name] = _Param(annotation, doc.params.get(param.name), default, alias)

    simple = None if renames else simple_input_schema(fields)
    model: type[BaseModel] | None = None
    if simple is not None:
        input_schema = simple
    else:
        try:
            model = _create_model(fname, fields)
            raw = model.model_json_schema(by_alias=True)
        except (PydanticSchemaGenerationError, PydanticUserError, TypeError, ValueError) as exc:
            culprit = _find_bad_param(fields, fname)
            raise ToolDefinitionError(
                f"Tool {fname!r}: {culprit or 'its parameters'} cannot be described as JSON "
                f"Schema ({type(exc).__name__}). Use JSON-friendly types (str, int, list, dict, "
                "pydantic models, dataclasses, TypedDict)."
            ) from None
        input_schema = strip_generated_titles(inline_refs(raw), top_level=True)
        input_schema.setdefault("properties", {})
    json_fields = frozenset(
        _alias(field_name, renames)
        for field_name in fields
        if _accepts_json_container(input_schema["properties"].get(_alias(field_name, renames), {}))
    )
    return FunctionSchema(
        name=fname,
        description=description if description is not None else doc.description,
        input_schema=input_schema,
        output_schema=_output_schema(hints.get("return", sig.return_annotation)),
        model=model,
        fields=fields,
        context_param=context_param,
        positional_only=tuple(positional_only),
        json_fields=json_fields,
        renames=tuple(renames),
        param_names=tuple(param_names),
        says_all=simple is not None,
    )


class _Param(typing.NamedTuple):
    """One parameter as the model will see it (the model itself may be built later)."""

    annotation: Any
    help: str | None
    default: Any  # ``...`` when required
    alias: str | None  # the parameter's name when the model field had to be renamed

    def model_field(self) -> tuple[Any, Any]:
        extra = Field(description=self.help) if self.help else Field()
        annotated = Annotated[self.annotation, extra]  # type: ignore[name-defined]  # a runtime type
        if self.alias is not None:
            return annotated, Field(self.default, alias=self.alias)
        return annotated, self.default


def _create_model(fname: str, fields: dict[str, _Param]) -> type[BaseModel]:
    model_name = "".join(part.title() for part in fname.replace("-", "_").split("_")) + "Arguments"
    model_fields = {name: param.model_field() for name, param in fields.items()}
    return create_model(model_name, __config__=_MODEL_CONFIG, **model_fields)  # type: ignore[call-overload]


def _alias(field_name: str, renames: list[tuple[str, str]]) -> str:
    for field, param in renames:
        if field == field_name:
            return param
    return field_name


def _find_bad_param(fields: dict[str, _Param], fname: str) -> str | None:
    for field_name, param in fields.items():
        try:
            TypeAdapter(param.model_field()[0]).json_schema()
        except Exception:
            return f"parameter {field_name!r}"
    return None


def _types_of(schema: Mapping[str, Any]) -> set[str]:
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    if "properties" in schema:
        found.add("object")
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in schema.get(key, ()):
            if isinstance(sub, Mapping):
                found |= _types_of(sub)
    return found


def _accepts_json_container(schema: Mapping[str, Any]) -> bool:
    types = _types_of(schema)
    return bool(types & {"array", "object"}) and "string" not in types


_NO_OUTPUT = (inspect.Signature.empty, None, type(None), Any, inspect.Parameter.empty)


def _output_schema(annotation: Any) -> dict[str, Any] | None:
    if not _shared_type(annotation):  # a user's class: reloads make new ones, keep none alive
        return _derive_output_schema(annotation)
    try:
        cached = _OUTPUT_SCHEMAS.get(annotation, _MISSING)
    except TypeError:  # an unhashable annotation
        return _derive_output_schema(annotation)
    if cached is _MISSING:
        cached = _OUTPUT_SCHEMAS[annotation] = _derive_output_schema(annotation)
    return copy.deepcopy(cached) if cached is not None else None


#: Return annotations repeat across tools (``str``, ``dict``, ``list[str]``): derive each once.
_OUTPUT_SCHEMAS: dict[Any, dict[str, Any] | None] = {}
_MISSING: Any = object()
_SHARED_MODULES = frozenset({"builtins", "typing", "types", "collections.abc"})


def _shared_type(annotation: Any) -> bool:
    """Built from the standard library's types only (``list[str]``, ``dict[str, int]``)."""
    if getattr(annotation, "__module__", None) not in _SHARED_MODULES:
        return False
    return all(_shared_type(arg) for arg in typing.get_args(annotation) if not isinstance(arg, str))


def _derive_output_schema(annotation: Any) -> dict[str, Any] | None:
    if annotation in _NO_OUTPUT:
        return None
    if typing.get_origin(annotation) in (typing.Awaitable, typing.Coroutine):
        return None
    if is_content_annotation(annotation):
        return None  # images, audio, resources: content blocks, no structured value
    try:
        raw = TypeAdapter(annotation).json_schema(mode="serialization")
    except Exception:
        return None  # an undescribable return type is fine; the result is still sent as text
    return strip_generated_titles(inline_refs(raw), top_level=True)
