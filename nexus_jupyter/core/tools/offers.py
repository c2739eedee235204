"""Resources and prompts defined in Python, next to tools: ``@resource(uri)`` and ``@prompt``.

They work in tool files (hot reloaded with the file) and are served over MCP::

    @resource("notes://today", mime_type="text/markdown")
    def today() -> str:
        "Today's notes."
        return Path("notes.md").read_text()

    @resource("users://{user_id}/profile")         # a template: {user_id} is a parameter
    def profile(user_id: str) -> dict: ...

    @prompt
    def review(code: str, style: Literal["terse", "thorough"] = "terse") -> str:
        "Review a piece of code."
        return f"Review this code ({style}):\\n{code}"

A prompt may take a ``ToolContext`` parameter to ask the client (``await ctx.elicit(...)``)
like a tool. A resource function returns ``str`` (text), ``bytes`` (binary) or any JSON value (sent as
JSON text). A prompt returns a ``str`` (one user message), or a list whose items are
strings, :class:`~.content.Content` (images, embedded resources...) or ``{"role", "content"}``
messages. ``Literal`` parameters offer their values as completions.
"""

from __future__ import annotations

import asyncio
import base64
import inspect
import json
import re
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..errors import ToolDefinitionError
from .content import Content
from .context import ToolContext
from .docstrings import parse_docstring
from .result import to_structured

__all__ = [
    "OFFER_ATTR",
    "PromptArgument",
    "PromptDef",
    "ResourceDef",
    "get_offer",
    "prompt",
    "resource",
]

OFFER_ATTR = "__nexus_offer__"
F = TypeVar("F", bound=Callable[..., Any])
_VAR = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _describe(fn: Callable[..., Any], description: str | None) -> str:
    if description:
        return description
    return parse_docstring(inspect.getdoc(fn) or "").description or fn.__name__.replace("_", " ")


async def _run(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(**kwargs)
    return await asyncio.to_thread(fn, **kwargs)


def _choices(annotation: Any) -> tuple[str, ...]:
    """The values a ``Literal`` (or Optional Literal) parameter allows, as strings."""
    if typing.get_origin(annotation) is typing.Literal:
        return tuple(str(v) for v in typing.get_args(annotation))
    return tuple(c for arg in typing.get_args(annotation) for c in _choices(arg))


def _params(fn: Callable[..., Any]) -> list[inspect.Parameter]:
    return [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn)
    except Exception:  # unresolvable annotations: no completions, nothing else lost
        return {}


@dataclass(frozen=True, slots=True)
class ResourceDef:
    """A resource (fixed ``uri``) or resource template (``uri`` with ``{name}`` parameters)."""

    uri: str
    fn: Callable[..., Any] = field(repr=False)  # compared by identity: a redefinition is a change
    name: str
    description: str
    mime_type: str | None = None
    title: str | None = None
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    #: Reads the contents itself (an MCP server's resource): ``await forward(uri)``.
    forward: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = field(
        default=None, repr=False, compare=False
    )
    #: Served by another MCP server, which tells its changes (not this process's definition).
    remote: bool = field(default=False, compare=False)
    #: Follows a remote resource's changes: ``await watch(uri, True)`` subscribes at its
    #: server, ``False`` unsubscribes (``None``: that server cannot tell its changes).
    watch: Callable[[str, bool], Awaitable[Any]] | None = field(
        default=None, repr=False, compare=False
    )

    @property
    def is_template(self) -> bool:
        return bool(_VAR.search(self.uri))

    @property
    def variables(self) -> list[str]:
        return _VAR.findall(self.uri)

    def match(self, uri: str) -> dict[str, str] | None:
        """The template's parameters for ``uri`` (``{}`` for a fixed resource), or ``None``."""
        if not self.is_template:
            return {} if uri == self.uri else None
        pattern = "".join(
            f"(?P<{part}>[^/]+)" if i % 2 else re.escape(part)
            for i, part in enumerate(_VAR.split(self.uri))
        )
        found = re.fullmatch(pattern, uri)
        return found.groupdict() if found else None

    async def read(self, uri: str) -> list[dict[str, Any]]:
        """The MCP resource contents for ``uri`` (which must :meth:`match`)."""
        if self.forward is not None:
            return await self.forward(uri)
        value = await _run(self.fn, self.match(uri) or {})
        entry: dict[str, Any] = {"uri": uri}
        if isinstance(value, bytes | bytearray):
            entry["mimeType"] = self.mime_type or "application/octet-stream"
            entry["blob"] = base64.b64encode(bytes(value)).decode("ascii")
        elif isinstance(value, str):
            entry["mimeType"] = self.mime_type or "text/plain"
            entry["text"] = value
        else:
            entry["mimeType"] = self.mime_type or "application/json"
            entry["text"] = json.dumps(to_structured(value), ensure_ascii=False)
        return [entry]


@dataclass(frozen=True, slots=True)
class PromptArgument:
    name: str
    required: bool
    description: str | None = None


@dataclass(frozen=True, slots=True)
class PromptDef:
    """A prompt: a function of string arguments that gives the messages to send."""

    name: str
    fn: Callable[..., Any] = field(repr=False)  # compared by identity: a redefinition is a change
    description: str
    arguments: tuple[PromptArgument, ...] = ()
    title: str | None = None
    choices: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False)
    context_param: str | None = None  # a ToolContext parameter: the prompt may ask the client
    #: Renders the messages itself (an MCP server's prompt, a tool file's prompt in a worker
    #: process): ``await forward(arguments, ctx)``; ``ctx`` reaches the calling client.
    forward: (
        Callable[[dict[str, str], ToolContext | None], Awaitable[list[dict[str, Any]]]] | None
    ) = field(default=None, repr=False, compare=False)

    async def render(
        self, arguments: dict[str, str], ctx: ToolContext | None = None
    ) -> list[dict[str, Any]]:
        """The prompt's messages (MCP ``PromptMessage`` dicts). Raises
        :class:`ToolDefinitionError` for a missing or unknown argument."""
        if self.forward is not None:
            return await self.forward(dict(arguments), ctx)  # the other end checks them
        known = {a.name for a in self.arguments}
        missing = [a.name for a in self.arguments if a.required and a.name not in arguments]
        unknown = sorted(set(arguments) - known)
        if missing or unknown:
            problems = [f"missing {', '.join(missing)}"] if missing else []
            problems += [f"unknown {', '.join(unknown)}"] if unknown else []
            raise ToolDefinitionError(
                f"Prompt {self.name!r}: {'; '.join(problems)} argument(s). It takes: "
                + (", ".join(sorted(known)) or "no arguments")
            )
        kwargs: dict[str, Any] = dict(arguments)
        if self.context_param is not None:
            kwargs[self.context_param] = ctx or ToolContext(tool_name=self.name)
        value = await _run(self.fn, kwargs)
        items = value if isinstance(value, list | tuple) else [value]
        return [_message(item) for item in items]


