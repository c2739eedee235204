"""Every error nexus_jupyter raises on purpose.

The hierarchy::

    NexusError                      base class; catch this to catch them all
    ├── ToolDefinitionError         a function cannot become a tool (bad signature, bad option)
    ├── ToolNotFound                no tool by that name (carries "did you mean" suggestions)
    ├── ToolValidationError         call arguments do not match the schema (one entry per field)
    ├── ToolUnavailable             the tool is listed but cannot run now (server down, ...)
    ├── PolicyError
    │   ├── PermissionDenied        the call is above the session's grant, blocked, or ACL-denied
    │   ├── ApprovalRequired        the call needs a human approval nobody gave
    │   └── AddressRefused          a web tool refused a private or loopback address
    ├── MissingCredential           a credential the tool requires is not set
    │   └── CredentialRefreshFailed an expired OAuth credential could not be refreshed
    ├── CredentialNotAwaited        ``ctx.credentials.get(...)`` used as the value, unawaited
    ├── SourceError                 a source (file, folder, MCP server) failed to load
    ├── ConfigError                 nex.yaml (or runtime settings) is invalid
    │   └── TestCaseError           a saved tool test (a *.tests.yaml entry) is malformed
    └── ExportError                 a notebook tool cannot be written as a file

Each message names what was wrong, shows the offending value with ``!r`` and says how to fix it.
Faces (magics, REST, MCP, CLI) turn these into their own error shape at the edge; nothing else.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AddressRefused",
    "ApprovalDenied",
    "ApprovalRequired",
    "ConfigError",
    "CredentialNotAwaited",
    "CredentialRefreshFailed",
    "ExportError",
    "FieldError",
    "MissingCredential",
    "NexusError",
    "PermissionDenied",
    "PolicyError",
    "SourceError",
    "TestCaseError",
    "ToolDefinitionError",
    "ToolNotFound",
    "ToolUnavailable",
    "ToolValidationError",
]


class NexusError(Exception):
    """Base class of every error nexus_jupyter raises on purpose."""


class ToolDefinitionError(NexusError, TypeError):
    """Raised when a function cannot become a tool: ``*args``, an unannotated parameter,
    an unknown permission, a schema that is not a JSON object schema, ..."""


class ToolNotFound(NexusError, LookupError):
    """Raised when a name is not in the registry. ``suggestions`` holds close names;
    ``cause`` says why it is missing when that is known (its file failed to load); ``gone``
    says how a tool that was here left (its file was deleted)."""

    def __init__(
        self,
        name: str,
        suggestions: Sequence[str] = (),
        cause: str | None = None,
        *,
        gone: str | None = None,
    ) -> None:
        self.name = name
        self.suggestions = tuple(suggestions)
        self.cause = cause
        self.gone = gone
        super().__init__(
            self.worded_for("List the available tools with `%tool list` or `Registry.list()`.")
        )

    def worded_for(self, advice: str) -> str:
        """The message with ``advice`` for where it is shown (an agent, the command line)
        when there are no close names to suggest."""
        if self.cause:
            return f"No tool named {self.name!r}: {self.cause}"
        if self.gone:
            return f"The tool {self.name!r} is gone: {self.gone}. " + (
                self._close() if self.suggestions else advice
            )
        if self.suggestions:
            return f"No tool named {self.name!r}. {self._close()}"
        return f"No tool named {self.name!r}. {advice}"

    def _close(self) -> str:
        return f"Did you mean {' or '.join(repr(s) for s in self.suggestions[:3])}?"

    def __reduce__(self) -> tuple[Any, ...]:  # its args hold the message, not the name
        return (_tool_not_found, (self.name, self.suggestions, self.cause, self.gone))


def _tool_not_found(
    name: str, suggestions: Sequence[str], cause: str | None, gone: str | None
) -> ToolNotFound:
    return ToolNotFound(name, suggestions, cause, gone=gone)


@dataclass(frozen=True, slots=True)
class FieldError:
    """One invalid argument: where it is, what is wrong, and the value that was sent.

    ``loc`` is the path as segments (``("items", 0, "name")``); ``path`` renders it as a
    JSONPath (``$.items[0].name``) for people, REST answers and form fields.
    """

    loc: tuple[str | int, ...]
    message: str
    value: Any = None

    @property
    def path(self) -> str:
        out = "$"
        for part in self.loc:
            out += f"[{part}]" if isinstance(part, int) else f".{part}"
        return out

    @property
    def line(self) -> str:
        """``$.a: expected an integer (got "x")``: the path, what was wrong and the value sent,
        as JSON; a missing argument has no value to quote (``(got null)`` would read as a null
        sent), nor a message that says what it got."""
        if self.message.endswith(" is missing") or "got " in self.message:
            return f"{self.path}: {self.message}"
        return f"{self.path}: {self.message} (got {_quoted(self.value)})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "loc": list(self.loc),
            "message": self.message,
            "value": _jsonable_preview(self.value),
        }


def _masked_value(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    shown = repr(value)
    hidden = mask(shown)
    return value if hidden == shown else hidden


def _jsonable_preview(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value if not isinstance(value, str) or len(value) <= 200 else value[:200] + "…"
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"


def _quoted(value: Any) -> str:
    """A refused value as an error message shows it: in JSON, the notation every caller
    sends (``true``, ``null``, ``"2"``), cut at 200 characters."""
    text = json.dumps(value, ensure_ascii=False, default=repr)
    return text if len(text) <= 200 else text[:200] + "…"


class ToolValidationError(NexusError, ValueError):
    """Raised when call arguments do not match the tool's input schema.

    ``errors`` has one :class:`FieldError` per offending field. ``where_it_runs``: the
    process or server that runs the tool refused them before running it (a live kernel's
    pydantic validator, a nexus MCP server's check), though this registry's schema took
    them; a tool handler raises it so, and the call counts as refused, not failed.
    """

    def __init__(
        self, tool: str, errors: Sequence[FieldError], *, where_it_runs: bool = False
    ) -> None:
        self.tool = tool
        self.errors = tuple(errors)
        self.where_it_runs = where_it_runs
        parts = [e.line for e in self.errors]
        n = len(self.errors)
        super().__init__(
            f"Invalid arguments for tool {tool!r} ({n} error{'s' if n != 1 else ''}): "
            + "; ".join(parts)
        )

    def to_dict(self) -> dict[str, Any]:
        return {"tool": self.tool, "errors": [e.to_dict() for e in self.errors]}

    def masked(self, mask: Callable[[str], str]) -> ToolValidationError:
        """This error with ``mask`` applied to every path, message and value it shows (an
        argument may be a stored secret); itself when nothing changes."""
        errors = [
            FieldError(
                tuple(mask(p) if isinstance(p, str) else p for p in e.loc),
                mask(e.message),
                _masked_value(e.value, mask),
            )
            for e in self.errors
        ]
        if errors == list(self.errors):
            return self
        return ToolValidationError(self.tool, errors, where_it_runs=self.where_it_runs)


class ToolUnavailable(NexusError, RuntimeError):
    """Raised when a listed tool cannot run now (its MCP server is down, a CLI is missing)."""


class PolicyError(NexusError, PermissionError):
    """Base class of policy decisions that stop a call."""


class PermissionDenied(PolicyError):
    """Raised when a call is above the session's granted level, blocked, or denied by an ACL."""


class ApprovalRequired(PolicyError):
    """Raised when a call needs an approval and nobody can (or did) give it. ``why`` is the
    policy's reason for asking (the rule in nex.yaml, the session's mode, the tool's own
    flag), for a face that asks itself to show."""

    def __init__(
        self, message: str, tool: str = "", arguments: Any = None, why: str | None = None
    ) -> None:
        self.tool = tool
        self.arguments = arguments
        self.why = why
        super().__init__(message)


class ApprovalDenied(PermissionDenied):
    """Raised when the person asked to approve a call said no: their own choice, not a
    failure (a form shows it in grey, as a cancel, and offers no test of it)."""


class AddressRefused(PolicyError):
    """Raised by the web tools for a URL whose host is private, loopback or link-local (or
    resolves to such an address), unless ``toolsets.web.options.allow_private`` allows it."""


class MissingCredential(NexusError, LookupError):
    """Raised when a tool needs a credential that is not set; the message says how to set it."""

    def __init__(self, service: str, key: str | None = None, tool: str | None = None) -> None:
        self.service = service
        self.key = key
        self.tool = tool
        what = f"{service}/{key}" if key else service
        for_tool = f" (needed by tool {tool!r})" if tool else ""
        super().__init__(
            f"Missing credential {what!r}{for_tool}. Set it with "
            f"{how_to_set_credential(service, key)}."
        )

    def for_agent(self) -> str:
        """The message for an agent, which cannot set a credential where the server runs:
        whom to ask, and what they run."""
        what = f"{self.service}/{self.key}" if self.key else self.service
        for_tool = f" (needed by tool {self.tool!r})" if self.tool else ""
        return (
            f"Missing credential {what!r}{for_tool}. It is not set where this server runs, and "
            "only the person running the server can set it: ask the user to set it with "
            f"{how_to_set_credential(self.service, self.key)}, then call the tool again."
        )


class CredentialNotAwaited(NexusError, TypeError):
    """Raised when what ``ctx.credentials.get(...)`` returns (an awaitable) is used as the
    value without ``await``, typically in a sync tool; the message names both fixes: ``await``
    in an async tool, ``ctx.credentials.get_sync(...)`` in a sync one."""


def how_to_set_credential(service: str, key: str | None = None) -> str:
    """The three ways to set credential ``service/key``, for a sentence that says so."""
    key = key or "api_key"
    env = f"NEXUS_CRED_{_env_part(service)}_{_env_part(key)}"
    return (
        f"`%tool credentials set {service} {key}`, "
        f"`nexus-tools credentials set {service} {key}`, or the environment variable {env}"
    )


class CredentialRefreshFailed(MissingCredential):
    """Raised when an expired OAuth credential (stored with ``refresh_token`` and
    ``token_url``) could not be refreshed; the message says how to sign in again."""

    def __init__(self, service: str, key: str, why: str) -> None:
        self.service = service
        self.key = key
        self.tool = None
        NexusError.__init__(
            self,
            f"Credential {service}/{key!s} has expired and refreshing it failed: {why}. "
            f"Sign in again to get a new token, then store it with "
            f"`nexus-tools credentials set {service} {key}` (and a new refresh_token with "
            f"`nexus-tools credentials set {service} refresh_token`), or `%tool credentials set "
            f"{service} {key}` in a notebook.",
        )


def _env_part(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).upper()


class SourceError(NexusError, RuntimeError):
    """Raised (and recorded as a status) when a source fails to load: a broken tool file,
    a folder that does not exist, an MCP server that does not start."""


class ConfigError(NexusError, ValueError):
    """Raised when nex.yaml or runtime settings are invalid; names the file, line and key."""


class TestCaseError(ConfigError):
    """Raised when a tool test case (an entry of a ``*.tests.yaml`` file, or one being
    saved) is malformed; the message names the file, the case and the key."""

    __test__ = False  # not a pytest test class, whatever its name


class ExportError(NexusError, ValueError):
    """Raised when a notebook tool cannot be exported as a self-contained file."""
