"""``jsonrpc-mcp conformance client``: era detection at 2026-07-28 (the scenarios discover-fallback and
discover-fallback-any-error, ours: a legacy server refuses the client's modern request) and caching
hints (caching-hints, ours).

Real subprocesses, as in test_client_scenarios_more.py: this project's client (the library's
``mode="auto"``) and the faulty client without a fault pass the requirements over both transports;
each of the faulty client's era-detection faults fails exactly the requirements it breaks; a client
that does nothing fails them all. Every scenario server binds 127.0.0.1 port 0; every client run is
bounded by the runner's timeout.
"""

from __future__ import annotations

import pytest

from jsonrpc_mcp_conformance.runner import FAIL, PASS, Run

from .client_runs import FAULTY, OURS, run_clients
from .clients.faulty_discover import PLAYED, SCENARIO_FAULTS, SCENARIOS

M = "2026-07-28"
BOTH = ("http", "stdio")


def _run(command: list[str], transports: tuple[str, ...], scenarios: tuple[str, ...] = SCENARIOS) -> Run:
    return run_clients(command, transports, scenarios, (M,))


def _discover(run: Run, *statuses: str) -> set[str]:
    return {
        f"{v.id}@{v.transport}"
        for v in run.verdicts
        if v.id.startswith("client:discover:") and v.status in statuses
    }


def _failed(run: Run) -> set[str]:
    return {f"{v.id}@{v.transport}" for v in run.verdicts if v.status not in (PASS, "skip")}


EVERY = {
    "client:discover:stdio-probe-first@stdio",
    "client:discover:stdio-fallback@stdio",
    "client:discover:http-fallback@http",
    *(f"client:discover:{name}@{t}" for name in ("handshake-after-fallback", "era-kept") for t in BOTH),
}


CACHING = {f"client:caching:{name}@{t}" for name in ("ttl-zero-refetched", "cache-key") for t in BOTH}


@pytest.mark.parametrize("client", ["ours", "faulty"])
def test_a_client_of_both_eras_falls_back_and_passes(client: str) -> None:
    run = _run(OURS if client == "ours" else FAULTY, BOTH, (*SCENARIOS, *PLAYED))
    assert _failed(run) == set(), [v.problems for v in run.verdicts if v.status == FAIL]
    assert _discover(run, PASS) == EVERY
    assert {f"{v.id}@{v.transport}" for v in run.verdicts if v.status == PASS} >= CACHING
    notes = {v.note for v in run.verdicts if v.id.endswith("-fallback") and v.status == PASS}
    assert any("-32601" in n and "-32600" in n for n in notes), notes  # (both refusals were seen)
    assert any("empty body" in n for n in notes), notes


def test_a_client_that_does_nothing_fails_every_requirement() -> None:
    run = _run([*FAULTY, "--fault", "do-nothing"], BOTH, (*SCENARIOS, *PLAYED))
    assert _discover(run, FAIL) == EVERY
    assert {f"{v.id}@{v.transport}" for v in run.verdicts if v.status == FAIL} >= CACHING


# fault -> (scenarios, transports, the failures it must cause: exactly these)
CAUGHT: dict[str, tuple[tuple[str, ...], tuple[str, ...], set[str]]] = {
    "no-fallback": (
        SCENARIOS,
        BOTH,
        {"client:discover:stdio-fallback@stdio", "client:discover:http-fallback@http"},
    ),
    # (falls back on -32601 only: discover-fallback over stdio passes, the other refusals fail)
    "fallback-on-one-code": (
        SCENARIOS,
        BOTH,
        {"client:discover:stdio-fallback@stdio", "client:discover:http-fallback@http"},
    ),
    # (over HTTP a modern request first is a MAY: the client that never made one is not judged there)
    "skip-probe": (SCENARIOS, BOTH, {"client:discover:stdio-probe-first@stdio"}),
    "reprobe": (
        ("discover-fallback",),
        BOTH,
        {"client:discover:era-kept@http", "client:discover:era-kept@stdio"},
    ),
    "cache-ignore-ttl": (PLAYED, BOTH, {f"client:caching:ttl-zero-refetched@{t}" for t in BOTH}),
    "cache-by-method": (PLAYED, BOTH, {f"client:caching:cache-key@{t}" for t in BOTH}),
}


def test_every_fault_of_these_scenarios_has_a_case() -> None:
    assert set(CAUGHT) == set(SCENARIO_FAULTS)


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_each_fault_is_caught_requirement_by_requirement(fault: str) -> None:
    scenarios, transports, expected = CAUGHT[fault]
    run = _run([*FAULTY, "--fault", fault], transports, scenarios)
    assert _failed(run) == expected
    for verdict in run.verdicts:
        if verdict.status == FAIL:
            assert verdict.problems and verdict.fixture.url(verdict.revision).startswith("https://")


def test_one_code_only_is_seen_in_the_other_scenario_only() -> None:
    """A fallback keyed to -32601 passes the stdio scenario that refuses with -32601 and fails the
    one that refuses with -32600: the two scenarios are what makes the keying visible."""
    fault = [*FAULTY, "--fault", "fallback-on-one-code"]
    assert _failed(_run(fault, ("stdio",), ("discover-fallback",))) == set()
    failed = _run(fault, ("stdio",), ("discover-fallback-any-error",))
    assert _failed(failed) == {"client:discover:stdio-fallback@stdio"}


def test_the_handshake_after_the_fallback_is_judged() -> None:
    """The faulty client's handshake fault (no notifications/initialized) is caught after a fallback."""
    run = _run([*FAULTY, "--fault", "no-initialized"], ("stdio",), ("discover-fallback",))
    assert _failed(run) == {"client:discover:handshake-after-fallback@stdio"}