def _message(item: Any) -> dict[str, Any]:
    if isinstance(item, dict) and "role" in item:
        content = item["content"]
        if isinstance(content, str):
            content = {"type": "text", "text": content}
        elif isinstance(content, Content):
            content = content.to_block()
        return {"role": item["role"], "content": content}
    if isinstance(item, Content):
        return {"role": "user", "content": item.to_block()}
    return {"role": "user", "content": {"type": "text", "text": str(item)}}


def get_offer(obj: Any) -> ResourceDef | PromptDef | None:
    """The resource or prompt that ``@resource``/``@prompt`` made of ``obj``, if any."""
    offer = getattr(obj, OFFER_ATTR, None)
    return offer if isinstance(offer, ResourceDef | PromptDef) else None


def resource(
    uri: str,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
) -> Callable[[F], F]:
    """Make a function a resource at ``uri`` (``{param}`` parts make it a template whose
    parameters are the function's)."""

    def mark(fn: F) -> F:
        params = {p.name for p in _params(fn)}
        wanted = set(_VAR.findall(uri))
        if wanted != params:
            raise ToolDefinitionError(
                f"@resource({uri!r}) on {fn.__name__}: the URI's parameters "
                f"{sorted(wanted)} must be the function's parameters {sorted(params)}."
            )
        hints = _hints(fn)
        offer = ResourceDef(
            uri=uri,
            fn=fn,
            name=name or fn.__name__,
            description=_describe(fn, description),
            mime_type=mime_type,
            title=title,
            choices={p: c for p in params if (c := _choices(hints.get(p)))},
        )
        setattr(fn, OFFER_ATTR, offer)
        return fn

    return mark


@typing.overload
def prompt(fn: F, /) -> F: ...
@typing.overload
def prompt(
    *, name: str | None = None, title: str | None = None, description: str | None = None
) -> Callable[[F], F]: ...
def prompt(
    fn: Any = None,
    /,
    *,
    name: str | None = None,
    title: str | None = None,
    description: str | None = None,
) -> Any:
    """Make a function a prompt; its parameters are the prompt's (string) arguments."""

    def mark(fn: F) -> F:
        docs = parse_docstring(inspect.getdoc(fn) or "")
        hints = _hints(fn)
        context = next((p for p, h in hints.items() if h is ToolContext), None)
        arguments = tuple(
            PromptArgument(p.name, p.default is p.empty, docs.params.get(p.name))
            for p in _params(fn)
            if p.name != context
        )
        offer = PromptDef(
            name=name or fn.__name__,
            fn=fn,
            description=_describe(fn, description),
            arguments=arguments,
            title=title,
            choices={a.name: c for a in arguments if (c := _choices(hints.get(a.name)))},
            context_param=context,
        )
        setattr(fn, OFFER_ATTR, offer)
        return fn

    return mark(fn) if fn is not None else mark
