"""The outcome of one call: :class:`ToolResult`, and content helpers (:class:`Image`).

A tool's failure is data, not an exception: ``result.error`` holds the message and
``result.is_error`` is true. Problems found before the tool runs (unknown name, invalid
arguments, policy) raise instead, because nothing ran.

Secrets: a result made by a registry with a credential store carries its masker, and every
way of *showing* it (``repr``, the notebook display, :meth:`ToolResult.to_dict` for REST and
the CLI, the widgets) goes through :meth:`ToolResult.redacted`, so a credential value that a
tool returns or quotes in an error is shown as ``***``. The attributes themselves
(``value``, ``structured``, ``content``, ``text``) stay exactly what the tool returned, for
code that needs them.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_core import to_jsonable_python

from .content import Image, content_blocks

__all__ = ["Image", "ToolResult", "to_content", "to_structured"]


_MISSING: Any = object()


def to_structured(value: Any) -> Any:
    """A JSON-ready copy of ``value`` (pydantic models, dataclasses, sets, ... converted)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if content_blocks(value) is not None:
        return None  # content only: no structured value
    try:
        return to_jsonable_python(value)
    except Exception:
        return repr(value)


def to_content(value: Any) -> list[dict[str, Any]]:
    """MCP-style content blocks for ``value``."""
    if value is None:
        return []
    blocks = content_blocks(value)
    if blocks is not None:
        return blocks
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    structured = to_structured(value)
    try:
        text = json.dumps(structured, ensure_ascii=False, indent=None, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return [{"type": "text", "text": text}]


@dataclass(slots=True)
class ToolResult:
    """What a call returned.

    ``value`` is the raw Python return value (notebook use); ``structured`` its JSON form;
    ``content`` MCP-style blocks (text, image). ``error`` is the failure message, with
    ``error_type`` the exception class name; ``traceback`` the frames of the tool's own
    code that raised (file or cell and line) and ``exception`` the exception itself, for a
    post-mortem debugger (never serialised). ``notes`` are warnings about the call (the
    tool's file failed to reload, so its last good version ran). ``duration`` is in seconds.
    """

    tool: str
    value: Any = None
    duration: float = 0.0
    error: str | None = None
    error_type: str | None = None
    _structured: Any = field(default=_MISSING, repr=False)
    _content: list[dict[str, Any]] | None = field(default=None, repr=False)
    request_id: str | None = None
    masker: Callable[[str], str] | None = field(default=None, repr=False, compare=False)
    #: makes the call's one-line description on first use (set by the call pipeline)
    describer: Callable[[], str] | None = field(default=None, repr=False, compare=False)
    traceback: str | None = None
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    notes: tuple[str, ...] = ()

    @classmethod
    def failure(
        cls, tool: str, message: str, error_type: str = "Error", duration: float = 0.0
    ) -> ToolResult:
        return cls(tool=tool, error=message, error_type=error_type, duration=duration)

    @classmethod
    def from_parts(
        cls,
        tool: str,
        *,
        content: list[dict[str, Any]] | None = None,
        structured: Any = None,
        error: str | None = None,
        error_type: str | None = None,
    ) -> ToolResult:
        """A result made of content blocks (an MCP server's answer)."""
        value = structured
        if value is None and content:
            texts = [b.get("text", "") for b in content if b.get("type") == "text"]
            value = "\n".join(texts) if texts else None
        return cls(
            tool=tool,
            value=value,
            error=error,
            error_type=error_type,
            _structured=structured,
            _content=list(content or []),
        )

    @property
    def is_error(self) -> bool:
        return self.error is not None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def structured(self) -> Any:
        if self._structured is _MISSING:
            self._structured = None if self.is_error else to_structured(self.value)
        return self._structured

    @property
    def content(self) -> list[dict[str, Any]]:
        if self._content is None:
            if self.is_error:
                self._content = [{"type": "text", "text": self.error or ""}]
            else:
                self._content = to_content(self.value)
        return self._content

    @property
    def summary(self) -> str:
        """The call in one human-readable line ("Calculating: 2 add 3"), secrets masked;
        ``""`` for a result no call pipeline made."""
        if self.describer is None:
            return ""
        line = self.describer()
        return self.masker(line) if self.masker is not None else line

    @property
    def text(self) -> str:
        """All text blocks joined: handy in a terminal."""
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    def redacted(self) -> ToolResult:
        """This result with every known secret value replaced by ``***`` (itself when it
        quotes none): what displays, REST answers and the CLI show."""
        mask = self.masker
        if mask is None:
            return self
        error = mask(self.error) if self.error else self.error
        trace = mask(self.traceback) if self.traceback else self.traceback
        structured = _mask_json(self.structured, mask)
        content = [_mask_block(b, mask) for b in self.content]
        if (error, trace, structured, content) == (
            self.error,
            self.traceback,
            self.structured,
            self.content,
        ):
            return self
        value = structured if not isinstance(self.value, str) else _mask_json(self.value, mask)
        describe = self.describer
        return dataclasses.replace(
            self,
            value=value,
            error=error,
            traceback=trace,
            _structured=structured,
            _content=content,
            masker=None,
            describer=(lambda: mask(describe())) if describe is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready data (what REST answers), secrets masked."""
        if self.masker is not None:
            return self.redacted()._to_dict()
        return self._to_dict()

    def _to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "structured": self.structured,
            "content": self.content,
            "error": self.error,
            "error_type": self.error_type,
            "is_error": self.is_error,
            "duration": self.duration,
            "request_id": self.request_id,
            "summary": self.summary,
            "traceback": self.traceback,
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        shown = self.redacted()
        status = f"error={shown.error!r}" if shown.is_error else f"value={_short(shown.value)}"
        return f"ToolResult({self.tool!r}, {status}, duration={self.duration * 1000:.1f} ms)"


def _mask_json(value: Any, mask: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):  # keys too: a secret can be a key of a structured result
        return {
            (mask(k) if isinstance(k, str) else k): _mask_json(v, mask) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask_json(v, mask) for v in value]
    return value


def _mask_block(block: dict[str, Any], mask: Callable[[str], str]) -> dict[str, Any]:
    if block.get("type") == "text" and isinstance(block.get("text"), str):
        return {**block, "text": mask(block["text"])}
    return block


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."
