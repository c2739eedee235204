"""What the person running ``nexus-tools serve`` needs to know, on stderr, at the default
log level: one line per broken source (a tool file that fails to load, a tools folder that
does not exist, an MCP server or Jupyter server that cannot be reached, tools declared in
nex.yaml that cannot run: a program that is not installed), said at start and whenever a
source breaks later, with what to do about it; the other tools that cannot run now (the
built-in ``web_search`` without a search provider), which MCP clients are not offered until
they can, with the fix; the tools MCP clients are not offered
because they are above the MCP grant (not those that cannot run anyway), those hidden by
another tool of their name and those without a description (:mod:`.tool_notes`); the number of
tools served (as a client's ``tools/list`` lists them: with ``--defer``, the eager ones, and
how many are deferred), and the MCP servers whose tools arrive after that.

    notices = ServeNotices(registry)
    notices.start()                      # the problems known now; then every change
    notices.serving("at http://127.0.0.1:8765/mcp")
    notices.stop()
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from ..core.registry.source import recovered_note
from ..sources.mcp_session import without_retry_note
from .mcp_grant import above_grant, above_grant_notice, cannot_run_now, mcp_grant, offered
from .tool_notes import hidden_line, hidden_tools, undescribed_line, undescribed_tools

__all__ = ["ServeNotices", "cannot_run", "source_problem"]

PREFIX = "nexus-tools serve"
_WAITING = ("idle", "connecting", None)


def _label(state: Any) -> str:
    """How the operator knows a source: ``MCP server 'time'``, ``tools folder tools/dynamic``."""
    kind, name = state.kind, state.name
    if name.startswith("jupyter:"):
        return f"Jupyter server {name.split(':', 1)[1]}"
    if kind == "mcp":
        return f"MCP server {name.split(':', 1)[-1]!r}"
    if kind == "directory":
        return f"tools folder {name.split(':', 1)[-1]}"
    if name == "cluster":
        return "cluster"
    if name == "manifest":
        return "the tools: of nex.yaml"
    if name.startswith("config:"):
        return f"the {name.split(':', 1)[1]}: of nex.yaml"
    return f"source {name!r}"


def cannot_run(state: Any) -> dict[str, str]:
    """The tools of a source that cannot run until the person running nexus acts (a
    program to install, a command to correct), each with the reason and its fix."""
    found = state.details.get("cannot_run") if isinstance(state.details, dict) else None
    return dict(found) if isinstance(found, dict) else {}


def source_problem(state: Any) -> str | None:
    """What is wrong with a source and how to fix it, in one line; ``None`` when it works
    (or is still on its first attempt: an MCP server that has not answered yet)."""
    label = _label(state)
    error = state.error
    if error:
        reason = without_retry_note(error)
        retrying = reason != error
        # our own SourceError's message is written for the person: its class name is noise
        reason = reason.removeprefix("SourceError: ")
        if state.name.startswith("jupyter:"):
            fix = (
                "Check that Jupyter runs there with nexus_jupyter installed (`jupyter server "
                "list`) and that --jupyter and --token are right"
                if "--token" not in reason  # a refused token says its own fix
                else ""
            )
        elif state.kind == "mcp" and "nex.yaml" not in reason and "sign in" not in reason:
            fix = "Check this server's entry under mcp.servers in nex.yaml"
        elif state.kind == "directory":
            fix = (
                "Fix each such file and save it: it loads at once (until then its last good "
                "tools are served)"
            )
        else:
            fix = ""
        advice = "; ".join(
            part for part in (fix, "nexus keeps retrying" if retrying else "") if part
        )
        advice = advice[:1].upper() + advice[1:]
        return f"{label}: {reason.rstrip('.')}." + (f" {advice}." if advice else "")
    details = state.details
    if broken := cannot_run(state):
        said = "; ".join(f"{name!r} cannot run: {why.rstrip('.')}" for name, why in broken.items())
        return f"{label}: {said}."
    if state.kind == "directory" and details.get("exists") is False:
        return (
            f"{label}: the folder {details.get('path')} does not exist, so no tool files are "
            "served from it. Create it (tool files saved there load at once), or point --dir "
            "or tools_dir in nex.yaml at your tools folder."
        )
    return None


def _checking(state: Any) -> bool:
    """A source whose tools' availability checks have not answered yet (nex.yaml's
    ``tools:`` and ``cli_tools:``: a program that is not installed is found by them)."""
    return hasattr(state.source, "publish_availability") and "checks" not in state.details


def _connecting(state: Any) -> bool:
    return state.kind == "mcp" and not state.error and state.details.get("state") in _WAITING


class ServeNotices:
    """Watches ``registry`` and writes what the operator should know to stderr (nothing
    when ``quiet``: a log level above WARNING). ``defer``: the server lists only the eager
    tools (``serve --defer``), and the counts say so."""

    def __init__(self, registry: Any, *, quiet: bool = False, defer: bool = False) -> None:
        self.registry = registry
        self.quiet = quiet
        self.defer = defer
        self._lock = threading.Lock()
        self._problems: dict[str, str] = {}  # source name -> the problem last said
        self._above: set[str] = set()  # tools said to be above the MCP grant
        self._unrunnable: set[str] = set()  # tools said to be left out until they can run
        self._hidden: set[tuple[str, str]] = set()  # (name, source) said to be hidden
        self._undescribed: set[str] = set()  # tools said to have no description
        self._pending: set[str] | None = None  # MCP servers connecting when serving began
        self._unsubscribe: Any = None

    def start(self) -> None:
        """Say the problems known now, and every change from here on."""
        self._unsubscribe = self.registry.subscribe(self._on_change)
        self.check()

    def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def serving(self, where: str) -> None:
        """The start line: how many tools MCP clients are offered, and which MCP servers
        are still connecting (each says when it connects)."""
        with self._lock:
            waiting = sorted(s.name for s in self.registry.sources() if _connecting(s))
            self._pending = set(waiting)
            listed, deferred = self._offered()
            more = f" ({deferred} more deferred: found with tool_search)" if self.defer else ""
            self._say(f"Serving {listed} tools{more} over MCP {where}")  # the URL ends it
            if waiting:
                names = ", ".join(_label(s) for s in self.registry.sources() if s.name in waiting)
                self._say(
                    f"{PREFIX}: more tools to come: {names} still connecting (a line here "
                    "says when each is connected, or what is wrong)"
                )

    # -- watching -------------------------------------------------------------------------

    def _on_change(self, change: Any) -> None:
        if change.sources or change.tools_changed:
            self.check()

    def check(self) -> None:
        """Compare the sources and tools with what was said; say what changed."""
        with self._lock:
            for state in self.registry.sources():
                self._check_source(state)
            level = mcp_grant(self.registry)
            above = set(above_grant((e.spec for e in self.registry.entries()), level))
            # a tool that cannot run is said above, with its fix: a grant would not help it;
            # one whose check has not answered yet is said once it has
            above -= {
                n
                for s in self.registry.sources()
                for n in (s.tools if _checking(s) else cannot_run(s))
            }
            if above - self._above:
                self._say(f"{PREFIX}: note: {above_grant_notice(self.registry, sorted(above))}")
            self._above = above
            self._check_unrunnable()
            self._check_tools()

    def _check_unrunnable(self) -> None:
        """Say the tools left out of the listing because they cannot run, when one is new;
        not those of a source already said to be broken (its line has the fix)."""
        said = {
            n
            for s in self.registry.sources()
            if source_problem(s) is not None or _checking(s) or _connecting(s)
            for n in s.tools
        }
        snapshot = self.registry.snapshot.entries
        names = cannot_run_now(self.registry, snapshot) - said
        if names - self._unrunnable:
            why = "; ".join(
                f"{n} ({str(snapshot[n].reason or 'unavailable').rstrip('.')})"
                for n in sorted(names)
            )
            self._say(f"{PREFIX}: note: cannot run, so not offered to MCP clients yet: {why}.")
        self._unrunnable = names

    def _check_tools(self) -> None:
        """Say the tools hidden by another of their name, and those without a description,
        when one is new (each kind in one line)."""
        entries = list(self.registry.entries())
        hidden = hidden_tools(entries)
        keys = {(h.name, h.loser.source) for h in hidden}
        if keys - self._hidden:
            self._say(f"{PREFIX}: note: {hidden_line(hidden)}")
        self._hidden = keys
        bare = undescribed_tools(entries)
        names = {s.name for s in bare}
        if names - self._undescribed:
            self._say(f"{PREFIX}: note: {undescribed_line(bare)}")
        self._undescribed = names

    def _check_source(self, state: Any) -> None:
        name = state.name
        problem = source_problem(state)
        said = self._problems.get(name)
        if problem is not None:
            if problem != said:
                self._problems[name] = problem
                self._say(f"{PREFIX}: warning: {problem}")
            return
        if _connecting(state):
            return  # an MCP server between attempts: not fixed yet, not broken anew
        ready = state.kind == "mcp" and state.details.get("state") == "ready"
        if ready and self._pending is not None and (said or name in self._pending):
            self._pending.discard(name)
            self._say(
                f"{PREFIX}: {_label(state)} connected: {len(state.tools)} tools; "
                f"{self._offered_now()} are served now"
            )
        elif said:
            back = recovered_note(state.source)
            self._say(f"{PREFIX}: {_label(state)}" + (f": {back}" if back else " works again"))
        self._problems.pop(name, None)

    def _offered(self) -> tuple[int, int]:
        """How many tools MCP clients are listed (not those above the grant; with ``defer``
        only the eager ones and tool_search), and how many more are deferred."""
        listed, deferred = offered(self.registry, mcp_grant(self.registry), defer=self.defer)
        return len(listed), len(deferred)

    def _offered_now(self) -> str:
        listed, deferred = self._offered()
        return f"{listed} tools" + (f" (and {deferred} deferred)" if self.defer else "")

    def _say(self, line: str) -> None:
        if not self.quiet:
            print(line, file=sys.stderr, flush=True)  # sys.stderr now: it may be masked
