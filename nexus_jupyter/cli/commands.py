"""The commands of ``nexus-tools`` (see :mod:`nexus_jupyter.cli.main`); each is a thin shim over
the public Python API and returns an exit code."""

from __future__ import annotations

import argparse
import contextlib
import difflib
import getpass
import importlib.util
import json
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import ApprovalRequired
from ..core.registry.filters import filter_matches
from ..core.tools.context import CLI_CALLER, RequestInfo
from ..render.catalog import no_hits_text, scored_down_text
from ..render.results import content_text
from .main import UsageProblem
from .output import stdout, tools_print_to_stderr

__all__ = [
    "cmd_call",
    "cmd_check",
    "cmd_info",
    "cmd_list",
    "cmd_search",
    "credentials",
    "one_shot_registry",
    "open_registry",
    "parse_call_arguments",
]

_DIRECTORY = "nexus_jupyter.sources.directory"


def _print_json(data: Any) -> None:
    _say(json.dumps(data, indent=2, default=str, ensure_ascii=False))


def _say(text: str = "") -> None:
    """A line of the command's own output (stdout; what tools print goes to stderr)."""
    print(text, file=stdout())


@contextlib.contextmanager
def open_registry(args: argparse.Namespace, *, quiet_load_failures: bool = False) -> Iterator[Any]:
    """The configured registry of ``--root``/``--config``, its tools folder loaded once
    (not watched), MCP servers connected and CLI checks done (up to ``--wait`` s). What
    tool files print while they load goes to stderr. ``quiet_load_failures``: the command
    says each broken source itself (see :class:`~nexus_jupyter.core.registry.Registry`)."""
    with contextlib.ExitStack() as stack:
        with tools_print_to_stderr():
            opened = one_shot_registry(
                Path(args.root), args.config, args.wait, quiet_load_failures=quiet_load_failures
            )
            reg = stack.enter_context(opened)
        yield reg


@contextlib.contextmanager
def one_shot_registry(
    root: Path, config: Any = None, wait: float = 15.0, *, quiet_load_failures: bool = False
) -> Iterator[Any]:
    """The registry of a one-shot command (the CLI, a pytest run): ``Registry.default`` of
    ``root`` with its tools folder loaded once, not watched, and every source settled (up to
    ``wait`` s)."""
    from ..core.config.paths import resolve_tools_dir
    from ..core.registry.registry import Registry

    root = root.resolve()
    reg = Registry.default(
        root=root, config=config, watch=False, quiet_load_failures=quiet_load_failures
    )
    try:
        folder = resolve_tools_dir(root, reg.settings.tools_dir)
        if folder.is_dir() and importlib.util.find_spec(_DIRECTORY) is not None:
            from ..sources.directory import DirectorySource

            # nex.yaml's `isolation: process` runs the files in worker processes here too
            isolation = getattr(reg.settings, "isolation", "auto")
            where = "process" if isolation == "process" else "thread"
            reg.add_source(DirectorySource(folder, isolation=where), start=False)
        _wait_for_sources(reg, wait)
        _recheck_references(reg)
        yield reg
    finally:
        reg.close()


def _settled(state: Any) -> bool:
    """Whether a source has finished its first attempt (see :func:`.list_gate.settled`)."""
    from ..serve.list_gate import settled

    return settled(state)


def _unsettled(state: Any, wait: float) -> str:
    """Why ``check`` counts a source that is still on its first attempt as broken: it may
    never answer (a server that hangs while starting is not an error of its own)."""
    if state.kind == "mcp":
        return (
            f"the server did not answer within {wait:g} s (still connecting): check that it "
            "starts, or give it longer with --wait"
        )
    return f"its checks did not finish within {wait:g} s: give them longer with --wait"


