"""``jsonrpc-mcp conformance client``: the scenarios sep-2322-client-request-state (MRTR
``requestState``), sse-retry, json-schema-2020-12-preservation, http-standard-headers and progress.

Real subprocesses, as in test_client_mode.py: this project's client passes their requirements over
every transport each scenario runs on; the faulty client passes them without a fault and each of
its faults for these scenarios fails exactly the requirements it breaks. Every scenario server
binds 127.0.0.1 port 0; every client run is bounded by the runner's timeout.
"""

from __future__ import annotations

import pytest

from jsonrpc_mcp_conformance.runner import FAIL, PASS, Run

from .client_runs import FAULTY, OURS, L, M, failed, run_clients
from .clients.faulty_client import SCENARIO_FAULTS
from .clients.faulty_discover import SCENARIO_FAULTS as DISCOVER_FAULTS
from .clients.faulty_more import SCENARIO_FAULTS as MORE_SCENARIO_FAULTS

SCENARIOS = (
    "sep-2322-client-request-state",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "http-standard-headers",
    "progress",
)


def _run(
    command: list[str],
    transports: tuple[str, ...],
    scenarios: tuple[str, ...] = SCENARIOS,
    revisions: tuple[str, ...] = (L, M),
) -> Run:
    return run_clients(command, transports, scenarios, revisions)


NEW = {
    "client:mrtr:request-state-echoed",
    "client:mrtr:no-state-omitted",
    "client:mrtr:retry-new-id",
    "client:mrtr:isolation",
    "client:mrtr:default-complete",
    "client:schema:2020-12-keywords-preserved",
    "client:schema:2020-12-vocabulary-preserved",
    "client:progress:token",
}
NEW_HTTP = {"client:sse:reconnect", "client:sse:retry-respected", "client:sse:last-event-id"}


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("client", ["ours", "faulty"])
def test_a_correct_client_passes_the_scenarios(client: str, transport: str) -> None:
    run = _run(OURS if client == "ours" else FAULTY, (transport,))
    assert failed(run) == set(), [v.problems for v in run.verdicts if v.status == FAIL]
    passed = {v.id for v in run.verdicts if v.status == PASS}
    assert NEW | (NEW_HTTP | {"client:http:standard-headers"} if transport == "http" else set()) <= passed


# fault -> (scenarios, transports, revisions, the failures it must cause: exactly these)
CAUGHT: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], set[str]]] = {
    "alter-request-state": (
        ("sep-2322-client-request-state",),
        ("http", "stdio"),
        (M,),
        {f"client:mrtr:request-state-echoed@{M}/http", f"client:mrtr:request-state-echoed@{M}/stdio"},
    ),
    "invent-request-state": (
        ("sep-2322-client-request-state",),
        ("stdio",),
        (M,),
        {f"client:mrtr:no-state-omitted@{M}/stdio"},
    ),
    "reuse-retry-id": (
        ("sep-2322-client-request-state",),
        ("http",),
        (M,),
        {f"client:mrtr:retry-new-id@{M}/http"},
    ),
    "leak-request-state": (
        ("sep-2322-client-request-state",),
        ("stdio",),
        (M,),
        {f"client:mrtr:isolation@{M}/stdio"},
    ),
    "retry-complete-result": (
        ("sep-2322-client-request-state",),
        ("http",),
        (M,),
        {f"client:mrtr:default-complete@{M}/http"},
    ),
    # (without a reconnection, the wait and Last-Event-ID are not judged: skipped)
    "sse-no-reconnect": (("sse-retry",), ("http",), (L,), {f"client:sse:reconnect@{L}/http"}),
    "sse-ignore-retry": (("sse-retry",), ("http",), (L,), {f"client:sse:retry-respected@{L}/http"}),
    "sse-no-last-event-id": (("sse-retry",), ("http",), (L,), {f"client:sse:last-event-id@{L}/http"}),
    "strip-schema-keywords": (
        ("json-schema-2020-12-preservation",),
        ("stdio",),
        (L, M),
        {
            f"client:schema:2020-12-keywords-preserved@{L}/stdio",
            f"client:schema:2020-12-keywords-preserved@{M}/stdio",
        },
    ),
    # (the wider vocabulary is required from 2026-07-28 only)
    "strip-schema-vocabulary": (
        ("json-schema-2020-12-preservation",),
        ("http",),
        (L, M),
        {f"client:schema:2020-12-vocabulary-preserved@{M}/http"},
    ),
    "float-progress-token": (
        ("progress",),
        ("stdio",),
        (L, M),
        {f"client:progress:token@{L}/stdio", f"client:progress:token@{M}/stdio"},
    ),
}


def test_every_scenario_fault_has_a_case() -> None:
    # (those of faulty_more.py: test_client_scenarios_more.py; faulty_discover.py: test_client_discover.py)
    assert set(CAUGHT) == set(SCENARIO_FAULTS) - set(MORE_SCENARIO_FAULTS) - set(DISCOVER_FAULTS)


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_each_scenario_fault_is_caught_requirement_by_requirement(fault: str) -> None:
    scenarios, transports, revisions, expected = CAUGHT[fault]
    run = _run([*FAULTY, "--fault", fault], transports, scenarios, revisions)
    assert failed(run) == expected
    for verdict in run.verdicts:
        if verdict.status == FAIL:
            assert verdict.problems and verdict.fixture.url(verdict.revision).startswith("https://")


def test_standard_headers_missing_are_caught_in_their_scenario() -> None:
    """http-standard-headers: every kind of named request (tools/call, resources/read, prompts/get)
    is made, so a client sending no Mcp-Method / Mcp-Name fails there (the scenario server refuses
    those POSTs, so nothing else is judged)."""
    run = _run([*FAULTY, "--fault", "no-standard-headers"], ("http",), ("http-standard-headers",), (M,))
    assert failed(run) == {f"client:http:standard-headers@{M}/http"}
    verdict = next(v for v in run.verdicts if v.id == "client:http:standard-headers")
    assert any("Mcp-Method is None" in problem for problem in verdict.problems)
