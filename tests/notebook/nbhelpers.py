"""Helpers shared by the notebook tests: run a cell, wait with a deadline, and ``Face``
(one behaviour through the Python API or through the magic)."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Callable
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from nexus_jupyter import NexusError
from nexus_jupyter.notebook import api


def run_ok(shell: InteractiveShell, cell: str) -> Any:
    result = shell.run_cell(cell)
    if result.error_in_exec is not None or result.error_before_exec is not None:
        raise AssertionError(f"cell failed: {result.error_in_exec or result.error_before_exec!r}")
    return result.result


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0) -> Any:
    """Poll ``predicate`` until it is truthy, failing after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"condition not met within {timeout} s")


class Face:
    """One way in: ``"func"`` (nexus_jupyter.notebook.api) or ``"magic"`` (``%tool ...``)."""

    def __init__(self, kind: str, shell: InteractiveShell) -> None:
        self.kind, self.shell = kind, shell

    def _magic(self, line: str) -> Any:
        result = self.shell.run_cell(line)
        if result.error_in_exec is not None:
            raise result.error_in_exec
        return result.result

    def list(self, source: str | None = None, category: str | None = None) -> Any:
        if self.kind == "func":
            return api.list_tools(source=source, category=category)
        opts = (f" --source {source}" if source else "") + (
            f" --category {category}" if category else ""
        )
        return self._magic("%tool list" + opts)

    def search(self, query: str) -> Any:
        if self.kind == "func":
            return api.search_tools(query)
        return self._magic(f"%tool search {query}")

    def info(self, name: str) -> Any:
        return api.tool_info(name) if self.kind == "func" else self._magic(f"%tool info {name}")

    def call(self, name: str, arguments: dict[str, Any], style: str = "json") -> Any:
        if self.kind == "func":
            return api.call_tool(name, arguments)
        if style == "json":
            return self._magic(f"%tool call {name} {json.dumps(arguments)}")
        pairs = " ".join(
            f"{k}={shlex.quote(v) if isinstance(v, str) else shlex.quote(json.dumps(v))}"
            for k, v in arguments.items()
        )
        return self._magic(f"%tool call {name} {pairs}")

    def remove(self, name: str) -> Any:
        if self.kind == "func":
            return api.remove_tool(name)
        return self._magic(f"%tool remove {name}")

    def history(self, name: str | None = None) -> Any:
        if self.kind == "func":
            return api.call_history(name)
        return self._magic("%tool history" + (f" {name}" if name else ""))

    def try_(self, name: str) -> Any:
        return api.try_tool(name) if self.kind == "func" else self._magic(f"%tool try {name}")

    def browse(self, query: str = "") -> Any:
        return api.browse(query) if self.kind == "func" else self._magic(f"%tool browse {query}")

    def define(self, source: str, **options: Any) -> Any:
        if self.kind == "func":
            return api.define_tools(source, shell=self.shell, **options)
        flags = ""
        for key, value in options.items():
            flag = {
                "categories": "category",
                "capabilities": "capability",
                "requires_credentials": "requires-credential",
            }.get(key, key)
            for item in value if isinstance(value, list | tuple) else [value]:
                flags += f" --{flag} {item}"
        return self._magic(f"%%tool{flags}\n{source}")

    def error(self, method: str, *args: Any, **kwargs: Any) -> str:
        """The message of the error the call raises: a NexusError from the function, a
        UsageError (shown without a traceback) from the magic."""
        expected = NexusError if self.kind == "func" else UsageError
        with pytest.raises(expected) as info:
            getattr(self, method)(*args, **kwargs)
        return str(info.value)