def _wait_for_sources(reg: Any, limit: float) -> None:
    """Wait (on change events, with a deadline) until every MCP server answered or failed
    and every CLI check finished."""
    changed = threading.Event()
    unsubscribe = reg.subscribe(lambda _change: changed.set())
    deadline = time.monotonic() + limit
    try:
        while not all(_settled(s) for s in reg.sources()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            changed.wait(remaining)
            changed.clear()
    finally:
        unsubscribe()


def _recheck_references(reg: Any) -> None:
    """Declared tools that forward to an MCP server's tool take its schema and availability
    from the server's answer; the change event that carries it may still be on its way."""
    from ..core.registry.publisher import SourcePublisher
    from ..sources.maintenance import declared_source

    declared = declared_source(reg)
    if declared is not None:
        declared.refresh_references(SourcePublisher(reg, declared.name))


# -- list / search / info -----------------------------------------------------------------


def _row(entry: Any) -> dict[str, Any]:
    spec = entry.spec
    return {
        "name": spec.name,
        "permission": spec.permission,
        "source": spec.source,
        "status": entry.status,
        "reason": entry.reason,
        "summary": spec.summary,
    }


def _table(rows: list[dict[str, Any]], columns: list[str]) -> None:
    if not rows:
        _say("(none)")
        return
    widths = {c: max(len(c), *(len(str(r.get(c) or "")) for r in rows)) for c in columns[:-1]}
    _say("  ".join(c.upper().ljust(widths.get(c, 0)) for c in columns).rstrip())
    for r in rows:
        cells = [str(r.get(c) or "").ljust(widths.get(c, 0)) for c in columns[:-1]]
        _say("  ".join([*cells, str(r.get(columns[-1]) or "")]).rstrip())


def cmd_list(reg: Any, args: argparse.Namespace) -> int:
    filters = {
        "source": args.source,
        "permission": args.permission,
        "category": args.category,
        "capability": args.capability,
    }
    if args.available:
        filters["available"] = True
    _check_list_filters(reg, args)
    rows = [_row(e) for e in reg.entries(**{k: v for k, v in filters.items() if v is not None})]
    if args.json:
        _print_json(rows)
    else:
        for r in rows:
            if r["status"] != "ok":
                r["summary"] = f"[{r['status']}: {r['reason']}] {r['summary']}"
        _table(rows, ["name", "permission", "source", "summary"])
    return _report_broken_sources(reg, args.source, args.wait)


def _check_list_filters(reg: Any, args: argparse.Namespace) -> None:
    """A ``--source``, ``--category`` or ``--capability`` that names nothing here is a
    mistake (a typo), not an empty listing: say so, with the close or known values."""
    everything = reg.entries()
    sources = {v for e in everything for v in (e.spec.source, e.spec.source_kind)}
    for state in reg.sources():  # also a source with no tools (a broken MCP server)
        sources |= {state.name, state.kind, state.name.split(":", 1)[0]}
    known = {
        "source": sources,
        "category": {c for e in everything for c in e.spec.categories},
        "capability": {c for e in everything for c in e.spec.capabilities},
    }
    for option, values in known.items():
        wanted = getattr(args, option)
        if wanted is None or any(filter_matches(value, wanted) for value in values):
            continue
        close = difflib.get_close_matches(wanted, sorted(values), n=1, cutoff=0.6)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        if not values:
            raise UsageProblem(
                f"no tool here has a {option}, so --{option} {wanted} matches nothing; "
                f"leave --{option} out."
            )
        plural = "categories" if option == "category" else f"{option}s"
        raise UsageProblem(
            f"--{option} {wanted}: there is no such {option}.{hint} "
            f"Known {plural}: {', '.join(sorted(values))}."
        )


def _source_error(error: str | None) -> str | None:
    """A source's error as a one-shot command shows it (no "reconnecting in 0.25 s")."""
    from ..sources.mcp_session import without_retry_note

    return without_retry_note(error) if error else error


def _missing_tools_dir(reg: Any) -> tuple[str, bool, Path] | None:
    """:func:`~nexus_jupyter.core.config.paths.tools_dir_problem` of ``reg``'s project."""
    from ..core.config.paths import tools_dir_problem

    settings = reg.settings
    configured = getattr(settings, "tools_dir", None) if settings is not None else None
    return tools_dir_problem(getattr(reg, "root", None) or Path.cwd(), configured)


def _report_broken_sources(reg: Any, wanted: str | None, wait: float) -> int:
    """Every broken source, and every one still on its first attempt after ``wait`` s, on
    stderr (a listing must not look complete when it is not); 1 when the listing was asked
    for such a source (its tools are missing). Also each declared tool that cannot run
    until someone acts (a program to install), with the fix."""
    code = 0
    from ..core.toolsets.overview import settings_problems

    if wanted is None or wanted in ("directory", "toolset"):  # (not when another is asked)
        missing = _missing_tools_dir(reg)
        if missing is not None and missing[1]:
            print(f"nexus-tools: warning: {missing[0]}", file=sys.stderr)
        for problem in settings_problems(reg):
            print(f"nexus-tools: warning: {problem}", file=sys.stderr)
    for state in reg.sources():
        details = state.details if isinstance(state.details, dict) else {}
        for name, why in dict(details.get("cannot_run") or {}).items():
            print(
                f"nexus-tools: warning: source {state.name}: {name!r} cannot run: {why}",
                file=sys.stderr,
            )
        if state.error is not None:
            why = _source_error(state.error)
        elif not _settled(state):
            why = _unsettled(state, wait)
        else:
            continue
        print(f"nexus-tools: warning: source {state.name}: {why}", file=sys.stderr)
        if wanted in (state.name, state.kind, state.name.split(":", 1)[0]):
            code = 1
    return code


_COUNTED = 100  # `search` counts the matches up to this many


def cmd_search(reg: Any, args: argparse.Namespace) -> int:
    if args.limit < 1:
        raise UsageProblem(f"--limit must be at least 1, got {args.limit!r}.")
    # one pass for the rows shown and how many match in all (counted up to a cap: a large
    # catalogue's search costs more the more candidates it is asked for)
    counted = max(args.limit + 1, _COUNTED)
    found = reg.search_results(args.query, limit=counted)
    total = len(found.hits)
    entries = reg.snapshot.entries
    rows = [
        {
            "name": h.name,
            "score": round(h.score, 4),
            "summary": h.spec.summary,
            "matched": list(h.matched),
            "status": entry.status if entry is not None else "ok",
            "reason": entry.reason if entry is not None else None,
        }
        for h in found.hits[: args.limit]
        for entry in [entries.get(h.name)]
    ]
    for row in rows:  # a hit that cannot run now says so, as `list` does
        if not args.json and row["status"] != "ok":
            row["summary"] = f"[{row['status']}: {row['reason']}] {row['summary']}"
    unserved = list(found.unserved)
    # the notes go to stderr, with --json too: the JSON rows on stdout stay a plain list
    if found.respelled:
        print(f"searched for: {found.searched_for}", file=sys.stderr)
    if args.json:
        _print_json(rows)
    elif rows:
        _table(rows, ["name", "score", "summary"])
    if not rows:
        print(no_hits_text(args.query, unserved), file=sys.stderr)
    elif unserved:
        print(scored_down_text(unserved), file=sys.stderr)
    if total > len(rows):  # the listing was cut at --limit: say how to see the rest
        what = "tools" if not args.query.strip() else "tools that match"
        if total < counted:
            how = f"{total} {what}; `--limit {total}` shows them all"
        else:
            how = f"{total}+ {what}; a larger `--limit` shows more"
        print(f"showing {len(rows)} of {how}.", file=sys.stderr)
    return 0


def cmd_info(reg: Any, args: argparse.Namespace) -> int:
    entry = reg.entry(args.name)
    data = entry.to_dict()
    if args.json:
        _print_json(data)
        return 0
    from ..sources.versions import shown_version

    shown = shown_version(entry.spec)  # a file's saved version: what `rollback` takes
    _say(f"{data['name']}  ({data['permission']}, from {data['source']}, {shown})")
    _say(f"status: {data['status']}" + (f" -- {data['reason']}" if data["reason"] else ""))
    if data["requires_credentials"]:
        _say("credentials: " + ", ".join(data["requires_credentials"]))
    _say()
    _say(data["description"] or "(no description)")
    _say()
    _say("input schema:")
    _say(json.dumps(data["input_schema"], indent=2))
    return 0


# -- call ---------------------------------------------------------------------------------


def parse_call_arguments(items: list[str], schema: Any = None, tool: str = "") -> dict[str, Any]:
    """One JSON object, or ``key=value`` pairs: values parsed as JSON when they parse, but
    kept as typed for a parameter that ``schema`` (the tool's input schema) says is a
    string (see :mod:`.call_args`)."""
    from .call_args import parse_call_arguments as parse_for_schema

    return parse_for_schema(items, schema, tool)


def cmd_call(reg: Any, args: argparse.Namespace) -> int:
    if args.timeout is not None and not args.timeout > 0:
        raise UsageProblem(
            f"--timeout must be a positive number of seconds, got {args.timeout:g}; "
            "leave it out to wait as long as the tool takes."
        )
    tool = reg.find(args.name)  # a missing one: the call below says so, with close names
    schema = tool.spec.input_schema if tool is not None else None
    arguments = parse_call_arguments(args.arguments, schema, args.name)
    request = RequestInfo(caller=CLI_CALLER)
    try:
        result = reg.call_sync(
            args.name, arguments, request=request, timeout=args.timeout, approved=args.yes
        )
    except ApprovalRequired as exc:
        if not sys.stdin.isatty():
            raise  # its message says how to approve from the command line (--yes)
        answer = input(f"{exc}\nApprove this call of {args.name!r}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nexus-tools: error: the call was not approved.", file=sys.stderr)
            return 1
        result = reg.call_sync(
            args.name, arguments, request=request, timeout=args.timeout, approved=True
        )
    result = result.redacted()  # what a terminal shows never holds a secret
    if not args.json and not result.is_error:  # on stderr: stdout stays the result alone
        print(f"> {result.summary}", file=sys.stderr)
    if args.json:
        _print_json(result.to_dict())
    elif not result.is_error and (shown := _result_text(result)):
        _say(shown)
    if result.is_error:
        message = " ".join(str(result.error).split())
        print(
            f"nexus-tools: error: {args.name} failed ({result.summary}): "
            f"{result.error_type}: {message}",
            file=sys.stderr,
        )
        return 1
    return 0


def _result_text(result: Any) -> str:
    """What a terminal shows of a result: its structured value (a string as it is, anything else
    as JSON), or, when it has none (most MCP tools), its content as text."""
    value = result.structured
    if isinstance(value, str):
        return value
    if value is None:
        return content_text(result.content)
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


# -- check --------------------------------------------------------------------------------


def _file_errors(details: Any) -> list[str]:
    """``"file: message (line N)"`` for each file of a folder source that failed to load."""
    files = details.get("files") if isinstance(details, dict) else None
    return [
        f"{name}: {f['message']}" + (f" (line {f['line']})" if f.get("line") else "")
        for name, f in sorted((files or {}).items())
        if isinstance(f, dict) and f.get("status") == "error"
    ]


def cmd_check(reg: Any, args: argparse.Namespace) -> int:
    """Every source loaded now (a folder's per-file errors included); exit code 1 when a
    source is broken."""
    from ..core.toolsets.overview import settings_problems

    for state in reg.sources():
        rescan = getattr(state.source, "rescan", None)
        if callable(rescan):  # a folder publishes its per-file errors when scanned
            rescan(registry=reg)
    tools = [_row(e) for e in reg.entries()]
    sources = [
        {
            "name": s.name,
            "kind": s.kind,
            "status": s.status if _settled(s) else "error",
            "error": _source_error(s.error) if _settled(s) else _unsettled(s, args.wait),
            "tools": len(s.tools),
            "details": s.details,
        }
        for s in reg.sources()
    ]
    report = {
        "tools": tools,
        "sources": sources,
        "credentials": reg.credentials.list() if reg.credentials is not None else {},
        "config_files": list(reg.settings.files) if reg.settings is not None else [],
        "notes": _tool_notes(reg) + settings_problems(reg),
    }
    missing = _missing_tools_dir(reg)
    if missing is not None:
        said, chosen, _folder = missing
        if chosen:  # the folder the settings name: its tools are missing
            sources.append(
                {"name": f"directory:{missing[2]}", "kind": "directory", "status": "error"}
                | {"error": said}
                | {"tools": 0, "details": {"exists": False}}
            )
        else:
            report["notes"].append(said)
    broken = [s for s in sources if s["status"] == "error"]
    failing = _add_test_status(reg, args, tools, report)
    serve_problem = _serve_problem(reg)
    report["serve"] = {"error": serve_problem}
    if args.json:
        _print_json(report)
        return 1 if broken or failing or serve_problem else 0
    _say("Sources:")
    for s in sources:
        state = s["details"].get("state") if isinstance(s["details"], dict) else None
        count = (f"{state}, " if state else "") + f"{s['tools']} tools"
        s["info"] = count + (" (errors below)" if _file_errors(s["details"]) else "")
        if s["error"] and not _file_errors(s["details"]):
            s["info"] = s["error"]
    _table(sources, ["name", "kind", "status", "info"])
    for s in broken:
        for line in _file_errors(s["details"]):
            _say(f"  {s['name']}: {line}")
    _say("\nTools:")
    for t in tools:
        t["info"] = t["reason"] if t["status"] != "ok" else "available"
    _table(tools, ["name", "source", "status", "tests", "info"])
    bad = sum(1 for t in tools if t["status"] != "ok")
    _say(f"\n{len(tools) - bad} of {len(tools)} tools available.")
    for line in report["notes"]:
        _say(f"  note: {line}")
    for t in failing:
        _say(f"  {t['name']}: tests {t['tests_detail']}")
    if failing:
        _say(f"{len(failing)} tool(s) fail their tests; see above (`nexus-tools test NAME`).")
    if broken:
        _say(f"{len(broken)} source(s) broken; fix the errors above.")
    if serve_problem:
        _say(f"`nexus-tools serve` settings: {serve_problem}")
    return 1 if broken or failing or serve_problem else 0


def _serve_problem(reg: Any) -> str | None:
    """What is wrong with nex.yaml's ``serve:`` settings (``serve --transport http`` would
    refuse to start), with the file and line."""
    from ..serve.cli_serve_auth import serve_settings_problem

    return serve_settings_problem(reg.settings) if reg.settings is not None else None


def _tool_notes(reg: Any) -> list[str]:
    """What to know about the tools themselves: each one another tool of the same name
    hides (it can never be called, which is rarely what was meant) and each one without a
    description (an agent cannot tell what it does)."""
    from ..serve.tool_notes import hidden_note, hidden_tools, undescribed_note, undescribed_tools

    entries = list(reg.entries())
    return [hidden_note(h) for h in hidden_tools(entries)] + [
        undescribed_note(spec) for spec in undescribed_tools(entries)
    ]


def _add_test_status(
    reg: Any, args: argparse.Namespace, tools: list[dict[str, Any]], report: dict[str, Any]
) -> list[dict[str, Any]]:
    """Run the tools' test cases (unless ``--no-tests``) and put each one's state in its
    row; returns the rows of tools whose tests fail or cannot be read."""
    if getattr(args, "no_tests", False):
        return []
    from .cmd_tests import test_rows

    statuses = test_rows(reg)
    report["tests"] = {name: status.to_dict() for name, status in statuses.items()}
    failing = []
    for row in tools:
        status = statuses.get(row["name"])
        row["tests"] = status.state if status is not None else "-"
        if status is not None and status.state in ("failed", "error"):
            row["tests_detail"] = status.summary()
            failing.append(row)
    return failing


# -- credentials --------------------------------------------------------------------------


def credentials(args: argparse.Namespace) -> int:
    from ..core.policy.credentials import CredentialStore

    store = CredentialStore()
    if args.action == "list":
        rows = store.describe()
        if args.json:
            _print_json(rows)
        else:
            _table(rows, ["service", "key", "provider"])
        return 0
    if args.action == "delete":
        if not store.delete(args.service, args.key, provider=args.provider):
            what = f"{args.service}/{args.key}" if args.key else args.service
            raise UsageProblem(
                f"No stored credential {what!r}; see `nexus-tools credentials list`."
            )
        _say(f"Deleted {args.service}" + (f"/{args.key}" if args.key else ""))
        return 0
    if sys.stdin.isatty():
        value = getpass.getpass(f"Value for {args.service}/{args.key} (not shown): ")
    else:
        value = sys.stdin.readline().rstrip("\r\n")
    if not value:
        raise UsageProblem("No value given; type it at the prompt or pipe it on stdin.")
    provider = store.set(args.service, args.key, value, provider=args.provider)
    _say(f"Stored {args.service}/{args.key} in {provider}.")
    return 0
