"""Multi-round-trip requests (MCP 2026-07-28): a tool's questions to the client as an
input-required result, and the answers when the client calls again.

On that revision a server may not send requests of its own during a call. A tool that asks
(``ctx.elicit``, ``ctx.sample``, ``ctx.list_roots``) and has no answer yet raises
:class:`InputRequired`; the call ends with ``resultType: "input_required"``, the questions
under their keys and a ``requestState``. The client answers and calls again with
``inputResponses`` and that state; the tool runs again from the start and gets its answers.

The state carries the answers of earlier rounds (so a third round still knows the first
one's) and is bound to the tool and its arguments. It is signed with a key of this process:
a client cannot forge answers into it or move it to another call, and a changed state is
refused with ``-32602``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections import OrderedDict
from typing import Any

from ..core.tools.channel import InputRequired
from .mcp_approval import APPROVAL_KEY

__all__ = ["RoundTrip", "StateError", "seal", "unseal"]

_KEY = secrets.token_bytes(32)  # per process: a state is only good for the server that made it
_USED: OrderedDict[str, None] = OrderedDict()  # nonces of states that approved a call
_MAX_USED = 10_000
#: Questions whose answers count only with the state of the round that asked them (approvals:
#: a client may not answer before it was shown the question).
ASKED_FIRST = frozenset({APPROVAL_KEY})


class StateError(ValueError):
    """A ``requestState`` that this server did not make, or made for another call."""


def _digest(body: bytes) -> str:
    return base64.urlsafe_b64encode(hmac.new(_KEY, body, hashlib.sha256).digest()).decode()


def seal(payload: dict[str, Any]) -> str:
    body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True).encode())
    return f"{body.decode()}.{_digest(body)}"


def unseal(state: str) -> dict[str, Any]:
    body, _, signature = state.partition(".")
    if not signature or not hmac.compare_digest(signature, _digest(body.encode())):
        raise StateError("requestState failed its integrity check: it was changed or forged")
    try:
        payload = json.loads(base64.urlsafe_b64decode(body.encode()))
    except ValueError:
        raise StateError("requestState is not readable") from None
    if not isinstance(payload, dict):
        raise StateError("requestState is not readable")
    return payload


def _call_id(target: str, arguments: dict[str, Any]) -> str:
    text = json.dumps([target, arguments], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class RoundTrip:
    """The answers a call has and the questions it still has, for one round."""

    def __init__(
        self,
        target: str,
        arguments: dict[str, Any],
        input_responses: dict[str, Any] | None,
        request_state: str | None,
    ) -> None:
        self._target, self._arguments = target, arguments
        self._call: str | None = None  # hashed only when needed: most calls never ask
        self._nonce: str | None = None
        self.answers: dict[str, Any] = {}
        if request_state:
            payload = unseal(request_state)
            if payload.get("call") != self.call:
                raise StateError("requestState belongs to another call (tool or arguments differ)")
            if payload.get("nonce") in _USED:
                raise StateError("requestState was already used to approve a call; call again")
            self._nonce = str(payload.get("nonce") or "") or None
            self.answers.update(payload.get("answers") or {})
        for key, value in (input_responses or {}).items():
            if key in ASKED_FIRST and not request_state:
                continue  # an answer to a question this server has not asked yet
            dump = getattr(value, "model_dump", None)
            self.answers[key] = (
                dump(by_alias=True, mode="json", exclude_none=True) if dump else value
            )
        self.questions: dict[str, dict[str, Any]] = {}
        self._asked = 0

    @property
    def call(self) -> str:
        if self._call is None:
            self._call = _call_id(self._target, self._arguments)
        return self._call

    @property
    def nonce(self) -> str:
        if self._nonce is None:
            self._nonce = secrets.token_hex(12)
        return self._nonce

    def ask(self, key: str | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to this question, or :class:`InputRequired` (the question is kept)."""
        self._asked += 1
        key = key or f"{method.split('/')[0]}-{self._asked}"
        answer = self.answers.get(key)
        if isinstance(answer, dict):
            return answer
        self.questions[key] = {"method": method, "params": params}
        raise InputRequired(f"waiting for the client's answer to {key!r}")

    def consume(self) -> None:
        """Use this state up: an approval it carries cannot approve a second run."""
        _USED[self.nonce] = None
        while len(_USED) > _MAX_USED:
            _USED.popitem(last=False)

    def result(self) -> Any:
        """The input-required result asking every open question."""
        import mcp_types as types

        state = seal({"call": self.call, "answers": self.answers, "nonce": self.nonce})
        return types.InputRequiredResult.model_validate(
            {"inputRequests": self.questions, "requestState": state}
        )
