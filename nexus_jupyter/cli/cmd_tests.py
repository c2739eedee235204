"""``nexus-tools test | eval | stats``: tool tests, retrieval evals and call statistics.

    nexus-tools test [NAME ...] [--json] [--junit FILE] [--yes]
    nexus-tools eval QUERIES.yaml|json [--mode keyword|hybrid] [--catalog FILE] [--json]
    nexus-tools stats [NAME ...] [--since 1h] [--audit FILE] [--json]

``test`` runs the saved cases (``<tool file>.tests.yaml`` beside each tool file, and
``<tools folder>/<tool>.tests.yaml`` for other tools) through the registry; exit 1 when one
fails, errors or cannot be read. ``--junit`` writes a JUnit XML report for CI.

``eval`` ranks the registry's tools (or a ``--catalog`` file's) for labelled queries and
prints recall@1/@5, MRR, how many unservable and servable queries got no hits, the misses
and the confusable pairs.

``stats``: a command line process makes no calls worth counting on its own, so the figures
come from the audit log every face appends to (the kernel, the Jupyter server, ``serve``,
``call``): calls, errors, refusals and p50/p95 latency per tool, over the whole log or
``--since`` a time. ``%tool stats`` and the sidebar show the live figures of their process.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from .main import UsageProblem
from .output import stdout

__all__ = ["COMMANDS", "add_parsers", "run", "test_rows"]

COMMANDS = ("test", "eval", "stats")
_SINCE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")


def add_parsers(sub: Any, shared: Sequence[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "test", help="run the tools' saved test cases (exit 1 on a failure)", parents=shared
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="only these tools' cases")
    p.add_argument("--junit", metavar="FILE", help="also write a JUnit XML report (for CI)")
    p.add_argument(
        "--yes", "-y", action="store_true", help="run cases whose tools ask for approval"
    )

    p = sub.add_parser(
        "eval", help="measure search on labelled queries (recall, MRR, misses)", parents=shared
    )
    p.add_argument("queries", metavar="QUERIES", help="a JSON or YAML list of {query, relevant}")
    p.add_argument(
        "--mode",
        type=_modes,
        help="keyword, hybrid, or keyword,hybrid for both (default: the configured mode)",
    )
    p.add_argument("--catalog", metavar="FILE", help="rank this catalog file's tools instead")
    p.add_argument("--misses", type=int, default=20, help="misses to print (default 20)")

    p = sub.add_parser(
        "stats", help="calls, errors and latency per tool, from the audit log", parents=shared
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="only these tools")
    p.add_argument("--since", help="only calls since: 30m, 12h, 7d, or an ISO date/time")
    p.add_argument("--audit", metavar="FILE", help="the audit log (default: nex.yaml's audit)")


def run(args: argparse.Namespace) -> int:
    if args.command == "eval":
        return _eval(args)
    if args.command == "stats":
        return _stats(args)
    from .commands import open_registry
    from .output import masked_output, tools_print_to_stderr

    # cases call tools, and what they print must not land in the report (`--json` parses)
    with tools_print_to_stderr(), open_registry(args) as reg:
        store = getattr(reg, "credentials", None)
        with masked_output(store.mask if store is not None else None):
            return _test(reg, args)


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str, ensure_ascii=False), file=stdout())


# -- test ---------------------------------------------------------------------------------


def _test(reg: Any, args: argparse.Namespace) -> int:
    from ..core.tools.context import CLI_CALLER
    from ..core.tooltests.junit import write_junit
    from ..render.tool_tests import report_text

    names = args.names or None
    report = reg.tests.run(names, approved=args.yes, caller=CLI_CALLER)
    if args.junit:
        write_junit(report, args.junit)
    if args.json:
        _print_json(report.to_dict())
    else:
        print(report_text(report, face="cli"), file=stdout())
    if names:
        untested = [n for n in names if not any(o.case.tool == n for o in report.outcomes)]
        untested = [n for n in untested if reg.tests.status(n).state == "none"]
        if untested:
            print(
                f"nexus-tools: error: no test cases for {', '.join(untested)}; save one with "
                "`%tool test save NAME {args} --expect VALUE` or write <tool file>.tests.yaml.",
                file=sys.stderr,
            )
            return 1
    return 0 if report.ok else 1


def test_rows(reg: Any) -> dict[str, Any]:
    """Run every tool's cases (for ``check``); tool name -> its status."""
    from ..core.tools.context import CLI_CALLER

    reg.tests.run(caller=CLI_CALLER, strays=False)  # `test` reports cases of missing tools
    return reg.tests.statuses()


