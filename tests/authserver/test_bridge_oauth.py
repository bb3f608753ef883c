"""``jsonrpc-mcp bridge URL --auth oauth`` end to end, as a person would run it from a desktop host:
examples/everything served by ``serve --http --auth-*`` behind oidc-provider, the bridge spawned over
stdio by the official Python SDK client and by the TypeScript SDK 1.x client, the browser step done
by a ``$BROWSER`` command that follows the redirects (as a browser whose user is already signed in
would), tokens kept in a file so that the second client needs no browser at all."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from tests import timeouts

from ..proxy.support import CALL_TIMEOUT, REPO, START_TIMEOUT, environment, held_open, jsonrpc_mcp
from ..proxy.test_bridge import _typescript_sdk
from .oidc_provider import OidcProvider
from .support import ProtectedServer, protected_server

pytestmark = pytest.mark.anyio

BROWSER = """#!{python}
# a browser whose user is signed in already: follow every redirect, the last one to the loopback
import sys
import httpx

with open({log!r}, "a", encoding="utf-8") as log:
    log.write(sys.argv[1] + "\\n")
with httpx.Client(follow_redirects=True, timeout={timeout}) as http:
    answer = http.get(sys.argv[1])
sys.exit(0 if answer.status_code == 200 else 1)
"""


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def protected(oidc_provider: OidcProvider) -> Iterator[ProtectedServer]:
    scope = ("--auth-required-scope", "mcp:read")
    with protected_server(oidc_provider.issuer, oidc_provider.jwks_url, *scope) as server:
        yield server


@pytest.fixture(scope="module")
def desktop() -> Iterator[tuple[dict[str, str], Path]]:
    """The environment a desktop host would give the bridge: $BROWSER, and a token file of its own;
    also the file each browser visit is written to."""
    with tempfile.TemporaryDirectory() as folder:
        visits = Path(folder) / "visits.txt"
        browser = Path(folder) / "browser"
        browser.write_text(
            BROWSER.format(python=sys.executable, log=str(visits), timeout=timeouts.STEP), encoding="utf-8"
        )
        browser.chmod(browser.stat().st_mode | stat.S_IXUSR)
        env = environment(BROWSER=str(browser), JSONRPC_MCP_TOKENS=str(Path(folder) / "tokens.json"))
        env.pop("DISPLAY", None)
        yield env, visits


async def _elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"username": "ada", "email": "ada@example.com"})


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


async def test_the_sdk_client_through_the_bridge_with_oauth(
    protected: ProtectedServer, desktop: tuple[dict[str, str], Path]
) -> None:
    env, visits = desktop
    command = jsonrpc_mcp("--log-level", "info", "bridge", protected.url, "--auth", "oauth")
    params = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=REPO)
    reports: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append(progress)

    with tempfile.TemporaryFile("w+") as errlog:
        transport = stdio_client(params, errlog=errlog)
        sdk = SdkClient(
            transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT, elicitation_callback=_elicit
        )
        async with held_open(sdk) as client:
            with anyio.fail_after(CALL_TIMEOUT):
                tools = {tool.name for tool in (await client.list_tools()).tools}
                assert {"test_simple_text", "test_tool_with_progress", "test_elicitation"} <= tools
                simple = await client.call_tool("test_simple_text", {})
                assert _texts(simple) == ["This is a simple text response for testing."]
                await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
                elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
                assert "ada@example.com" in _texts(elicited)[0]
        errlog.seek(0)
        said = errlog.read()
    assert reports == [0, 50, 100]
    visited = _visits(visits)
    assert len(visited) == 1 and "code_challenge_method=S256" in visited[0], said
    assert _mode(Path(env["JSONRPC_MCP_TOKENS"])) == 0o600
    assert "eyJ" not in said  # no token in the bridge's log


async def test_the_typescript_sdk_client_through_the_bridge_to_the_stateless_revision(
    protected: ProtectedServer, desktop: tuple[dict[str, str], Path]
) -> None:
    found = _typescript_sdk()
    if found is None:
        pytest.skip(
            "the TypeScript SDK 1.x is not installed under .cache (make conformance-official installs it)"
        )
    node, modules = found
    env, visits = desktop
    before = _visits(visits)
    bridge = jsonrpc_mcp("--log-level", "info", "bridge", protected.url, "--auth", "oauth",
                         "--upstream-mode", "2026-07-28")  # fmt: skip
    script = Path(__file__).parents[1] / "proxy" / "ts_client.cjs"
    with anyio.fail_after(START_TIMEOUT + CALL_TIMEOUT):
        done = await anyio.run_process(
            [str(node), str(script), *bridge], cwd=REPO, env={**env, "NODE_PATH": str(modules)}, check=False
        )
    said = done.stderr.decode()
    assert done.returncode == 0, said
    got = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert got["simple"]["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    assert "ts@example.com" in got["elicited"]["content"][0]["text"]
    assert got["progress"][:2] == [0, 50]
    assert "(protocol revision 2026-07-28)" in said
    after = _visits(visits)
    if before:  # the SDK test ran first and kept the tokens: no second browser visit
        assert after == before
    else:
        assert len(after) == 1
    assert _mode(Path(env["JSONRPC_MCP_TOKENS"])) == 0o600


def _visits(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_call_with_oauth_runs_the_whole_flow_in_the_browser(
    protected: ProtectedServer, desktop: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, visits = desktop
    before = _visits(visits)
    env = {**env, "JSONRPC_MCP_TOKENS": str(tmp_path / "tokens.json")}  # no token yet: the browser
    command = jsonrpc_mcp("call", "--auth", "oauth", protected.url, "--tool", "test_simple_text")
    done = subprocess.run(
        command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=START_TIMEOUT + CALL_TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "This is a simple text response for testing." in done.stdout
    assert len(_visits(visits)) == len(before) + 1
    assert "eyJ" not in done.stdout + done.stderr  # the token is never shown
    again = subprocess.run(
        command, cwd=REPO, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=START_TIMEOUT + CALL_TIMEOUT,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert len(_visits(visits)) == len(before) + 1  # the second run used the stored token
