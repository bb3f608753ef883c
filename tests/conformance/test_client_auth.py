"""``jsonrpc-mcp conformance client``'s authorization scenarios (``auth/*``, issue 27).

Real subprocesses against the scenario's protected MCP server and authorization server(s), each on
127.0.0.1 port 0: this project's client (the official suite's driver) and the faulty client without
a fault pass every authorization requirement; each auth fault of the faulty client fails exactly
the requirements it breaks; a client that does nothing fails them all.
"""

from __future__ import annotations

import pytest

from jsonrpc_mcp_conformance.clients.authserver import AuthConfig, AuthRecord, basic_credentials
from jsonrpc_mcp_conformance.clients.scenarios import load_client_spec, requirement_scenarios
from jsonrpc_mcp_conformance.runner import PASS, SKIP, Run

from .client_runs import FAULTY, OURS, run_clients
from .clients.faulty_auth import AUTH_FAULTS

ALL_REVISIONS = ("2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
MODERN = ("2026-07-28",)


def _run(command: list[str], scenarios: tuple[str, ...] = (), revisions: tuple[str, ...] = MODERN) -> Run:
    scenarios = scenarios or tuple(name for name in load_client_spec().scenarios if name.startswith("auth/"))
    return run_clients(command, ("http",), scenarios, revisions, only="client:auth:")


def _failed(run: Run) -> set[str]:
    return {v.id.removeprefix("client:auth:") for v in run.verdicts if v.status not in (PASS, SKIP)}


def test_every_auth_scenario_is_judged() -> None:
    spec = load_client_spec()
    auth = [f for f in spec.requirements if f.id.startswith("client:auth:")]
    judged = {name for f in auth for name in requirement_scenarios(f)}
    scenarios = {name for name in spec.scenarios if name.startswith("auth/")}
    assert scenarios == judged
    for name in scenarios:
        scenario = spec.scenarios[name]
        assert scenario.transports == ("http",) and scenario.auth is not None
        AuthConfig.from_json(scenario.auth)
    assert len(scenarios) >= 30


def test_an_unknown_auth_key_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown auth keys"):
        AuthConfig.from_json({"prm_paht": "/x"})


def test_a_record_never_shows_a_secret() -> None:
    record = AuthRecord(
        "as",
        "POST",
        "/token",
        {},
        {"authorization": "Basic c2VjcmV0LWlkOnNlY3JldC12YWx1ZQ=="},
        form={"code": "the-code", "code_verifier": "zq9v7", "client_secret": "s3cr3t", "grant_type": "x"},
    )
    frame = record.frame()
    assert "the-code" not in frame and "zq9v7" not in frame and "s3cr3t" not in frame
    assert "c2VjcmV0" not in frame and "grant_type" in frame
    assert basic_credentials("Basic c2VjcmV0LWlkOnNlY3JldC12YWx1ZQ==") == ("secret-id", "secret-value")
    assert basic_credentials("Bearer x") is None


def test_our_client_passes_every_auth_requirement() -> None:
    run = _run(OURS, revisions=ALL_REVISIONS)
    assert _failed(run) == set(), [(v.id, v.revision, v.problems) for v in run.verdicts if v.status != PASS]
    passed = {v.id for v in run.verdicts if v.status == PASS}
    assert len(passed) == len([f for f in load_client_spec().requirements if f.id.startswith("client:auth:")])


def test_the_faulty_client_without_a_fault_passes_every_auth_requirement() -> None:
    run = _run(FAULTY, revisions=ALL_REVISIONS)
    assert _failed(run) == set(), [(v.id, v.revision, v.problems) for v in run.verdicts if v.status != PASS]


def test_a_client_that_does_nothing_fails_every_auth_requirement() -> None:
    run = _run([*FAULTY, "--fault", "do-nothing"])
    judged = {v.id for v in run.verdicts}
    skipped = {v.id for v in run.verdicts if v.status == SKIP}
    assert _failed(run) == {i.removeprefix("client:auth:") for i in judged - skipped}
    # what cannot be judged without traffic: the registration's metadata
    assert skipped <= {"client:auth:application-type", "client:auth:refresh-grant-type"}
    assert len(judged - skipped) >= 25


# fault -> (scenarios, revisions, the requirements it fails)
CASCADE = {"code-flow", "pkce", "resource", "bearer"}  # a flow stopped before authorizing
FAULT_CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...], set[str]]] = {
    "ignore-prm-header": (
        ("auth/metadata-var3",),
        MODERN,
        {"prm-discovery", "as-metadata-discovery", *CASCADE},
    ),
    "prm-root-first": (("auth/metadata-var1",), MODERN, {"prm-discovery"}),
    "as-metadata-root": (("auth/metadata-var2",), MODERN, {"as-metadata-discovery"}),
    "no-pkce": (("auth/metadata-default",), MODERN, {"pkce"}),
    "pkce-plain": (("auth/metadata-default",), MODERN, {"pkce"}),
    "no-resource": (("auth/token-endpoint-auth-basic",), MODERN, {"resource"}),
    "token-in-query": (("auth/metadata-default",), MODERN, {"bearer", "code-flow"}),
    "wrong-scope": (("auth/scope-from-www-authenticate",), MODERN, {"scope-from-www-authenticate"}),
    "no-step-up": (("auth/scope-step-up",), MODERN, {"step-up", "scope-union"}),
    "no-scope-union": (("auth/scope-step-up",), MODERN, {"scope-union"}),
    "no-retry-limit": (("auth/scope-retry-limit",), MODERN, {"retry-limit"}),
    "wrong-auth-method": (
        ("auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post"),
        MODERN,
        {"token-endpoint-auth-basic", "token-endpoint-auth-post"},
    ),
    "use-dcr-despite-preregistration": (
        ("auth/pre-registration",),
        MODERN,
        {"pre-registration", "pre-registration-auth", "pkce", "resource", "bearer"},
    ),
    "no-cimd": (("auth/basic-cimd",), MODERN, {"cimd"}),
    "no-application-type": (("auth/metadata-default",), MODERN, {"application-type"}),
    "no-resource-check": (("auth/resource-mismatch",), MODERN, {"resource-mismatch"}),
    "no-iss-check": (
        ("auth/iss-supported-missing", "auth/iss-wrong-issuer", "auth/iss-unexpected", "auth/iss-normalized"),
        MODERN,
        {"iss-supported-missing", "iss-wrong-issuer", "iss-unexpected", "iss-normalized"},
    ),
    "no-issuer-check": (("auth/metadata-issuer-mismatch",), MODERN, {"metadata-issuer"}),
    "offline-access-always": (("auth/offline-access-not-supported",), MODERN, {"offline-access"}),
    "reuse-credentials": (("auth/authorization-server-migration",), MODERN, {"as-migration"}),
    "no-refresh": (("auth/token-refresh",), MODERN, {"refresh"}),
    "cc-auth-code": (("auth/client-credentials-basic",), MODERN, {"client-credentials-basic"}),
}


def test_every_auth_fault_has_a_case() -> None:
    assert set(FAULT_CASES) == set(AUTH_FAULTS)


@pytest.mark.parametrize("fault", sorted(FAULT_CASES))
def test_each_auth_fault_fails_exactly_what_it_breaks(fault: str) -> None:
    scenarios, revisions, expected = FAULT_CASES[fault]
    run = _run([*FAULTY, "--fault", fault], scenarios, revisions)
    problems = [(v.id, v.problems) for v in run.verdicts if v.status not in (PASS, SKIP)]
    assert _failed(run) == expected, problems
