"""Run the official MCP conformance suite (npm ``@modelcontextprotocol/conformance``, pinned
in ``package.json`` with the Node 22 it needs) against a server, and read its verdicts.

    scenarios = required_scenarios("2025-11-25")           # what the revision requires
    outcomes = run_server_scenarios(url, "2025-11-25", out_dir)
    outcomes["tools-list"].passed, outcomes["tools-list"].failures
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE = HERE / "node_modules" / ".bin" / "node"
SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"

REVISIONS = ("2025-11-25", "2026-07-28")


@dataclass(frozen=True, slots=True)
class Outcome:
    """One scenario's checks: passed when none failed."""

    scenario: str
    checks: int
    failures: tuple[str, ...] = field(default=())

    @property
    def passed(self) -> bool:
        return not self.failures


def installed() -> bool:
    return NODE.exists() and SUITE.exists()


def _run(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(NODE), str(SUITE), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=HERE,
    )


def required_scenarios(revision: str, side: str = "Server") -> list[str]:
    """The ``side`` ("Server" or "Client") scenarios the suite says ``revision`` requires
    (its own frozen list)."""
    listing = _run("list", "--requirements", revision, timeout=60).stdout
    names: list[str] = []
    in_side = False
    for line in listing.splitlines():
        if line.startswith(f"{side} scenarios"):
            in_side = True
        elif line and not line.startswith(" "):
            in_side = False
        elif in_side and (m := re.match(r"\s+- (\S+)", line)):
            names.append(m.group(1))
    if not names:
        raise RuntimeError(f"the conformance suite listed no scenarios for {revision}:\n{listing}")
    return names


def _outcome(scenario: str, checks_file: Path) -> Outcome:
    checks = json.loads(checks_file.read_text())
    failures = tuple(
        f"{c.get('id')}: {c.get('errorMessage') or 'failed'}"
        for c in checks
        if c.get("status") == "FAILURE"
    )
    return Outcome(scenario, len(checks), failures)


#: How long the suite lets our client run a scenario (its default is 30 s): a scenario takes
#: 2-7 s alone, but a loaded CI machine once ran out of the 30 s mid-way through a second
#: sign-in (auth/scope-step-up), which read as a missing check, not as a timeout.
CLIENT_TIMEOUT_MS = 90_000


def run_client_scenario(command: str, scenario: str, revision: str, out_dir: Path) -> Outcome:
    """Run one client scenario: the suite starts its mock server and runs ``command URL``.
    A failed scenario's outcome ends with what the suite printed about the client (its exit
    code, a timeout, its stderr)."""
    done = _run(
        *("client", "--command", command, "--scenario", scenario),
        *("--spec-version", revision, "-o", str(out_dir)),
        *("--timeout", str(CLIENT_TIMEOUT_MS)),
        timeout=CLIENT_TIMEOUT_MS / 1000 + 30,
    )
    found = sorted(out_dir.rglob("checks.json"))  # auth/X scenarios write auth/X-<time>/
    if not found:
        return Outcome(scenario, 0, (f"no results: {done.stdout[-500:]} {done.stderr[-500:]}",))
    outcome = _outcome(scenario, found[-1])
    if outcome.passed:
        return outcome
    said = f"suite output: {done.stderr[-700:].strip() or done.stdout[-700:].strip()}"
    return Outcome(scenario, outcome.checks, (*outcome.failures, said))


def run_server_scenarios(url: str, revision: str, out_dir: Path) -> dict[str, Outcome]:
    """Run every scenario the suite runs for ``revision`` against ``url``; one
    :class:`Outcome` per scenario, read from the ``checks.json`` files it writes."""
    done = _run("server", "--url", url, "--requirements", revision, "-o", str(out_dir), timeout=900)
    outcomes: dict[str, Outcome] = {}
    for checks_file in sorted(out_dir.glob("server-*/checks.json")):
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks_file.parent.name)
        outcomes[scenario] = _outcome(scenario, checks_file)
    if not outcomes:
        raise RuntimeError(
            f"the conformance suite produced no results:\n{done.stdout}\n{done.stderr}"
        )
    return outcomes
