"""The official MCP conformance suite against a live ``nexus-tools serve --transport http``
serving ``examples/conformance`` (ordinary nexus tool files).

For each protocol revision the suite runs exactly the server scenarios that revision requires
(``--requirements``). A required scenario that fails fails this test unless it is listed, with
its reason, in ``known_failures.py``; a listed scenario that passes fails it too, so the list
stays honest. The pass table is printed either way.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conformance_suite import (
    REVISIONS,
    Outcome,
    installed,
    required_scenarios,
    run_client_scenario,
    run_server_scenarios,
)
from known_failures import KNOWN_CLIENT_FAILURES, KNOWN_FAILURES
from serving import serve_http  # tests/ is on sys.path (rootdir conftest)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "examples" / "conformance"
#: The suite runs the tasks extension's scenarios without scoring them; nexus implements it.
IMPLEMENTED_EXTENSION_PREFIX = "tasks-"

pytestmark = pytest.mark.skipif(
    not installed(),
    reason="the MCP conformance suite is not installed: run `make npm-deps` "
    "(npm ci in tests/conformance)",
)


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``nexus-tools serve --transport http --port 0 --dir examples/conformance``."""
    project = tmp_path_factory.mktemp("conformance-project")
    with serve_http(
        project, "--root", str(project), "--dir", str(FIXTURES), clean_stop=True
    ) as served:
        yield served.url


def table(revision: str, required: list[str], outcomes: dict[str, Outcome]) -> list[str]:
    known = KNOWN_FAILURES[revision]
    passed = sum(outcomes[s].passed for s in required if s in outcomes)
    rows = [f"MCP conformance {revision}: {passed}/{len(required)} required server scenarios pass"]
    for scenario in required:
        outcome = outcomes.get(scenario)
        if outcome is None:
            rows.append(f"  ?  {scenario}: not run")
        elif outcome.passed:
            rows.append(f"  ok {scenario}")
        else:
            why = known.get(scenario, "UNEXPECTED: " + "; ".join(outcome.failures))
            rows.append(f"  xx {scenario}: {why}")
    extra = sorted(set(outcomes) - set(required))
    if extra:
        shown = ", ".join(f"{s} {'ok' if outcomes[s].passed else 'xx'}" for s in extra)
        rows.append(f"  not scored: {shown}")
    return rows


@pytest.mark.parametrize("revision", REVISIONS)
def test_required_scenarios(
    revision: str, server_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    required = required_scenarios(revision)
    outcomes = run_server_scenarios(server_url, revision, tmp_path)
    with capsys.disabled():  # the table is the point: show it on success too
        print("\n" + "\n".join(table(revision, required, outcomes)))
    known = KNOWN_FAILURES[revision]
    unexpected = [
        f"{s}: " + ("not run" if s not in outcomes else "; ".join(outcomes[s].failures))
        for s in required
        if s not in known and (s not in outcomes or not outcomes[s].passed)
    ]
    now_passing = [s for s in known if s in outcomes and outcomes[s].passed]
    stale = [s for s in known if s not in required]
    # Not scored (an extension), but implemented: the tasks extension's scenarios must pass.
    extension = [s for s in outcomes if s.startswith(IMPLEMENTED_EXTENSION_PREFIX)]
    unexpected += [
        f"{s}: " + "; ".join(outcomes[s].failures) for s in extension if not outcomes[s].passed
    ]
    assert not unexpected, "required scenarios fail:\n" + "\n".join(unexpected)
    assert not now_passing, f"these pass now: remove them from known_failures.py: {now_passing}"
    assert not stale, f"not required for {revision}: remove them from known_failures.py: {stale}"


CLIENT = Path(__file__).resolve().parent / "nexus_client.py"
#: Client scenarios run at once (each starts the suite, its mock servers and the client).
CLIENT_SCENARIOS_AT_ONCE = 4


@pytest.mark.timeout(900)  # ~7 s a scenario, 18 and 32 scenarios, one after the other
@pytest.mark.parametrize("revision", REVISIONS)
def test_client_scenarios(
    revision: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The suite's client scenarios against the nexus MCP client, OAuth ones included (the
    client signs in as ``nexus_client.auth_for`` configures it)."""
    required = required_scenarios(revision, side="Client")
    applicable = list(required)
    known = KNOWN_CLIENT_FAILURES[revision]
    command = f"{sys.executable} {CLIENT}"
    # Each scenario is its own suite process with its own mock servers on free ports, and
    # spends most of its time starting processes: a few at once keep the suite short.
    with ThreadPoolExecutor(CLIENT_SCENARIOS_AT_ONCE) as pool:
        ran = pool.map(
            lambda s: run_client_scenario(command, s, revision, tmp_path / s.replace("/", "_")),
            applicable,
        )
        outcomes = dict(zip(applicable, ran, strict=True))
    passed = sum(o.passed for o in outcomes.values())
    rows = [f"MCP conformance {revision}, client: {passed}/{len(applicable)} applicable pass"]
    for scenario, outcome in outcomes.items():
        why = known.get(scenario, "UNEXPECTED: " + "; ".join(outcome.failures))
        rows.append(f"  ok {scenario}" if outcome.passed else f"  xx {scenario}: {why}")
    with capsys.disabled():
        print("\n" + "\n".join(rows))
    unexpected = [s for s, o in outcomes.items() if not o.passed and s not in known]
    now_passing = [s for s in known if s in outcomes and outcomes[s].passed]
    assert not unexpected, "client scenarios fail:\n" + "\n".join(
        f"{s}: {outcomes[s].failures}" for s in unexpected
    )
    assert not now_passing, f"these pass now: remove them from known_failures.py: {now_passing}"
