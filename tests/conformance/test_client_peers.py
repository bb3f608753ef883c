"""``jsonrpc-mcp conformance client`` against the official SDKs' clients (issue 27's proof, the peers).

Two drivers play the harness's scenarios with an SDK's public API only: ``clients/sdk_client.py``
(the official Python SDK, the ``mcp`` package of the dev environment) and ``clients/ts/client.mjs``
(the official TypeScript SDK's client, ``@modelcontextprotocol/client``, installed from its lock by
``clients/ts_client.py``). Each runs over HTTP and over stdio, at the latest revision of each era,
as real subprocesses against scenario servers on 127.0.0.1 port 0; every requirement is asserted
one by one: each passes, except those ``FAILS`` lists with the reason (none today), and every run
ends with exit status 0 but those ``ENDS`` lists, each with what was read on the wire. The drivers
also play the authorization scenarios (``auth/*``, with each SDK's OAuth support); this harness has
none yet, so they are run against the official suite by hand (docs/conformance.md).
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
from jsonrpc_mcp_conformance.runner import PASS, Run
from tests.timeouts import RUN

HERE = Path(__file__).resolve().parent
PYTHON_SDK = [sys.executable, str(HERE / "clients" / "sdk_client.py")]
CLIENT_TIMEOUT = 45.0  # one scenario's client run (starting Node.js or importing the SDK on a loaded machine)
L, M = "2025-11-25", "2026-07-28"
# Every scenario of the harness but the authorization ones (each run at the revisions it has of L
# and M: a handshake-era and a 2026-07-28 test per peer and transport, each a few seconds a run).
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
)
# peer -> the "requirement@revision/transport" verdicts it fails, each with the reason read on the wire
FAILS: dict[str, dict[str, str]] = {"python-sdk": {}, "typescript-sdk": {}}
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
    },
}
HTTP_ONLY = {
    L: {
        "client:http:accept",
        "client:http:session-id",
        "client:http:protocol-version-header",
        "client:sse:reconnect",
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


def _run(argv: Sequence[str], transport: str, revision: str) -> tuple[Run, list[ScenarioRun]]:
    spec = load_client_spec()
    options = ClientOptions(revisions=(revision,), transports=(transport,), timeout=CLIENT_TIMEOUT)
    return anyio.run(run_client_conformance, list(argv), spec, spec.requirements, options, SCENARIOS)


@pytest.mark.parametrize("revision", [L, M])
@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("peer", ["python-sdk", "typescript-sdk"])
def test_the_sdk_client_passes_requirement_by_requirement(
    peer: str, transport: str, revision: str, request: pytest.FixtureRequest
) -> None:
    run, runs = _run(_peer(peer, request), transport, revision)
    # it played every scenario to its end (but those ENDS lists, each ending as it says)
    ends = ENDS[peer]
    unexpected = {
        (r.scenario, r.exit_code): r.stderr_tail[-3:]
        for r in runs
        if r.exit_code not in ends.get((r.scenario, r.revision, transport), (set(), ""))[0] | {0}
    }
    assert unexpected == {}, unexpected
    played = {r.scenario for r in runs}
    assert {scenario for scenario, rev, via in ends if rev == revision and via == transport} <= played
    verdicts = {f"{v.id}@{v.revision}/{v.transport}": v for v in run.verdicts}
    failing = {key: v.problems for key, v in verdicts.items() if v.status != PASS}
    assert set(failing) == {key for key in FAILS[peer] if f"@{revision}/{transport}" in key}, failing
    expected = CORE[revision] | (HTTP_ONLY[revision] if transport == "http" else set())
    passed = {v.id for v in run.verdicts if v.status == PASS}
    assert expected <= passed, expected - passed
    # the era the revision asks for: initialize at 2025-11-25, the per-request envelope at 2026-07-28
    for scenario_run in runs:
        sent = scenario_run.initialize()
        if scenario_run.revision == L:
            assert sent is not None and sent[1]["params"]["protocolVersion"] == L, scenario_run.scenario
        else:
            assert sent is None, scenario_run.scenario
            methods = [message.get("method") for _, message in scenario_run.client_requests()]
            assert "server/discover" in methods, (scenario_run.scenario, methods)


def test_the_drivers_refuse_what_they_do_not_play(typescript_sdk: list[str]) -> None:
    """An authorization extension they do not play: exit 2 and why, before any connection (no URL
    is reached)."""
    env = {**os.environ, "MCP_CONFORMANCE_SCENARIO": "auth/dpop", "MCP_CONFORMANCE_PROTOCOL_VERSION": M}
    for argv in (PYTHON_SDK, typescript_sdk):
        done = subprocess.run(
            [*argv, "http://127.0.0.1:9/mcp"], env=env, capture_output=True, text=True, timeout=RUN
        )
        assert done.returncode == 2, done.stderr
        assert "is not played by the" in done.stderr and "an extension (DPoP)" in done.stderr


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
