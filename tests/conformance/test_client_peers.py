"""``jsonrpc-mcp conformance client`` against the official SDKs' clients (issue 27's proof, the peers).

Two drivers play the harness's scenarios with an SDK's public API only: ``clients/sdk_client.py``
(the official Python SDK, the ``mcp`` package of the dev environment) and ``clients/ts/client.mjs``
(the official TypeScript SDK's client, ``@modelcontextprotocol/client``, installed from its lock by
``clients/ts_client.py``). Each runs over HTTP and over stdio, at the latest revision of each era,
as real subprocesses against scenario servers on 127.0.0.1 port 0; every requirement is asserted
one by one: each passes, except those ``FAILS`` lists with the reason (none today: read the wire
below for what each peer does).
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
# The scenarios both drivers play (the harness's scenarios when they were written; a scenario added
# since is added here once the peers are known to play it).
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
)
# peer -> the "requirement@revision/transport" verdicts it fails, each with the reason read on the wire
FAILS: dict[str, dict[str, str]] = {"python-sdk": {}, "typescript-sdk": {}}
# requirements every run must have judged and passed (the run judged what matters, not nothing)
CORE = {
    "client:lifecycle:initialize-first",
    "client:lifecycle:initialized-sent",
    "client:lifecycle:client-info",
    "client:jsonrpc:request-id",
    "client:modern:meta-envelope",
    "client:modern:meta-client-info",
    "client:tools:call",
    "client:elicitation:result",
    "client:elicitation:defaults-applied",
    "client:sampling:result",
    "client:roots:result",
}
HTTP_ONLY = {
    "client:http:accept",
    "client:http:session-id",
    "client:http:protocol-version-header",
    "client:http:modern-version-header",
    "client:http:standard-headers",
    "client:http:param-headers",
    "client:modern:version-retry",
    "client:tools:invalid-x-mcp-header-excluded",
    "client:tools:valid-tool-kept",
    "client:tools:no-network-ref-deref",
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


def _run(argv: Sequence[str], transport: str) -> tuple[Run, list[ScenarioRun]]:
    spec = load_client_spec()
    options = ClientOptions(revisions=(L, M), transports=(transport,), timeout=CLIENT_TIMEOUT)
    return anyio.run(run_client_conformance, list(argv), spec, spec.requirements, options, SCENARIOS)


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("peer", ["python-sdk", "typescript-sdk"])
def test_the_sdk_client_passes_requirement_by_requirement(
    peer: str, transport: str, request: pytest.FixtureRequest
) -> None:
    run, runs = _run(_peer(peer, request), transport)
    # it played every scenario to its end
    assert {(r.scenario, r.revision): r.exit_code for r in runs if r.exit_code != 0} == {}, [
        r.stderr_tail[-3:] for r in runs if r.exit_code != 0
    ]
    verdicts = {f"{v.id}@{v.revision}/{v.transport}": v for v in run.verdicts}
    failing = {key: v.problems for key, v in verdicts.items() if v.status != PASS}
    assert set(failing) == set(FAILS[peer]), failing
    expected = CORE | (HTTP_ONLY if transport == "http" else set())
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
    """An authorization scenario: exit 2 and why, before any connection (no URL is reached)."""
    env = {
        **os.environ,
        "MCP_CONFORMANCE_SCENARIO": "auth/metadata-default",
        "MCP_CONFORMANCE_PROTOCOL_VERSION": M,
    }
    for argv in (PYTHON_SDK, typescript_sdk):
        done = subprocess.run(
            [*argv, "http://127.0.0.1:9/mcp"], env=env, capture_output=True, text=True, timeout=RUN
        )
        assert done.returncode == 2, done.stderr
        assert "is not played by the" in done.stderr and "authorization scenarios" in done.stderr


def test_the_typescript_driver_is_locked() -> None:
    """The TypeScript SDK's client comes from the lock file, at the version the docs name."""
    lock = json.loads((HERE / "clients" / "ts" / "package-lock.json").read_text(encoding="utf-8"))
    assert lock["packages"]["node_modules/@modelcontextprotocol/client"]["version"] == "2.4.0"
    assert lock["packages"]["node_modules/@modelcontextprotocol/client"]["integrity"].startswith("sha512-")
