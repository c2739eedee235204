"""Content a tool can return besides plain values: images, audio, embedded resources and
links to resources, alone or mixed with text in a list::

    @tool
    def chart() -> Image: ...

    @tool
    def report() -> list[Content]:
        return ["Here is the chart:", Image(png), EmbeddedResource("report://q3", text=csv,
                mime_type="text/csv"), ResourceLink("report://q3/raw", "raw data")]

Such results are content only: they are sent as MCP content blocks, have no structured
value and advertise no output schema.
"""

from __future__ import annotations

import base64
import typing
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Audio",
    "Content",
    "EmbeddedResource",
    "Image",
    "ResourceLink",
    "content_blocks",
    "is_content_annotation",
]


class Content:
    """Base of the content a tool can return; each kind gives its MCP content block."""

    __slots__ = ()

    def to_block(self) -> dict[str, Any]:
        raise NotImplementedError


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


@dataclass(frozen=True, slots=True)
class Image(Content):
    """Return this from a tool to send an image (shown in the notebook, sent as MCP image)."""

    data: bytes
    mime_type: str = "image/png"

    def to_block(self) -> dict[str, Any]:
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}

    def __repr__(self) -> str:
        return f"Image({self.mime_type}, {len(self.data)} bytes)"


@dataclass(frozen=True, slots=True)
class Audio(Content):
    """Audio data (sent as MCP audio content)."""

    data: bytes
    mime_type: str = "audio/wav"

    def to_block(self) -> dict[str, Any]:
        return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}

    def __repr__(self) -> str:
        return f"Audio({self.mime_type}, {len(self.data)} bytes)"


@dataclass(frozen=True, slots=True)
class EmbeddedResource(Content):
    """A resource's contents carried in the result: ``text`` or binary ``blob``."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None

    def __post_init__(self) -> None:
        if (self.text is None) == (self.blob is None):
            from ..errors import ToolDefinitionError

            raise ToolDefinitionError(
                f"EmbeddedResource({self.uri!r}) needs exactly one of text= or blob=."
            )

    def to_block(self) -> dict[str, Any]:
        resource: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            resource["mimeType"] = self.mime_type
        if self.text is not None:
            resource["text"] = self.text
        else:
            resource["blob"] = _b64(self.blob or b"")
        return {"type": "resource", "resource": resource}


@dataclass(frozen=True, slots=True)
class ResourceLink(Content):
    """A link to a resource the client can read (``resources/read``) when it wants to."""

    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None

    def to_block(self) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.description:
            block["description"] = self.description
        if self.mime_type:
            block["mimeType"] = self.mime_type
        return block


def content_blocks(value: Any) -> list[dict[str, Any]] | None:
    """The content blocks of a content result (one :class:`Content`, or a list of them mixed
    with strings); ``None`` for any other value."""
    if isinstance(value, Content):
        return [value.to_block()]
    if (
        isinstance(value, list | tuple)
        and any(isinstance(v, Content) for v in value)
        and all(isinstance(v, Content | str) for v in value)
    ):
        return [
            v.to_block() if isinstance(v, Content) else {"type": "text", "text": v} for v in value
        ]
    return None


def is_content_annotation(annotation: Any) -> bool:
    """Whether a return annotation mentions a :class:`Content` type (then the tool's results
    are content, with no output schema)."""
    if isinstance(annotation, type) and issubclass(annotation, Content):
        return True
    return any(is_content_annotation(arg) for arg in typing.get_args(annotation))
