"""What a kernel reports of its notebook's calls (:mod:`nexus_jupyter.notebook.kernel_calls`):
each tool's figures in its listing, and a relist only when the counts changed, so an idle
notebook costs its Jupyter server nothing. The end to end path is in
tests/serve/test_kernel_calls.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from nexus_jupyter import Registry, Tool, tool
from nexus_jupyter.core.errors import ToolValidationError
from nexus_jupyter.core.tools.context import NOTEBOOK_CALLER, RequestInfo
from nexus_jupyter.core.tools.kernel_listing import CALLS_META_KEY
from nexus_jupyter.notebook.kernel_calls import CallReporter


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@pytest.fixture
def session() -> Iterator[Registry]:
    reg = Registry(search="keyword")
    reg.add(add)
    yield reg
    reg.close()


def test_the_kernel_relists_only_when_its_notebook_called_a_tool(session: Registry) -> None:
    relists: list[int] = []
    reporter = CallReporter(session, lambda: relists.append(1))
    assert reporter.look() is False and relists == []  # nothing called: nothing to say
    assert reporter.meta("add") is None

    session.call_sync("add", {"a": 1, "b": 2})
    assert reporter.look() is True and relists == [1]
    figures = reporter.meta("add")[CALLS_META_KEY]  # type: ignore[index]
    assert (figures["tool"], figures["calls"], figures["errors"]) == ("add", 1, 0)
    assert reporter.look() is False and relists == [1]  # unchanged: no relist

    with pytest.raises(ToolValidationError):
        session.call_sync("add", {"a": "one", "b": 2})  # a refusal is a change too
    assert reporter.look() is True and relists == [1, 1]
    assert reporter.meta("add")[CALLS_META_KEY]["refused"] == 1  # type: ignore[index]


def test_an_approve_always_in_the_notebook_relists_without_the_approval_mark() -> None:
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.core.tools.kernel_listing import APPROVAL_META_KEY, APPROVAL_WHY_META_KEY
    from nexus_jupyter.notebook.kernel_link import approval_marks, approval_meta

    @tool(permission="workspace_write")
    def save(text: str) -> str:
        """Save a text."""
        return text

    with Registry(search="keyword", policy=Policy(mode="prompt")) as session:
        session.add(save)
        relists: list[int] = []
        reporter = CallReporter(session, lambda: relists.append(1), lambda: approval_marks(session))
        assert approval_meta(session, "save") == {
            APPROVAL_META_KEY: True,
            APPROVAL_WHY_META_KEY: "its notebook asks first (mode: prompt says ask)",
        }
        assert reporter.look() is False and relists == []
        session.policy.remember(session.get("save").spec)  # "Approve always" in a form
        assert reporter.look() is True and relists == [1]  # the sidebar stops asking
        assert approval_meta(session, "save") == {}


def test_an_ask_rule_on_some_arguments_marks_the_tool_for_every_call() -> None:
    """The server cannot see the notebook's rule, so it asks for every call of the tool (more
    often than the notebook would, never less), and says which rule."""
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.core.tools.kernel_listing import APPROVAL_META_KEY, APPROVAL_WHY_META_KEY
    from nexus_jupyter.notebook.kernel_link import approval_marks, approval_meta

    @tool(permission="workspace_write")
    def remove(path: str) -> str:
        """Remove a file."""
        return path

    rule = {"tool": "*", "action": "ask", "arguments": {"path": "/etc/*"}, "name": "etc"}
    with Registry(search="keyword", policy=Policy(rules=[rule])) as session:
        session.add(remove)
        session.add(add)
        spec = session.get("remove").spec
        request = RequestInfo(caller=NOTEBOOK_CALLER)
        assert session.policy.check(spec, {"path": "/tmp/x"}, request).action == "allow"
        assert session.policy.check(spec, {"path": "/etc/x"}, request).action == "ask"
        assert approval_meta(session, "remove") == {
            APPROVAL_META_KEY: True,
            APPROVAL_WHY_META_KEY: "its notebook asks first (etc says ask for some of its arguments)",
        }
        assert approval_meta(session, "add") == {}  # it takes no path: the rule never matches
        marks = approval_marks(session)
        assert marks == {
            ("remove", "its notebook asks first (etc says ask for some of its arguments)")
        }
        session.policy.mode = "prompt"  # the same tool, another reason: a relist is due
        assert approval_marks(session) != marks
        session.policy.mode = "allow"  # the notebook runs everything granted unasked
        assert approval_meta(session, "remove") == {}


def test_a_tool_that_asks_by_its_own_flag_is_marked_without_the_notebooks_reason() -> None:
    from nexus_jupyter.core.policy.policy import Policy
    from nexus_jupyter.core.tools.kernel_listing import APPROVAL_META_KEY
    from nexus_jupyter.notebook.kernel_link import approval_meta

    @tool(permission="workspace_write")
    def wire(amount: int) -> int:
        """Send money (an adapter's tool may say a person approves every call)."""
        return amount

    with Registry(search="keyword", policy=Policy()) as session:
        session.add(Tool.from_function(wire).with_spec(needs_approval=True))
        assert approval_meta(session, "wire") == {APPROVAL_META_KEY: True}
