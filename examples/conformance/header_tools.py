"""A tool whose argument is mirrored into an HTTP header (``x-mcp-header``, SEP-2243): the
conformance suite checks that the server refuses a header that disagrees with the body."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from nexus_jupyter import tool


@tool
def test_header_region(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
) -> str:
    """Echo the region the request was routed by."""
    return f"region: {region}"
