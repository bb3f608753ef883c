"""The client the official suite's client mode runs (``official/client.py``), on the wire against a
server of ours: it reads the suite's environment variables, speaks the revision the suite names
(the handshake, or the stateless era), makes the scenario's calls, and when it fails says why in one
line (never a traceback).

The official suite itself (Node) is run by ``make conformance-official`` only, as for the server
runs; these tests drive the same command the suite runs, the way the suite runs it."""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Context, Server, ToolError
from jsonrpc_mcp.http import McpHttpApp
from jsonrpc_mcp.revisions import LATEST_HANDSHAKE
from jsonrpc_mcp_conformance.official import client as driver
from tests import timeouts

from ..http.support import serving

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
RUN_TIMEOUT = timeouts.RUN  # the driver subprocess: importing, connecting, a few requests


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Seen:
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)  # (tool, args, revision)


@pytest.fixture(scope="module")
async def served() -> AsyncIterator[tuple[str, Seen]]:
    seen = Seen()
    server = Server("driver-peer")

    @server.tool()
    def add_numbers(a: float, b: float, ctx: Context) -> str:
        seen.calls.append(("add_numbers", {"a": a, "b": b}, ctx.revision.version))
        return f"The sum of {a} and {b} is {a + b}"

    @server.tool()
    def broken(ctx: Context) -> str:
        raise ToolError("this tool always fails")

    app = McpHttpApp(server)
    async with serving(app) as base:
        yield base + "/mcp", seen


async def run_driver(url: str, scenario: str, version: str | None, context: Any = None) -> tuple[int, str]:
    """``python -m jsonrpc_mcp_conformance.official.client URL`` as the suite runs it."""
    env = dict(os.environ, MCP_CONFORMANCE_SCENARIO=scenario, PYTHONPATH=str(REPO))
    env.pop("MCP_CONFORMANCE_PROTOCOL_VERSION", None)
    env.pop("MCP_CONFORMANCE_CONTEXT", None)
    if version is not None:
        env["MCP_CONFORMANCE_PROTOCOL_VERSION"] = version
    if context is not None:
        env["MCP_CONFORMANCE_CONTEXT"] = json.dumps({"name": scenario, **context})
    with anyio.fail_after(RUN_TIMEOUT):
        finished = await anyio.run_process(
            [sys.executable, "-m", driver.CLIENT_MODULE, url], env=env, check=False, stdin=None
        )
    return finished.returncode, finished.stderr.decode(errors="replace")


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2026-07-28", None])
async def test_tools_call_speaks_the_revision_the_suite_names(
    served: tuple[str, Seen], version: str | None
) -> None:
    url, seen = served
    before = len(seen.calls)
    status, stderr = await run_driver(url, "tools_call", version)
    assert (status, stderr) == (0, "")
    # the one tool listed first, called as the scenario wants, at the revision asked for (none: our latest)
    assert seen.calls[before:] == [("add_numbers", {"a": 2, "b": 3}, version or LATEST_HANDSHAKE.version)]


async def test_a_failing_step_is_one_line_and_exit_status_1(served: tuple[str, Seen]) -> None:
    url, _ = served
    context = {"toolCalls": [{"name": "broken", "arguments": {}}]}
    status, stderr = await run_driver(url, "http-custom-headers", "2026-07-28", context)
    assert status == 1
    assert stderr.splitlines() == [
        f"{driver.PROG}: http-custom-headers: tool 'broken' answered an error: "
        "[{'type': 'text', 'text': 'this tool always fails'}]"
    ]


async def test_a_server_that_is_not_there_is_one_line_too() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:  # bound, never listening
        held.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{held.getsockname()[1]}/mcp"
        status, stderr = await run_driver(closed, "tools_call", "2025-11-25")
    assert status == 1
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{driver.PROG}: tools_call: ")
    assert "Traceback" not in stderr


async def test_a_scenario_it_does_not_play_says_so(served: tuple[str, Seen]) -> None:
    url, _ = served
    status, stderr = await run_driver(url, "auth/dpop", "2026-07-28")
    assert status == 2
    assert stderr == f"{driver.PROG}: auth/dpop: not played: {driver.UNSUPPORTED['auth/dpop']}\n"
    status, stderr = await run_driver(url, "no-such-scenario", None)
    assert status == 2 and "no such scenario" in stderr


@pytest.mark.parametrize(
    ("version", "options"),
    [
        ("2026-07-28", {"mode": "2026-07-28"}),
        ("2025-11-25", {"mode": "legacy", "protocol_version": "2025-11-25"}),
        ("2025-03-26", {"mode": "legacy", "protocol_version": "2025-03-26"}),
        (None, {"mode": "legacy"}),
        ("1999-01-01", {"mode": "legacy"}),
    ],
)
def test_the_mode_follows_the_protocol_version(version: str | None, options: dict[str, Any]) -> None:
    assert driver.client_options(version) == options


def test_the_context_is_read_as_the_suite_writes_it() -> None:
    setting = driver.Setting.from_environment(
        "http://127.0.0.1:1/mcp",
        {
            "MCP_CONFORMANCE_SCENARIO": "auth/pre-registration",
            "MCP_CONFORMANCE_PROTOCOL_VERSION": "2025-11-25",
            "MCP_CONFORMANCE_CONTEXT": json.dumps({"name": "auth/pre-registration", "client_id": "c"}),
        },
    )
    assert (setting.scenario, setting.protocol_version, setting.text("client_id")) == (
        "auth/pre-registration",
        "2025-11-25",
        "c",
    )
    with pytest.raises(driver.ScenarioFailed, match="no 'client_secret'"):
        setting.text("client_secret")
    with pytest.raises(driver.ScenarioFailed, match="not JSON"):
        driver.Setting.from_environment("u", {"MCP_CONFORMANCE_CONTEXT": "{"})


async def test_elicitation_defaults_are_the_forms_own() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "free": {"type": "string"},
        },
    }
    answer = await driver.accept_with_defaults({"message": "m", "requestedSchema": schema})
    assert answer == {"action": "accept", "content": {"name": "John Doe", "age": 30}}
