"""``jsonrpc-mcp conformance client``: the scenarios cancellation, elicitation-url and the skills
extension's sep-2640-client-no-prefetch, -verify-digest, -verify-size and -verify-frontmatter.

Real subprocesses, as in test_client_scenarios.py: this project's client and the faulty client
without a fault pass their requirements over both transports; each of the faulty client's faults for
these scenarios fails exactly the requirements it breaks. Every scenario server binds 127.0.0.1 port
0; every client run is bounded by the runner's timeout.
"""

from __future__ import annotations

import pytest

from jsonrpc_mcp_conformance.runner import FAIL, PASS, Run

from .client_runs import FAULTY, OURS, L, M, failed, run_clients
from .clients.faulty_more import SCENARIO_FAULTS, SCENARIOS


def _run(
    command: list[str],
    transports: tuple[str, ...],
    scenarios: tuple[str, ...] = SCENARIOS,
    revisions: tuple[str, ...] = (L, M),
) -> Run:
    return run_clients(command, transports, scenarios, revisions)


def _passed(run: Run) -> set[str]:
    return {f"{v.id}@{v.revision}" for v in run.verdicts if v.status == PASS}


SKILLS = {"no-prefetch", "verify-digest", "verify-size", "verify-frontmatter"}
BOTH = {
    *(f"client:skills:{name}@{revision}" for name in SKILLS for revision in (L, M)),
    *(
        f"client:elicitation:{name}@{revision}"
        for name in ("url-mode-declared", "url-result")
        for revision in (L, M)
    ),
    f"client:elicitation:url-no-content@{M}",
    f"client:elicitation:unknown-completion-ignored@{L}",
    f"client:cancellation:notify@{L}",
    f"client:cancellation:request-id@{L}",
    f"client:cancellation:not-initialize@{L}",
}
ONLY = {
    "http": {f"client:cancellation:http-close-stream@{M}", f"client:elicitation:url-not-fetched@{L}"},
    "stdio": {f"client:cancellation:stdio-notify@{M}", f"client:cancellation:request-id@{M}"},
}


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("client", ["ours", "faulty"])
def test_a_correct_client_passes_the_scenarios(client: str, transport: str) -> None:
    run = _run(OURS if client == "ours" else FAULTY, (transport,))
    assert failed(run) == set(), [v.problems for v in run.verdicts if v.status == FAIL]
    assert BOTH | ONLY[transport] <= _passed(run)
    closed = [v for v in run.verdicts if v.id == "client:cancellation:http-close-stream"]
    assert all(v.note.startswith("closed ") for v in closed)  # (the recorder saw the connection close)


# fault -> (scenarios, transports, revisions, the failures it must cause: exactly these)
CAUGHT: dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], set[str]]] = {
    # (no cancellation sent, nothing to judge its requestId: skipped)
    "no-cancel": (
        ("cancellation",),
        ("http", "stdio"),
        (L, M),
        {
            f"client:cancellation:notify@{L}/http",
            f"client:cancellation:notify@{L}/stdio",
            f"client:cancellation:stdio-notify@{M}/stdio",
            f"client:cancellation:http-close-stream@{M}/http",
        },
    ),
    "cancel-wrong-id": (
        ("cancellation",),
        ("stdio",),
        (L, M),
        {f"client:cancellation:request-id@{L}/stdio", f"client:cancellation:request-id@{M}/stdio"},
    ),
    "cancel-initialize": (
        ("cancellation",),
        ("http",),
        (L,),
        {f"client:cancellation:not-initialize@{L}/http"},
    ),
    # (2026-07-28: the server asks nothing of a client without elicitation.url, so no answer is judged)
    "url-undeclared": (
        ("elicitation-url",),
        ("stdio",),
        (L,),
        {f"client:elicitation:url-mode-declared@{L}/stdio"},
    ),
    "url-bad-action": (
        ("elicitation-url",),
        ("http",),
        (L, M),
        {f"client:elicitation:url-result@{L}/http", f"client:elicitation:url-result@{M}/http"},
    ),
    "url-content": (
        ("elicitation-url",),
        ("stdio",),
        (L, M),
        {f"client:elicitation:url-no-content@{L}/stdio", f"client:elicitation:url-no-content@{M}/stdio"},
    ),
    "url-prefetch": (
        ("elicitation-url",),
        ("http",),
        (L, M),
        {f"client:elicitation:url-not-fetched@{L}/http", f"client:elicitation:url-not-fetched@{M}/http"},
    ),
    "answer-unknown-completion": (
        ("elicitation-url",),
        ("http", "stdio"),
        (L,),
        {
            f"client:elicitation:unknown-completion-ignored@{L}/http",
            f"client:elicitation:unknown-completion-ignored@{L}/stdio",
        },
    ),
    "skills-prefetch": (
        ("sep-2640-client-no-prefetch",),
        ("stdio",),
        (L, M),
        {f"client:skills:no-prefetch@{L}/stdio", f"client:skills:no-prefetch@{M}/stdio"},
    ),
    "skills-ignore-digest": (
        ("sep-2640-client-verify-digest",),
        ("http",),
        (M,),
        {f"client:skills:verify-digest@{M}/http"},
    ),
    "skills-ignore-size": (
        ("sep-2640-client-verify-size",),
        ("stdio",),
        (L,),
        {f"client:skills:verify-size@{L}/stdio"},
    ),
    "skills-ignore-frontmatter": (
        ("sep-2640-client-verify-frontmatter",),
        ("http",),
        (L,),
        {f"client:skills:verify-frontmatter@{L}/http"},
    ),
}


def test_every_fault_of_these_scenarios_has_a_case() -> None:
    assert set(CAUGHT) == set(SCENARIO_FAULTS)


@pytest.mark.parametrize("fault", sorted(CAUGHT))
def test_each_fault_is_caught_requirement_by_requirement(fault: str) -> None:
    scenarios, transports, revisions, expected = CAUGHT[fault]
    run = _run([*FAULTY, "--fault", fault], transports, scenarios, revisions)
    assert failed(run) == expected
    for verdict in run.verdicts:
        if verdict.status == FAIL:
            assert verdict.problems and verdict.fixture.url(verdict.revision).startswith("https://")
