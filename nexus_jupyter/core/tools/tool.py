"""One runnable tool: a :class:`ToolSpec` plus the code that answers calls.

Two ways in:

- :meth:`Tool.from_function` for Python functions (``@tool``-marked or plain annotated);
  the schema is derived from the signature and the same model validates calls.
- :meth:`Tool.from_schema` for tools that come with a raw JSON schema (MCP servers, agents);
  the handler gets the validated arguments as one dict.
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..errors import ToolDefinitionError
from .context import ToolContext
from .decorator import ToolMeta, get_tool_meta, make_tool_meta
from .schema import FunctionSchema, derive_function_schema
from .spec import SourceKind, ToolSpec

__all__ = ["Tool"]

#: A sync tool whose recent calls all finished faster than this runs inline on the event loop:
#: handing it to a worker thread would cost more than the call itself.
INLINE_BUDGET_S = 0.0005
_INLINE_STREAK = 8
#: An MCP server's loop serves other sessions too: there a tool must prove itself longer.
#: Its worst case is then one slow call of a long-fast tool stalling the loop once (the streak
#: resets and later calls go back to threads); the hop it saves is ~10% of a served call's CPU.
_SERVER_INLINE_STREAK = 32


def _source_of(fn: Callable[..., Any]) -> str | None:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


def _code_hash(fn: Callable[..., Any] | None, source: str | None) -> str:
    """What the tool runs, hashed: its source text when a source handed it over, else the
    compiled code (bytecode, constants and names, nested functions included)."""
    if source:
        return hashlib.sha256(source.encode()).hexdigest()[:12]
    code = getattr(fn, "__code__", None)
    if code is None:
        return ""
    digest = hashlib.sha256()
    _hash_code(code, digest)
    return digest.hexdigest()[:12]


def _hash_code(code: types.CodeType, digest: Any) -> None:
    digest.update(code.co_code)
    digest.update(repr(code.co_names).encode())
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _hash_code(const, digest)
        else:
            digest.update(repr(const).encode())


class Tool:
    """A spec and its handler. Immutable in practice: reloads make new ``Tool`` objects."""

    __slots__ = (
        "_fast_streak",
        "_from_python",
        "_handler",
        "_schema",
        "_source_code",
        "_takes_ctx",
        "_validator",
        "check_elsewhere",
        "fn",
        "is_async",
        "meta",
        "spec",
        "stats_key",
    )

    def __init__(
        self,
        spec: ToolSpec,
        handler: Callable[..., Any],
        *,
        fn: Callable[..., Any] | None = None,
        schema: FunctionSchema | None = None,
        validator: Callable[[str, Mapping[str, Any] | None], dict[str, Any]] | None = None,
        takes_ctx: bool = False,
        source_code: str | None = None,
        meta: ToolMeta | None = None,
        check_elsewhere: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        from_python: bool = False,
    ) -> None:
        self.spec = spec
        #: Where the call pipeline counts this tool's calls: its name and source, so two
        #: sources' tools of one name are counted apart (see
        #: :func:`~nexus_jupyter.core.telemetry.stats.stats_key`, which makes the same key).
        self.stats_key = f"{spec.name}\x1f{spec.source}"
        self.fn = fn
        self.meta = meta
        self._source_code = source_code
        self._handler = handler
        self._schema = schema
        self._validator = validator
        self._takes_ctx = takes_ctx
        #: The rest of the check, where the tool runs (a worker process's pydantic model):
        #: awaited with the validated arguments before the call is approved or run; raises
        #: :class:`~nexus_jupyter.core.errors.ToolValidationError`. ``None``: nothing more.
        self.check_elsewhere = check_elsewhere
        self._from_python = from_python
        self._fast_streak = 0
        target = inspect.unwrap(handler)
        self.is_async = inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
            getattr(target, "__call__", None)  # noqa: B004 - async callable objects
        )

    # -- construction ---------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        source: str = "",
        source_kind: SourceKind = "notebook",
        origin: str = "",
        source_code: str | None = None,
        **overrides: Any,
    ) -> Tool:
        """Make a tool of ``fn``. ``overrides`` are ``@tool`` options that win over the
        decorator's (``name``, ``description``, ``permission``, ``categories``, ...)."""
        if not callable(fn):
            raise ToolDefinitionError(f"Expected a function, got {fn!r}.")
        meta = get_tool_meta(fn) or ToolMeta()
        if overrides:
            merged = {**meta.options(), **{k: v for k, v in overrides.items() if v is not None}}
            meta = make_tool_meta(**merged)
        name = meta.name or getattr(fn, "__name__", None)
        if not name or name == "<lambda>":
            raise ToolDefinitionError(
                f"Cannot name the tool for {fn!r}: give it a name with @tool(name=...)."
            )
        schema = derive_function_schema(fn, name=name, description=meta.description)
        spec = ToolSpec(
            name=name,
            description=schema.description,
            input_schema=schema.input_schema,
            output_schema=schema.output_schema,
            permission=meta.permission or "read_only",
            permission_declared=meta.permission is not None,
            requires_credentials=meta.requires_credentials,
            categories=meta.categories,
            capabilities=meta.capabilities,
            source=source,
            source_kind=source_kind,
            origin=origin,
            eager=meta.eager,
            timeout=meta.timeout,
            task_support=meta.task,
            code_hash=_code_hash(fn, source_code),
        )
        return cls(
            spec,
            fn,
            fn=fn,
            schema=schema,
            validator=schema.validate,
            takes_ctx=schema.context_param is not None,
            source_code=source_code,
            meta=meta,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        input_schema: Mapping[str, Any],
        handler: Callable[..., Any],
        *,
        validate: bool = True,
        meta: ToolMeta | None = None,
        source_code: str | None = None,
        check_elsewhere: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
        from_python: bool = False,
        **spec_fields: Any,
    ) -> Tool:
        """A tool with a raw JSON schema. ``handler(arguments)`` or
        ``handler(arguments, ctx)`` gets the arguments as one dict; it may be async and may
        return a :class:`~nexus_jupyter.core.tools.result.ToolResult` as is.

        Arguments are checked against ``input_schema`` (JSON Schema) before the handler runs,
        unless ``validate=False`` (the remote end validates itself). ``meta`` carries
        ``@tool`` options (a summary, task settings) of a tool that stands for another one,
        ``source_code`` the code that defines it, and ``check_elsewhere`` the checks its
        schema does not say, made where it runs (see :attr:`check_elsewhere`).

        ``from_python``: ``input_schema`` was derived from a Python tool (the stand-in for a
        tool in a worker process), so its objects take the keys they list only, as the
        tool's own model does (see :attr:`schema_from_python`). Otherwise (an MCP server's
        tool, a declared or catalog tool) a key the schema does not list is taken unless it
        says ``additionalProperties: false``: the handler gets it, its upstream decides.
        """
        if "permission" in spec_fields:  # given by the source that builds the tool
            spec_fields.setdefault("permission_declared", True)
        spec = ToolSpec(
            name=name, description=description, input_schema=dict(input_schema), **spec_fields
        )
        try:
            n_params = len(inspect.signature(handler).parameters)
        except (TypeError, ValueError):
            n_params = 1
        validator = None
        if validate:
            from .jsonschema_check import JsonSchemaValidator

            validator = JsonSchemaValidator(spec.input_schema, from_python=from_python).validate
        else:
            from .jsonschema_check import check_is_object

            validator = check_is_object
        return cls(
            spec,
            handler,
            validator=validator,
            takes_ctx=n_params >= 2,
            meta=meta,
            source_code=source_code,
            check_elsewhere=check_elsewhere,
            from_python=from_python,
        )

    # -- use ------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def source_code(self) -> str | None:
        """The code that defines the tool: what its source handed over, else the function's
        source as :mod:`inspect` finds it (looked up on first use; registering a thousand
        tools should not tokenize a thousand files)."""
        if self._source_code is None and self.fn is not None:
            self._source_code = _source_of(self.fn)
        return self._source_code

    @property
    def context_param(self) -> str | None:
        return self._schema.context_param if self._schema else None

    @property
    def wants_context(self) -> bool:
        return self._takes_ctx

    @property
    def checked_by_schema(self) -> bool:
        """Whether a JSON Schema validator of :attr:`spec`'s ``input_schema`` gives the same
        verdict as :meth:`validate` (a tool of a raw schema, a signature of simple types);
        not for pydantic models, custom validators, emails, ... that the schema cannot say."""
        return self._schema is None or self._schema.says_all

    @property
    def schema_from_python(self) -> bool:
        """Whether :attr:`spec`'s ``input_schema`` was derived from a Python function (this
        tool's, or in a worker process the one it stands for): an object of it that lists
        its properties and says nothing of others takes those keys only, and any other is
        refused by name (a pydantic model would drop it silently). A foreign schema (an MCP
        server's, a declared tool's) takes such keys, as JSON Schema says."""
        return self._schema is not None or self._from_python

    def validate(self, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
        """Check ``arguments`` against the schema; return what the handler will get.

        Raises :class:`~nexus_jupyter.core.errors.ToolValidationError`.
        """
        if self._validator is None:
            return dict(arguments or {})
        return self._validator(self.spec.name, arguments)

    def invoke(self, kwargs: dict[str, Any], ctx: ToolContext | None) -> Any:
        """Run the handler with validated ``kwargs`` (a coroutine for async tools)."""
        schema = self._schema
        if schema is None:  # from_schema: handler(arguments[, ctx])
            return self._handler(kwargs, ctx) if self._takes_ctx else self._handler(kwargs)
        if schema.context_param is not None:
            kwargs[schema.context_param] = ctx
        if schema.positional_only:
            args = [kwargs.pop(p) for p in schema.positional_only if p in kwargs]
            return self._handler(*args, **kwargs)
        return self._handler(**kwargs)

    @property
    def runs_inline(self) -> bool:
        """Whether a sync tool has proven fast enough to run without a worker thread."""
        return self._fast_streak >= _INLINE_STREAK

    @property
    def runs_inline_on_server(self) -> bool:
        """:attr:`runs_inline` for a server's loop, which asks for a longer fast streak."""
        return self._fast_streak >= _SERVER_INLINE_STREAK

    def record_duration(self, seconds: float) -> None:
        if seconds < INLINE_BUDGET_S:
            if self._fast_streak < _SERVER_INLINE_STREAK:
                self._fast_streak += 1
        else:
            self._fast_streak = 0

    def with_spec(self, **changes: Any) -> Tool:
        """A copy with spec fields changed (the registry uses it to namespace and to stamp
        the source); the handler and validator are shared."""
        clone = Tool(
            self.spec.evolve(**changes),
            self._handler,
            fn=self.fn,
            schema=self._schema,
            validator=self._validator,
            takes_ctx=self._takes_ctx,
            source_code=self._source_code,
            meta=self.meta,
            check_elsewhere=self.check_elsewhere,
            from_python=self._from_python,
        )
        clone._fast_streak = self._fast_streak
        return clone

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation, no policy)."""
        if self.fn is None:
            raise TypeError(f"Tool {self.name!r} has no Python function; use Registry.call().")
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        src = f" from {self.spec.source}" if self.spec.source else ""
        return f"<Tool {self.spec.name!r}{src} ({self.spec.permission}) v{self.spec.version}>"