# -- eval ---------------------------------------------------------------------------------


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    wrong = [m for m in modes if m not in ("keyword", "hybrid")]
    if wrong or not modes:
        raise argparse.ArgumentTypeError(
            f"unknown search mode {(wrong or [text])[0]!r}; use keyword, hybrid or keyword,hybrid"
        )
    return modes


def _eval(args: argparse.Namespace) -> int:
    from ..core.evals.queries import load_queries
    from ..core.evals.retrieval import evaluate
    from ..render.evals import eval_text

    queries = load_queries(args.queries)
    modes: list[str | None] = list(args.mode) if args.mode else [None]
    if args.catalog:
        from ..sources.catalog_file import registry_from_catalog

        opened: Any = contextlib.closing(
            registry_from_catalog(args.catalog, search=modes[0] or "auto")
        )
    else:
        from .commands import open_registry

        opened = open_registry(args)
    with opened as reg:
        reports = [evaluate(reg, queries, mode=mode) for mode in modes]
    if args.json:
        data = [r.to_dict() for r in reports]
        _print_json(
            data[0] if len(data) == 1 else {r.mode: d for r, d in zip(reports, data, strict=True)}
        )
    else:
        print("\n\n".join(eval_text(r, misses=args.misses) for r in reports))
    return 0


# -- stats --------------------------------------------------------------------------------


def _since(text: str | None) -> float | None:
    if not text:
        return None
    found = _SINCE.match(text.strip())
    if found:
        seconds = float(found.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[found.group(2)]
        return time.time() - seconds
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UsageProblem(
            f"--since takes 30m, 12h, 7d or an ISO date/time such as 2026-11-25T09:00, "
            f"got {text!r}."
        ) from None
    return when.astimezone().timestamp() if when.tzinfo is None else when.timestamp()


def _audit_path(args: argparse.Namespace) -> Path:
    if args.audit:
        return Path(args.audit).expanduser()
    from ..app import resolve_settings
    from ..core.config.loading import nexus_home

    settings = resolve_settings(Path(args.root).resolve(), args.config)
    if settings.audit is False:
        raise UsageProblem(
            "The audit log is off (audit: false in nex.yaml), so there are no recorded calls; "
            "turn it on, or give a log with --audit FILE."
        )
    return nexus_home() / "audit.jsonl" if settings.audit is True else Path(str(settings.audit))


def _audit_lines(path: Path, since: float | None, names: set[str]) -> Iterator[dict[str, Any]]:
    from ..core.telemetry.stats import parse_time

    with path.open(encoding="utf-8", errors="replace") as lines:
        for raw in lines:
            try:
                line = json.loads(raw)
            except ValueError:
                continue  # a line cut by a crash: skip it, as a reader of a log should
            if not isinstance(line, dict) or (names and line.get("tool") not in names):
                continue
            if since is not None and (parse_time(line.get("time")) or 0) < since:
                continue
            yield line


def _stats(args: argparse.Namespace) -> int:
    from ..core.telemetry.stats import stats_from_calls
    from ..render.tool_tests import stats_text

    path = _audit_path(args).expanduser()
    if not path.exists():
        raise UsageProblem(
            f"No audit log at {path} yet: no call has been recorded. Calls from the notebook, "
            "the Jupyter server, `nexus-tools call` and `serve` are appended to it."
        )
    stats = stats_from_calls(_audit_lines(path, _since(args.since), set(args.names)))
    if args.json:
        _print_json({name: s.to_dict() for name, s in stats.items()})
        return 0
    since = f" since {args.since}" if args.since else ""
    if not stats and args.names:  # calls of other tools may be there: say whose were asked
        asked = ", ".join(args.names)
        print(f"No calls of {asked} recorded in {path}{since}.")
        return 0
    print(stats_text(stats, title=f"Calls recorded in {path}{since}"))
    return 0
