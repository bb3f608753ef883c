"""``jsonrpc-mcp conformance client`` against the official SDKs' clients (issue 27's proof, the peers).

Two drivers play the harness's scenarios with an SDK's public API only: ``clients/sdk_client.py``
(the official Python SDK, the ``mcp`` package of the dev environment) and ``clients/ts/client.mjs``
(the official TypeScript SDK's client, ``@modelcontextprotocol/client``, installed from its lock by
``clients/ts_client.py``). Each runs, as real subprocesses against scenario servers on 127.0.0.1
port 0, every scenario of the harness it can play: the others over HTTP and over stdio at the
latest revision of each era, the authorization ones (``auth/*``) over HTTP. Every requirement is
asserted one by one: each passes, but those ``FAILS`` lists (a defect of the SDK, with the reason
read on the wire and the spec's sentence), those ``MAY_FAIL`` lists (the same, where the wire's
timing decides) and those ``SKIPS`` lists (nothing to judge, and why); every run ends with exit
status 0 but those ``ENDS`` lists and the authorization scenarios the client is expected to fail.
A scenario a driver cannot play with its SDK's public API (``NOT_PLAYED``) is not run: the driver
exits 2 saying why, which ``test_the_drivers_refuse_what_they_do_not_play`` asserts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp_conformance.clients.checks import ScenarioRun
from jsonrpc_mcp_conformance.clients.runner import ClientOptions, run_client_conformance
from jsonrpc_mcp_conformance.clients.scenarios import load_client_spec
from jsonrpc_mcp_conformance.runner import FAIL, PASS, SKIP, Run
from tests.timeouts import RUN

HERE = Path(__file__).resolve().parent
PYTHON_SDK = [sys.executable, str(HERE / "clients" / "sdk_client.py")]
CLIENT_TIMEOUT = 45.0  # one scenario's client run (starting Node.js or importing the SDK on a loaded machine)
E, L, M = "2025-03-26", "2025-11-25", "2026-07-28"
PEERS = ("python-sdk", "typescript-sdk")
# Every scenario of the harness but the authorization ones (each run at the revisions it has of L
# and M: a handshake-era and a 2026-07-28 test per peer and transport).
SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sampling",
    "roots",
    "request-metadata",
    "json-schema-ref-no-deref",
    "http-invalid-tool-headers",
    "http-custom-headers",
    "sep-2322-client-request-state",
    "sse-retry",
    "json-schema-2020-12-preservation",
    "http-standard-headers",
    "progress",
    "cancellation",
    "elicitation-url",
    "sep-2640-client-no-prefetch",
    "sep-2640-client-verify-digest",
    "sep-2640-client-verify-size",
    "sep-2640-client-verify-frontmatter",
    "discover-fallback",
    "discover-fallback-any-error",
    "caching-hints",
)
SKILLS = tuple(name for name in SCENARIOS if name.startswith("sep-2640-"))
# peer -> the scenarios its driver does not play (it exits 2 and says why: no public API for them)
NOT_PLAYED: dict[str, dict[str, str]] = {
    "python-sdk": dict.fromkeys(SKILLS, "no host-side skills API"),
    "typescript-sdk": {},
}
# The authorization scenarios, each at every revision of the two eras' latest it has, and the two
# back-compat ones at 2025-03-26 (the only revision they have).
AUTH = tuple(name for name in load_client_spec().scenarios if name.startswith("auth/"))
_MODERN_AUTH = [name for name in AUTH if M in load_client_spec().scenarios[name].revisions]
AUTH_PARTS = {  # (each test well under a minute: the 2026-07-28 ones in two halves)
    "handshake": ((E, L), AUTH),
    "modern-1": ((M,), tuple(_MODERN_AUTH[: len(_MODERN_AUTH) // 2])),
    "modern-2": ((M,), tuple(_MODERN_AUTH[len(_MODERN_AUTH) // 2 :])),
}
# the scenarios whose client is to give up (its run exits 1): the spec's scenario says so
REFUSING = {
    name
    for name, scenario in load_client_spec().scenarios.items()
    if "expected to fail" in scenario.description
}

NO_REFRESH = (
    "auth/token-refresh: the access token (expires_in 3600) is refused with 401 invalid_token after "
    "one use; the SDK refreshes only a token its own clock calls expired, so on the 401 it runs the "
    "whole authorization again (a new /authorize, a user prompt) though it holds a refresh token. "
    "A SHOULD derived from OAuth 2.1 section 4.3 ('Refresh tokens are credentials used to obtain "
    "access tokens'); MCP has no client sentence of its own"
)
LOST_CANCEL = (
    "cancellation over HTTP at 2025-11-25: on the request timeout the SDK starts the POST of "
    "notifications/cancelled without waiting for it and rejects the call; the application closes "
    "the client, and the transport's close() aborts every POST in flight, the cancellation's too "
    "('Failed to send cancellation: AbortError' on the client's onerror): the server never gets it. "
    "lifecycle#timeouts: 'the sender SHOULD issue a cancellation notification for that request'. "
    "Over stdio the notification is written at once and arrives"
)
TWO_AUTHORIZATIONS = (
    "auth/scope-retry-limit at 2025-11-25: after initialize the SDK opens the standalone GET stream "
    "while the application lists the tools; both are refused at once and the SDK authorizes for each "
    "(two registrations, two /authorize per round), so two rounds make 4 authorization requests "
    "where 3 is the limit (the official check counts the same way). 'Clients SHOULD implement retry "
    "limits and SHOULD track scope upgrade attempts' (basic/authorization, step-up). Whether the two "
    "overlap is the wire's timing"
)
# peer -> the "requirement@revision/transport" verdicts it fails, each with the reason read on the wire
FAILS: dict[str, dict[str, str]] = {
    "python-sdk": {f"client:auth:refresh@{rev}/http": NO_REFRESH for rev in (L, M)},
    "typescript-sdk": {f"client:cancellation:notify@{L}/http": LOST_CANCEL},
}
# the same, for a verdict that passes or fails as the wire's timing has it
MAY_FAIL: dict[str, dict[str, str]] = {
    "python-sdk": {},
    "typescript-sdk": {f"client:auth:retry-limit@{L}/http": TWO_AUTHORIZATIONS},
}
CIMD_CHOSEN = (
    "auth/offline-access-scope offers a client ID metadata document and the SDK uses its URL as "
    "client_id: no registration, so no grant_types to judge"
)
CLOSED_STREAM = (
    "2026-07-28 over HTTP the SDK cancels by closing the call's stream: no notifications/cancelled"
)
SKIPS: dict[str, dict[str, str]] = {
    "python-sdk": {
        f"client:auth:refresh-grant-type@{M}/http": CIMD_CHOSEN,
        f"client:cancellation:request-id@{M}/http": CLOSED_STREAM,
    },
    "typescript-sdk": {
        f"client:auth:refresh-grant-type@{M}/http": CIMD_CHOSEN,
        f"client:cancellation:request-id@{M}/http": CLOSED_STREAM,
        f"client:cancellation:request-id@{L}/http": LOST_CANCEL,
    },
}
# peer -> (scenario, revision, transport) -> the exit statuses its run may end with besides 0, and why
REFUSED_RESULT = (
    "test_mrtr_no_result_type answers a 2026-07-28 tools/call without resultType and the SDK refuses "
    "that result (its steps judged pass): within the spec, whose schema says servers implementing "
    "2026-07-28 MUST include resultType (absent-means-complete is for earlier-revision servers)"
)
LOST_PROGRESS = (
    "the SDK hands a response on at once, dropping the request's progress handler, and each "
    "notification in a later microtask: notifications/progress read in the same chunk as the response "
    "never reach onprogress ('unknown token'; "
    "test_the_typescript_sdk_loses_progress_read_with_its_response). "
    "No requirement judges the receiver; the SDK falls short of 'Senders and receivers SHOULD track "
    "active progress tokens', and the application that asked for progress gets none"
)
ENDS: dict[str, dict[tuple[str, str, str], tuple[set[int], str]]] = {
    "python-sdk": {
        ("sep-2322-client-request-state", M, "http"): ({1}, REFUSED_RESULT),
        ("sep-2322-client-request-state", M, "stdio"): ({1}, REFUSED_RESULT),
    },
    "typescript-sdk": {
        ("sep-2322-client-request-state", M, "http"): ({1}, REFUSED_RESULT),
        ("sep-2322-client-request-state", M, "stdio"): ({1}, REFUSED_RESULT),
        # over stdio the three notifications and the result often come in one read: a race
        ("progress", L, "stdio"): ({0, 1}, LOST_PROGRESS),
        ("progress", M, "stdio"): ({0, 1}, LOST_PROGRESS),
    },
}
# requirements every run must have judged and passed (the run judged what matters, not nothing)
CORE = {
    L: {
        "client:lifecycle:initialize-first",
        "client:lifecycle:initialized-sent",
        "client:lifecycle:client-info",
        "client:jsonrpc:request-id",
        "client:tools:call",
        "client:elicitation:result",
        "client:elicitation:defaults-applied",
        "client:sampling:result",
        "client:roots:result",
        "client:schema:2020-12-keywords-preserved",
        "client:progress:token",
        "client:cancellation:not-initialize",
        "client:elicitation:url-result",
        "client:elicitation:url-no-content",
        "client:elicitation:unknown-completion-ignored",
    },
    M: {
        "client:modern:meta-envelope",
        "client:modern:meta-client-info",
        "client:tools:call",
        "client:elicitation:result",
        "client:elicitation:defaults-applied",
        "client:sampling:result",
        "client:roots:result",
        "client:mrtr:request-state-echoed",
        "client:schema:2020-12-vocabulary-preserved",
        "client:progress:token",
        "client:elicitation:url-result",
        "client:elicitation:url-no-content",
        "client:discover:handshake-after-fallback",
        "client:discover:era-kept",
        "client:caching:ttl-zero-refetched",
        "client:caching:cache-key",
    },
}
HTTP_ONLY = {
    L: {
        "client:http:accept",
        "client:http:session-id",
        "client:http:protocol-version-header",
        "client:sse:reconnect",
        "client:elicitation:url-not-fetched",
    },
    M: {
        "client:http:accept",
        "client:http:modern-version-header",
        "client:http:standard-headers",
        "client:http:param-headers",
        "client:modern:version-retry",
        "client:tools:invalid-x-mcp-header-excluded",
        "client:tools:valid-tool-kept",
        "client:tools:no-network-ref-deref",
        "client:cancellation:http-close-stream",
        "client:elicitation:url-not-fetched",
        "client:discover:http-fallback",
    },
}
STDIO_ONLY = {
    L: {"client:cancellation:notify"},
    M: {
        "client:cancellation:stdio-notify",
        "client:discover:stdio-probe-first",
        "client:discover:stdio-fallback",
    },
}
# the scenarios whose server speaks only the handshake era: at 2026-07-28 the client falls back
FALLBACK = ("discover-fallback", "discover-fallback-any-error")
SKILL_REQUIREMENTS = {
    "client:skills:no-prefetch",
    "client:skills:verify-digest",
    "client:skills:verify-size",
    "client:skills:verify-frontmatter",
}
# what the authorization runs must have judged and passed, at each revision (FAILS aside)
AUTH_CORE = {
    E: {"client:auth:backcompat-metadata", "client:auth:backcompat-fallback", "client:auth:pkce-backcompat"},
    L: {
        "client:auth:prm-discovery",
        "client:auth:as-metadata-discovery",
        "client:auth:code-flow",
        "client:auth:pkce",
        "client:auth:resource",
        "client:auth:bearer",
        "client:auth:step-up",
        "client:auth:token-endpoint-auth-post",
        "client:auth:pre-registration",
        "client:auth:client-credentials-jwt",
        "client:http:session-id",
        "client:jsonrpc:request-id",
    },
    M: {
        "client:auth:prm-discovery",
        "client:auth:code-flow",
        "client:auth:pkce",
        "client:auth:resource",
        "client:auth:bearer",
        "client:auth:cimd",
        "client:auth:dcr",
        "client:auth:application-type",
        "client:auth:step-up",
        "client:auth:scope-union",
        "client:auth:retry-limit",
        "client:auth:resource-mismatch",
        "client:auth:offline-access",
        "client:auth:as-migration",
        "client:auth:iss-supported-missing",
        "client:auth:iss-normalized",
        "client:auth:metadata-issuer",
        "client:auth:client-credentials-basic",
        "client:auth:client-credentials-jwt",
    },
}


@pytest.fixture(scope="module")
def typescript_sdk() -> list[str]:
    from .clients import ts_client

    try:
        return ts_client.install()
    except ts_client.Unavailable as exc:
        pytest.skip(f"the TypeScript SDK's client cannot be installed here: {exc}")


def _peer(name: str, request: pytest.FixtureRequest) -> list[str]:
    if name == "python-sdk":
        pytest.importorskip("mcp", reason="the official Python SDK (mcp) is not installed")
        return PYTHON_SDK
    argv: list[str] = request.getfixturevalue("typescript_sdk")
    return argv


def _run(
    argv: Sequence[str], transport: str, revisions: Sequence[str], scenarios: Sequence[str]
) -> tuple[Run, list[ScenarioRun]]:
    spec = load_client_spec()
    options = ClientOptions(revisions=tuple(revisions), transports=(transport,), timeout=CLIENT_TIMEOUT)
    return anyio.run(run_client_conformance, list(argv), spec, spec.requirements, options, scenarios)


def _assert_verdicts(
    peer: str, run: Run, runs: list[ScenarioRun], transport: str, expected: set[str]
) -> None:
    """Every run ended as it should; every verdict passed but FAILS, MAY_FAIL and SKIPS; ``expected``
    (requirement ids) were judged and passed."""
    ends = ENDS[peer]
    unexpected = {
        (r.scenario, r.revision, r.exit_code): r.stderr_tail[-3:]
        for r in runs
        if r.exit_code
        not in ends.get((r.scenario, r.revision, transport), (set(), ""))[0]
        | ({1} if r.scenario in REFUSING else {0})
    }
    assert unexpected == {}, unexpected
    verdicts = {f"{v.id}@{v.revision}/{v.transport}": v for v in run.verdicts}
    assert verdicts, "nothing was judged"

    def listed(table: dict[str, dict[str, str]]) -> set[str]:
        return set(table[peer]) & set(verdicts)

    failed = {key: v.problems for key, v in verdicts.items() if v.status not in (PASS, SKIP)}
    skipped = {key: v.problems for key, v in verdicts.items() if v.status == SKIP}
    assert set(failed) - listed(MAY_FAIL) == listed(FAILS), failed
    assert all(verdicts[key].status == FAIL for key in failed), failed  # (no judge errored)
    assert set(skipped) == listed(SKIPS), skipped
    passed = {v.id for v in run.verdicts if v.status == PASS}
    allowed = {key.split("@")[0] for key in listed(FAILS) | listed(MAY_FAIL) | listed(SKIPS)}
    assert expected - allowed <= passed, expected - allowed - passed


def _assert_era(runs: list[ScenarioRun]) -> None:
    """The era the revision asks for: initialize at a handshake revision; the per-request envelope
    (server/discover first, no initialize) at 2026-07-28."""
    for scenario_run in runs:
        if scenario_run.scenario in REFUSING:
            continue  # (refused before any MCP request got through)
        sent = scenario_run.initialize()
        if scenario_run.scenario in FALLBACK:  # refused in the modern era first, then the handshake
            assert sent is not None, scenario_run.scenario
            assert sent[1]["params"]["protocolVersion"] != M, scenario_run.scenario
        elif scenario_run.revision != M:
            assert sent is not None, scenario_run.scenario
            # (the SDK asks its latest handshake revision; a 2025-03-26 server answers with its own)
            assert sent[1]["params"]["protocolVersion"] == L, scenario_run.scenario
        else:
            assert sent is None, scenario_run.scenario
            methods = [message.get("method") for _, message in scenario_run.client_requests()]
            assert "server/discover" in methods, (scenario_run.scenario, methods)


@pytest.mark.parametrize("revision", [L, M])
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("peer", PEERS)
def test_the_sdk_client_passes_requirement_by_requirement(
    peer: str, transport: str, revision: str, request: pytest.FixtureRequest
) -> None:
    scenarios = [name for name in SCENARIOS if name not in NOT_PLAYED[peer]]
    run, runs = _run(_peer(peer, request), transport, [revision], scenarios)
    assert {r.scenario for r in runs} >= {"tools_call", "progress", "cancellation"}
    expected = CORE[revision] | (HTTP_ONLY if transport == "http" else STDIO_ONLY)[revision]
    if not NOT_PLAYED[peer]:
        expected |= SKILL_REQUIREMENTS
    _assert_verdicts(peer, run, runs, transport, expected)
    _assert_era(runs)


@pytest.mark.parametrize("part", sorted(AUTH_PARTS))
@pytest.mark.parametrize("peer", PEERS)
def test_the_sdk_client_authorizes_requirement_by_requirement(
    peer: str, part: str, request: pytest.FixtureRequest
) -> None:
    """The authorization scenarios (HTTP), with each SDK's OAuth support: at 2025-11-25 (and the
    two back-compat ones at 2025-03-26), and at 2026-07-28."""
    revisions, scenarios = AUTH_PARTS[part]
    run, runs = _run(_peer(peer, request), "http", revisions, scenarios)
    spec = load_client_spec()
    assert {(r.scenario, r.revision) for r in runs} == {
        (name, rev) for name in scenarios for rev in revisions if rev in spec.scenarios[name].revisions
    }
    judged = {v.id for v in run.verdicts}
    expected = set().union(*(AUTH_CORE[rev] for rev in revisions)) & judged
    assert len(expected) >= 5, expected
    _assert_verdicts(peer, run, runs, "http", expected)
    _assert_era(runs)


def test_the_drivers_refuse_what_they_do_not_play(typescript_sdk: list[str]) -> None:
    """What a driver's SDK offers no public API for (an authorization extension; the skills
    extension's host side, for the Python SDK): exit 2 and why, before any connection (no URL is
    reached)."""
    cases = [(argv, "auth/dpop", "an extension (DPoP)") for argv in (PYTHON_SDK, typescript_sdk)]
    cases += [(PYTHON_SDK, name, "no host-side skills API") for name in NOT_PLAYED["python-sdk"]]
    for argv, scenario, why in cases:
        env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": scenario, "MCP_CONFORMANCE_PROTOCOL_VERSION": M}
        done = subprocess.run(
            [*argv, "http://127.0.0.1:9/mcp"], env=env, capture_output=True, text=True, timeout=RUN
        )
        assert done.returncode == 2, done.stderr
        assert "is not played by the" in done.stderr and why in done.stderr, done.stderr


def test_the_typescript_driver_is_locked() -> None:
    """The TypeScript SDK's client comes from the lock file, at the version the docs name."""
    lock = json.loads((HERE / "clients" / "ts" / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/@modelcontextprotocol/client"]["version"] == "2.4.0"
    assert lock["packages"]["node_modules/@modelcontextprotocol/client"]["integrity"].startswith("sha512-")


# A stdio server (2025-11-25) that writes test_progress's three notifications/progress and its
# result in one write: the client reads them in one chunk, in order.
ONE_WRITE_SERVER = """
import json, sys
def answer(request, result):
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}
for line in sys.stdin:
    request = json.loads(line)
    if "id" not in request:
        continue
    out = [answer(request, {})]
    if request["method"] == "initialize":
        info = {"name": "one-write", "version": "1"}
        result = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": info}
        out = [answer(request, result)]
    elif request["method"] == "tools/list":
        out = [answer(request, {"tools": [{"name": "test_progress", "inputSchema": {"type": "object"}}]})]
    elif request["method"] == "tools/call":
        token = request["params"]["_meta"]["progressToken"]
        out = [
            {"jsonrpc": "2.0", "method": "notifications/progress",
             "params": {"progressToken": token, "progress": step, "total": 3}}
            for step in (1, 2, 3)
        ] + [answer(request, {"content": [{"type": "text", "text": "done"}]})]
    sys.stdout.write("".join(json.dumps(message) + "\\n" for message in out))
    sys.stdout.flush()
"""


def test_the_typescript_sdk_loses_progress_read_with_its_response(
    typescript_sdk: list[str], tmp_path: Path
) -> None:
    """The progress notifications come before the result, in one read: the Python SDK hands all
    three to the progress callback; the TypeScript SDK none (the driver says so and exits 1)."""
    server = tmp_path / "one_write_server.py"
    server.write_text(ONE_WRITE_SERVER, encoding="utf-8")
    env = {
        **os.environ,
        "MCP_CONFORMANCE_SCENARIO": "progress",
        "MCP_CONFORMANCE_PROTOCOL_VERSION": L,
        "MCP_CONFORMANCE_SERVER_COMMAND": json.dumps([sys.executable, str(server)]),
    }
    python = subprocess.run(PYTHON_SDK, env=env, capture_output=True, text=True, timeout=RUN)
    assert python.returncode == 0, python.stderr
    typescript = subprocess.run(typescript_sdk, env=env, capture_output=True, text=True, timeout=RUN)
    assert typescript.returncode == 1, typescript.stderr
    assert "no notifications/progress reached the onprogress callback" in typescript.stderr
