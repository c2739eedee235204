"""Fetching a URL for ``web_fetch``: guarded against private addresses, capped in size, time
and redirects, and turned into readable markdown.

Every hop (the URL and each redirect's target) is checked before it is requested: a host
that is, or resolves to, a loopback, private, link-local, reserved or multicast address is
refused with :class:`~nexus_jupyter.core.errors.AddressRefused` unless ``allow_private`` is
set (``toolsets: {web: {options: {allow_private: true}}}`` in nex.yaml). Redirects are
followed by hand, so each target is checked, up to ``max_redirects``.

The connection itself goes through :class:`GuardedBackend`, which resolves the host again,
checks every address and connects to the checked one, so a name that answers a public address
to the check and a private one to the connection (DNS rebinding) is refused too.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from ...core.errors import AddressRefused

__all__ = ["FetchLimits", "Fetched", "check_address", "fetch", "to_markdown"]


@dataclass(frozen=True, slots=True)
class FetchLimits:
    """The limits of one fetch (nex.yaml ``toolsets.web.options`` sets them)."""

    max_bytes: int = 2_000_000
    timeout: float = 20.0
    max_redirects: int = 5
    allow_private: bool = False

    @classmethod
    def from_options(cls, options: dict[str, Any]) -> FetchLimits:
        known = {k: options[k] for k in cls.__slots__ if k in options}
        return cls(**known)


@dataclass(slots=True)
class Fetched:
    url: str
    status: int
    content_type: str
    body: bytes
    truncated: bool
    redirects: int


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


async def check_address(url: str, allow_private: bool) -> None:
    """Refuse ``url`` unless it is http(s) and its host resolves only to public addresses."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"web_fetch takes an http(s) URL with a host, got {url!r}.")
    if allow_private:
        return
    await _public_addresses(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))


async def _public_addresses(host: str, port: int) -> list[str]:
    """The addresses of ``host``, refused unless every one is public."""
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise ConnectionError(f"Cannot resolve host {host!r}: {exc}.") from None
    addresses = [str(info[4][0]) for info in infos]
    for address in addresses:
        if not _is_public(address):
            raise AddressRefused(
                f"Refused to connect to {host!r}: it resolves to the private or loopback "
                f"address {address}. To allow it, set toolsets: {{web: {{options: "
                "{allow_private: true}}} in nex.yaml."
            )
    return addresses


def guarded_backend() -> Any:
    """An httpcore network backend that connects only to checked public addresses."""
    import httpcore

    class GuardedBackend(httpcore.AsyncNetworkBackend):
        def __init__(self) -> None:
            self.inner = httpcore.AnyIOBackend()

        async def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Any = None,
        ) -> Any:
            address = (await _public_addresses(host, port))[0]
            return await self.inner.connect_tcp(
                address, port, timeout, local_address, socket_options
            )

        async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> Any:
            raise AddressRefused("web_fetch does not connect to unix sockets.")

        async def sleep(self, seconds: float) -> None:
            await self.inner.sleep(seconds)

    return GuardedBackend()


def _transport(limits: FetchLimits) -> Any:
    import httpcore
    import httpx

    transport = httpx.AsyncHTTPTransport()
    if limits.allow_private:
        return transport
    # httpx takes no network backend, so its pool is swapped for one that has ours (TLS
    # still verifies the name in the URL: httpcore passes it as the server name)
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=guarded_backend()
    )
    return transport


async def fetch(url: str, limits: FetchLimits) -> Fetched:
    """GET ``url`` within ``limits`` (each redirect target checked like the first URL).
    ``limits.timeout`` bounds the whole fetch, redirects and a slowly dripping body too."""
    try:
        async with asyncio.timeout(limits.timeout):
            return await _fetch(url, limits)
    except TimeoutError:
        raise TimeoutError(
            f"web_fetch gave up on {url!r} after {limits.timeout:g} s (the whole fetch, "
            "redirects included). Raise toolsets: {web: {options: {timeout: ...}}} in "
            "nex.yaml for slow sites."
        ) from None


async def _fetch(url: str, limits: FetchLimits) -> Fetched:
    import httpx

    timeout = httpx.Timeout(limits.timeout)
    async with httpx.AsyncClient(
        follow_redirects=False, timeout=timeout, transport=_transport(limits)
    ) as client:
        for hop in range(limits.max_redirects + 1):
            await check_address(url, limits.allow_private)
            async with client.stream("GET", url, headers={"User-Agent": _AGENT}) as response:
                if response.is_redirect and "location" in response.headers:
                    url = urljoin(url, response.headers["location"])
                    continue
                body, truncated = await _read_capped(response, limits.max_bytes)
                return Fetched(
                    url=str(response.url),
                    status=response.status_code,
                    content_type=response.headers.get("content-type", ""),
                    body=body,
                    truncated=truncated,
                    redirects=hop,
                )
    raise ConnectionError(
        f"Stopped after {limits.max_redirects} redirects (last: {url!r}); the site redirects "
        "in a loop or too often."
    )


_AGENT = "nexus-jupyter web_fetch (+https://github.com/nexus-jupyter)"


async def _read_capped(response: Any, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = max_bytes - size
        if len(chunk) > room:
            chunks.append(chunk[:room])
            return b"".join(chunks), True
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks), False


def _is_text(kind: str) -> bool:
    """Whether a body of media type ``kind`` is worth showing as text (no type: guess yes)."""
    return (
        not kind
        or kind.startswith("text/")
        or kind.endswith(("+json", "+xml"))
        or kind in ("application/json", "application/xml", "application/javascript")
    )


def to_markdown(page: Fetched) -> str:
    """The page as readable text: HTML through markdownify, other text as it is, and for
    anything else (an image, a PDF) one line saying what it was."""
    kind = page.content_type.split(";")[0].strip().lower()
    if not _is_text(kind):
        return (
            f"(not shown: the body is {kind}, {len(page.body)} bytes; web_fetch returns "
            "HTML as markdown and text as it is)"
        )
    charset = "utf-8"
    for part in page.content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset" and value:
            charset = value.strip('"')
    try:
        text = page.body.decode(charset, errors="replace")
    except LookupError:
        text = page.body.decode("utf-8", errors="replace")
    if kind in ("text/html", "application/xhtml+xml") or (not kind and "<html" in text[:500]):
        from markdownify import markdownify

        text = markdownify(text, heading_style="ATX")
        lines = [line.rstrip() for line in text.splitlines()]
        text = "\n".join(lines)
        while "\n\n\n" in text:
            text = text.replace("\n\n\n", "\n\n")
    return text.strip()
