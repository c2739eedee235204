"""A saved call and what it must give: :class:`TestCase`, :class:`Expectation`.

A case is the YAML mapping a person writes by hand in ``<tool file stem>.tests.yaml``::

    - tool: add
      arguments: {a: 1, b: 2}
      expect: 3                      # equal to the result's value
    - tool: add
      arguments: {a: "x"}
      expect_error: "valid integer"  # the call fails, its error contains this text
    - tool: weather
      arguments: {location: Paris}
      expect_subset: {units: celsius}   # these keys (recursively) are in the result
    - tool: weather
      arguments: {location: Paris}
      check: "result['temperature'] > -60"   # a Python expression that must hold
    - tool: ping
      name: answers at all           # optional label; no expectation: it must not fail
      timeout: 5                     # seconds (default 30)

At most one of ``expect``, ``expect_error``, ``expect_subset`` (or ``subset``) and ``check``;
none means the call must succeed. :meth:`TestCase.from_dict` checks all of it and names the
key and the case in its :class:`~nexus_jupyter.core.errors.TestCaseError`;
:meth:`TestCase.read` keeps a malformed case as an *invalid* one (``problem`` says what is
wrong), so that the other cases of its file still run and it is reported as an error.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ..errors import TestCaseError

__all__ = ["DEFAULT_TIMEOUT_S", "EXPECTATION_KEYS", "Expectation", "TestCase"]

#: A case's call is stopped (and the case is an error) after this many seconds.
DEFAULT_TIMEOUT_S = 30.0
ExpectationKind = Literal["equals", "subset", "error", "check", "succeeds"]
#: YAML key -> kind. ``subset`` is accepted as a short form of ``expect_subset``.
EXPECTATION_KEYS: dict[str, ExpectationKind] = {
    "expect": "equals",
    "expect_error": "error",
    "expect_subset": "subset",
    "subset": "subset",
    "check": "check",
}
_KEY_OF_KIND = {
    "equals": "expect",
    "error": "expect_error",
    "subset": "expect_subset",
    "check": "check",
}
_OTHER_KEYS = ("tool", "arguments", "name", "timeout")
_KNOWN = (*_OTHER_KEYS, *EXPECTATION_KEYS)


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the call must give: ``equals`` a JSON value, contains a ``subset``, fails with an
    ``error`` whose message contains a text, makes a ``check`` expression true, or just
    ``succeeds``."""

    kind: ExpectationKind = "succeeds"
    value: Any = None

    @property
    def key(self) -> str | None:
        """The YAML key it is written under (``None`` for ``succeeds``)."""
        return _KEY_OF_KIND.get(self.kind)

    def describe(self) -> str:
        """One line for people: ``expect 3``, ``expect_error 'valid integer'``."""
        if self.kind == "succeeds":
            return "succeeds"
        if self.kind in ("error", "check"):
            return f"{self.key} {self.value!r}"
        return f"{self.key} {_json(self.value)}"


