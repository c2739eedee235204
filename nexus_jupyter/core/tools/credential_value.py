"""What ``ctx.credentials.get(service, key)`` returns: an awaitable of the value.

``get`` is async (``key = await ctx.credentials.get("github", "token")``). A sync tool
cannot await, and one that calls ``get`` anyway would get a plain coroutine: Python's
``can only concatenate str (not "coroutine") to str``, or worse, an f-string that quietly
sends ``Bearer <coroutine object ...>`` to an API. :class:`PendingCredential` awaits like
that coroutine (``await``, ``asyncio.run``, ``asyncio.ensure_future``), and used in place of
the value (in a string, an f-string, ``+``, a ``str`` method) it raises
:class:`~nexus_jupyter.core.errors.CredentialNotAwaited` (a ``TypeError``), which says what
to write instead::

    CredentialNotAwaited: ctx.credentials.get('github', 'token') was not awaited: it gives an
    awaitable, not the value. In an async tool write `await ctx.credentials.get('github',
    'token')`; in a sync tool call `ctx.credentials.get_sync('github', 'token')`.

The value is looked up only when awaited, so a ``get`` that is never awaited costs nothing
and warns of nothing.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Coroutine, Generator
from typing import Any, NoReturn

from ..errors import CredentialNotAwaited

__all__ = ["PendingCredential"]


class PendingCredential(Coroutine[Any, Any, str]):
    """``ctx.credentials.get(service, key)`` before it is awaited; ``lookup(service, key)``
    gives the value (or raises :class:`~nexus_jupyter.core.errors.MissingCredential`)."""

    __slots__ = ("_key", "_lookup", "_service", "_steps")

    def __init__(self, service: str, key: str, lookup: Callable[[str, str], str]) -> None:
        self._service = service
        self._key = key
        self._lookup = lookup
        self._steps: Generator[Any, None, str] | None = None

    # -- an awaitable -----------------------------------------------------------------------

    def __await__(self) -> Generator[Any, None, str]:
        return self._started()

    def _started(self) -> Generator[Any, None, str]:
        if self._steps is None:
            self._steps = self._value()
        elif inspect.getgeneratorstate(self._steps) == inspect.GEN_CLOSED:  # would give None
            call = f"({self._service!r}, {self._key!r})"
            raise RuntimeError(
                f"ctx.credentials.get{call} was awaited already; keep the value it gave, or "
                "call get again (as a coroutine, it cannot be awaited twice)."
            )
        return self._steps

    def _value(self) -> Generator[Any, None, str]:
        return self._lookup(self._service, self._key)
        yield  # a generator: the lookup runs when awaited, not when get() is called

    def send(self, value: Any) -> Any:
        return self._started().send(value)

    def throw(self, typ: Any, val: Any = None, tb: Any = None) -> Any:
        return self._started().throw(typ, val, tb)

    def close(self) -> None:
        if self._steps is not None:
            self._steps.close()

    # -- not the value ----------------------------------------------------------------------

    def _misused(self) -> NoReturn:
        raise CredentialNotAwaited(self._advice())

    def _advice(self) -> str:
        call = f"({self._service!r}, {self._key!r})"
        return (
            f"ctx.credentials.get{call} was not awaited: it gives an awaitable, not the value. "
            f"In an async tool write `await ctx.credentials.get{call}`; in a sync tool call "
            f"`ctx.credentials.get_sync{call}`."
        )

    def __str__(self) -> str:
        self._misused()

    def __format__(self, spec: str) -> str:
        self._misused()

    def __add__(self, other: Any) -> NoReturn:
        self._misused()

    def __radd__(self, other: Any) -> NoReturn:
        self._misused()

    def __mod__(self, other: Any) -> NoReturn:
        self._misused()

    def __bool__(self) -> bool:  # true, as a coroutine is: the machinery that awaits may ask
        return True

    def __len__(self) -> int:
        self._misused()

    def __iter__(self) -> NoReturn:
        self._misused()

    def __getitem__(self, index: Any) -> NoReturn:
        self._misused()

    def __bytes__(self) -> bytes:
        self._misused()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # what Python and libraries probe for: not the value
            raise AttributeError(name)
        raise AttributeError(f"{self._advice()} (It has no attribute {name!r}.)")

    def __repr__(self) -> str:  # shown where it ends up (a header, an error): says what to do
        call = f"({self._service!r}, {self._key!r})"
        return (
            f"<awaitable ctx.credentials.get{call}: await it in an async tool, or call "
            f"ctx.credentials.get_sync{call} in a sync tool>"
        )
