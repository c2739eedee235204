"""The session's call history follows the session registry without costing the calls: it
never keeps a replaced registry alive, and a history panel open in a kernel is redrawn after a
burst of calls, once, on the kernel's loop, not inside each call. Real registries and widgets;
the loop is pytest's, as a kernel's cells run inside its loop."""

from __future__ import annotations

import asyncio
import gc
import weakref

from waiting import until

from nexus_jupyter import Registry, tool
from nexus_jupyter.notebook.history import CallHistory, session_history
from nexus_jupyter.notebook.widgets.history_panel import HistoryPanel
from nexus_jupyter.session import reset_session_registry


@tool
def twice(x: int) -> int:
    """Twice x."""
    return 2 * x


def _registry() -> Registry:
    reg = Registry(search="keyword")
    reg.add(twice)
    return reg


def test_a_replaced_session_registry_is_not_kept_alive_by_the_history() -> None:
    old = _registry()
    reset_session_registry(old)
    session_history().follow(old)  # as %load_ext does for each session registry
    assert old.call_sync("twice", {"x": 2}).structured == 4
    reset_session_registry(None)  # %reload_ext, a test: the registry is closed and replaced
    gone = weakref.ref(old)
    del old
    gc.collect()
    assert gone() is None  # its search index, sources and loop go with it
    assert session_history().entries("twice")[-1].value == 4  # what it did stays listed


def test_a_history_that_stops_following_a_collected_registry_does_not_fail() -> None:
    history = CallHistory()
    reg = _registry()
    history.follow(reg)
    reg.close()
    gone = weakref.ref(reg)
    del reg
    gc.collect()
    assert gone() is None
    assert len(history._followed) == 0


async def test_calls_in_a_loop_redraw_an_open_panel_once_after_they_return() -> None:
    reg = _registry()
    history = CallHistory()
    history.follow(reg)
    panel = HistoryPanel(history, "twice", lambda _arguments: None)  # made in a "cell"
    drawn: list[int] = []
    draw = panel.refresh

    def counted() -> None:
        drawn.append(len(history.entries("twice")))
        draw()

    panel.refresh = counted  # type: ignore[method-assign]
    try:
        for x in range(5):  # one cell: the loop is busy until the cell ends
            assert reg.call_sync("twice", {"x": x}).structured == 2 * x
            # listed as soon as the call returned (what %tool history reads) ...
            assert [r.value for r in history.entries("twice")][-1] == 2 * x
        assert drawn == []  # ... but no call waited for the panel to redraw
        await until(lambda: drawn, "the panel's redraw")
        await asyncio.sleep(0)
        assert drawn == [5]  # once, showing all five
        assert len(panel.rows.children) == 5
    finally:
        panel.close()
        reg.close()


async def test_a_panel_closed_before_its_redraw_is_not_redrawn() -> None:
    history = CallHistory()
    panel = HistoryPanel(history, None, lambda _arguments: None)
    drawn: list[int] = []
    panel.refresh = lambda: drawn.append(1)  # type: ignore[method-assign]
    history.record("twice", {"x": 1}, value=2)
    panel.close()
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert drawn == []


def test_without_a_running_loop_subscribers_are_told_at_once() -> None:
    history = CallHistory()
    seen: list[str] = []
    stop = history.subscribe(lambda record: seen.append(record.tool))
    history.record("twice", {"x": 1}, value=2)
    assert seen == ["twice"]
    stop()
    history.record("twice", {"x": 2}, value=4)
    assert seen == ["twice"]


def test_a_subscriber_whose_loop_stopped_is_told_at_once_and_again() -> None:
    history = CallHistory()
    seen: list[str] = []
    loop = asyncio.new_event_loop()
    try:

        async def subscribe() -> None:
            history.subscribe(lambda record: seen.append(record.tool))

        loop.run_until_complete(subscribe())  # made while the loop ran; stopped now, not closed
        history.record("first", {}, value=1)
        history.record("second", {}, value=2)
        assert seen == ["first", "second"]  # not left waiting on a loop that does not run
    finally:
        loop.close()