@dataclass(frozen=True, slots=True)
class TestCase:
    """One saved call of ``tool`` with ``arguments`` and its :class:`Expectation`.

    ``where`` says where it was read from, for messages (``"add.tests.yaml case 2 (line
    5)"``), ``file`` and ``line`` the same for tools (a CI report); none of them is part of
    the case's YAML. ``problem`` is why a case read by :meth:`read` is invalid (``""`` for a
    valid one): such a case is never called, its outcome is an error saying that.
    """

    __test__ = False  # not a pytest test class, whatever its name

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    expectation: Expectation = field(default_factory=Expectation)
    name: str = ""
    timeout: float | None = None
    where: str = field(default="", compare=False)
    file: str = field(default="", compare=False)
    line: int = field(default=0, compare=False)
    problem: str = ""

    @property
    def label(self) -> str:
        """The case for people: where it is, its name, the call (when it names a tool)."""
        head = self.where or "case"
        if self.name:
            head = f"{head} {self.name!r}"
        if not self.tool:
            return head
        return f"{head}: {self.tool}({_short_arguments(self.arguments)})"

    @property
    def error(self) -> TestCaseError | None:
        """For an invalid case, the error :meth:`from_dict` raises for it (where, then what
        is wrong); ``None`` for a valid one."""
        if not self.problem:
            return None
        return TestCaseError(f"{self.where}: {self.problem}" if self.where else self.problem)

    @property
    def limit(self) -> float:
        return self.timeout if self.timeout is not None else DEFAULT_TIMEOUT_S

    def to_dict(self) -> dict[str, Any]:
        """The case as it is written in YAML (key order: tool, name, arguments, expectation,
        timeout)."""
        out: dict[str, Any] = {"tool": self.tool}
        if self.name:
            out["name"] = self.name
        out["arguments"] = dict(self.arguments)
        key = self.expectation.key
        if key is not None:
            out[key] = self.expectation.value
        if self.timeout is not None:
            out["timeout"] = self.timeout
        return out

    def located(self, where: str, file: str = "", line: int = 0) -> TestCase:
        """This case, read from ``file`` at ``line`` (``where`` says it for people)."""
        return replace(self, where=where, file=file, line=line)

    @classmethod
    def from_dict(cls, data: Any, *, where: str = "", tool: str | None = None) -> TestCase:
        """A case from its YAML mapping; ``tool`` fills in a missing ``tool:`` (a case saved
        for a known tool). Raises :class:`TestCaseError` naming ``where`` and the key."""
        case = cls.read(data, where=where, tool=tool)
        error = case.error
        if error is not None:
            raise error
        return case

    @classmethod
    def read(cls, data: Any, *, where: str = "", tool: str | None = None) -> TestCase:
        """A case from its YAML mapping, as :meth:`from_dict` reads it, except that a
        malformed case comes back invalid (``problem`` says what is wrong) instead of
        raising: a case file's other cases still run."""
        try:
            return cls._parse(data, tool, where)
        except TestCaseError as exc:
            name_of_tool = data.get("tool", tool) if isinstance(data, Mapping) else tool
            arguments = data.get("arguments") if isinstance(data, Mapping) else None
            name = data.get("name") if isinstance(data, Mapping) else None
            return cls(
                tool=name_of_tool if isinstance(name_of_tool, str) else "",
                arguments=dict(arguments) if isinstance(arguments, Mapping) else {},
                name=name if isinstance(name, str) else "",
                where=where,
                problem=str(exc),
            )

    @classmethod
    def _parse(cls, data: Any, tool: str | None, where: str) -> TestCase:
        """The case of ``data``; :class:`TestCaseError` says what is wrong (without where)."""
        if not isinstance(data, Mapping):
            raise TestCaseError(
                f"a test case is a mapping with tool, arguments and expect (or expect_error, "
                f"expect_subset, check), got {_json(data)}."
            )
        unknown = [k for k in data if k not in _KNOWN]
        if unknown:
            close = difflib.get_close_matches(str(unknown[0]), _KNOWN, n=1, cutoff=0.6)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise TestCaseError(
                f"unknown key {unknown[0]!r}.{hint} A case has: {', '.join(_KNOWN)}."
            )
        name_of_tool = data.get("tool", tool)
        if name_of_tool is None:
            raise TestCaseError("`tool:` must name the tool to call; add `tool: NAME` to the case.")
        if not isinstance(name_of_tool, str) or not name_of_tool:
            raise TestCaseError(f"`tool:` must name the tool to call, got {name_of_tool!r}.")
        arguments = data.get("arguments") or {}
        if not isinstance(arguments, Mapping):
            raise TestCaseError(
                f"`arguments:` must be a mapping of argument names to values, "
                f"got {_json(arguments)}."
            )
        given = [k for k in EXPECTATION_KEYS if k in data]
        if len(given) > 1:
            raise TestCaseError(
                f"a case has one expectation, got {', '.join(given)}; split it into several cases."
            )
        expectation = Expectation()
        if given:
            key = given[0]
            expectation = Expectation(EXPECTATION_KEYS[key], data[key])
            _check_expectation(expectation, key)
        name = data.get("name") or ""
        if not isinstance(name, str):
            raise TestCaseError(f"`name:` must be text, got {name!r}.")
        timeout = data.get("timeout")
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
        ):
            raise TestCaseError(
                f"`timeout:` must be a positive number of seconds, got {timeout!r}."
            )
        return cls(
            tool=name_of_tool,
            arguments=dict(arguments),
            expectation=expectation,
            name=name,
            timeout=float(timeout) if timeout is not None else None,
            where=where,
        )


def _check_expectation(expectation: Expectation, key: str) -> None:
    value = expectation.value
    if expectation.kind == "error" and (not isinstance(value, str) or not value):
        raise TestCaseError(f"`{key}:` is the text the error message must contain, got {value!r}.")
    if expectation.kind == "subset" and not isinstance(value, Mapping | list):
        raise TestCaseError(
            f"`{key}:` must be a mapping (or a list) that the result contains, got "
            f"{_json(value)}; use `expect:` to compare a whole value."
        )
    if expectation.kind == "check":
        from .predicate import compile_check

        compile_check(value)  # a bad expression fails on load


def _json(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def _short_arguments(arguments: Mapping[str, Any]) -> str:
    text = ", ".join(f"{k}={_json(v)}" for k, v in arguments.items())
    return text if len(text) <= 80 else text[:77] + "..."
