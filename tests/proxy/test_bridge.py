"""``jsonrpc-mcp bridge``, as real subprocesses on 127.0.0.1: a stdio server forwarding to an HTTP
server, and (``--http``) a stdio server served over HTTP.

The upstream is ``examples/everything`` served with ``serve --http --port 0`` (or the proxy tests'
server restricted to the handshake revisions); the downstream clients are the official Python SDK's
(a handshake-era client: ``mode="legacy"``) and ours, in either era.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client as SdkClient
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

from jsonrpc_mcp import Client
from jsonrpc_mcp_conformance.npm import node_binary

from .support import (
    CALL_TIMEOUT,
    EVERYTHING,
    REPO,
    START_TIMEOUT,
    UPSTREAM,
    Served,
    environment,
    held_open,
    jsonrpc_mcp,
    served_http,
)

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
LATEST_HANDSHAKE = "2025-11-25"
ELICITED = {"username": "ada", "email": "ada@example.com"}
ELICITATION: dict[str, Any] = {"elicitation": {}}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
async def everything() -> AsyncIterator[Served]:
    """examples/everything over Streamable HTTP, on a port it chose (shared by the module)."""
    async with served_http(jsonrpc_mcp("serve", EVERYTHING, "--http", "--port", "0")) as served:
        yield served


@pytest.fixture(scope="module")
async def handshake_only() -> AsyncIterator[Served]:
    """The proxy tests' server, speaking only the handshake revisions, over Streamable HTTP."""
    env = environment(JSONRPC_MCP_TEST_ERA="handshake")
    async with served_http(jsonrpc_mcp("serve", str(UPSTREAM), "--http", "--port", "0"), env) as served:
        yield served


@contextlib.asynccontextmanager
async def sdk_through_bridge(
    url: str, *options: str, **callbacks: Any
) -> AsyncIterator[tuple[SdkClient, Path]]:
    """The SDK's client in its handshake-only mode, spawning ``jsonrpc-mcp bridge URL OPTIONS``;
    also the file the bridge's stderr goes to."""
    command = jsonrpc_mcp("--log-level", "info", "bridge", url, *options)
    params = StdioServerParameters(command=command[0], args=command[1:], env=environment(), cwd=REPO)
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "bridge.log"
        with log.open("w", encoding="utf-8") as errlog:
            transport = stdio_client(params, errlog=errlog)
            sdk = SdkClient(transport, mode="legacy", read_timeout_seconds=CALL_TIMEOUT, **callbacks)
            async with held_open(sdk) as entered:
                yield entered, log


async def _elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content=dict(ELICITED))


def _texts(result: Any) -> list[str]:
    return [block.text for block in result.content if getattr(block, "type", None) == "text"]


MODES = [
    ((), MODERN),
    (("--upstream-mode", "legacy"), LATEST_HANDSHAKE),
    (("--upstream-mode", MODERN), MODERN),
]


@pytest.mark.parametrize(("options", "revision"), MODES)
async def test_the_sdk_client_reaches_the_everything_server_through_the_bridge(
    everything: Served, options: tuple[str, ...], revision: str
) -> None:
    url = everything.url
    reports: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total, message))

    async with sdk_through_bridge(url, *options, elicitation_callback=_elicit) as (sdk, log):
        with anyio.fail_after(CALL_TIMEOUT):
            assert sdk.protocol_version == LATEST_HANDSHAKE  # the SDK in its handshake mode
            assert sdk.server_info is not None and sdk.server_info.name == "jsonrpc-mcp-everything"
            tools = {tool.name for tool in (await sdk.list_tools()).tools}
            assert {"test_simple_text", "test_tool_with_progress", "test_elicitation"} <= tools
            simple = await sdk.call_tool("test_simple_text", {})
            assert _texts(simple) == ["This is a simple text response for testing."]
            reported = await sdk.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
            assert "progress token" in _texts(reported)[0]
            elicited = await sdk.call_tool("test_elicitation", {"message": "Who are you?"})
            assert _texts(elicited) == [
                'User response: action=accept, content={"username":"ada","email":"ada@example.com"}'
            ]
            read = await sdk.read_resource("test://static-text")
            assert read.contents[0].text == "This is the content of the static text resource."  # type: ignore[union-attr]
            prompt = await sdk.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
            assert prompt.messages[0].content.text == "Prompt with arguments: arg1='a', arg2='b'"  # type: ignore[union-attr]
        said = log.read_text(encoding="utf-8")
    assert [r[0] for r in reports] == [0, 50, 100] and reports[1][2] == "Completed step 50 of 100"
    assert f"(protocol revision {revision})" in said, said  # the era the bridge reached the server in


async def _our_elicit(params: Any) -> Any:
    return {"action": "accept", "content": dict(ELICITED)}


HANDLERS = {"elicitation/create": _our_elicit}


async def test_our_client_in_2026_07_28_reaches_the_everything_server_through_the_bridge(
    everything: Served,
) -> None:
    seen: list[tuple[str, Any]] = []
    command = jsonrpc_mcp("bridge", everything.url)
    with anyio.fail_after(START_TIMEOUT):
        async with Client.stdio(
            command, mode=MODERN, capabilities=ELICITATION, request_handlers=HANDLERS,
            on_notification=lambda method, params: seen.append((method, params)),
            request_timeout=CALL_TIMEOUT,
        ) as client:  # fmt: skip
            assert (
                client.protocol_version == MODERN and client.server_info["name"] == "jsonrpc-mcp-everything"
            )
            elicited = await client.call_tool("test_elicitation", {"message": "Who are you?"})
            assert elicited["resultType"] == "complete"
            assert elicited["content"][0]["text"].startswith("User response: action=accept")
            params = {"name": "test_tool_with_progress", "_meta": {"progressToken": 7}}
            await client.request("tools/call", params)
            read = await client.read_resource("test://static-text")
            assert read["contents"][0]["text"] == "This is the content of the static text resource."
    progress = [params for method, params in seen if method == "notifications/progress"]
    assert [(p["progressToken"], p["progress"]) for p in progress] == [(7, 0), (7, 50), (7, 100)]


async def test_our_2026_07_28_client_reaches_a_handshake_only_server_through_the_bridge(
    handshake_only: Served,
) -> None:
    asked: list[Any] = []

    async def elicit(params: Any) -> Any:
        asked.append(params)
        return {"action": "accept", "content": {"name": "Grace"}}

    with tempfile.TemporaryFile() as errlog, anyio.fail_after(START_TIMEOUT):
        command = jsonrpc_mcp("--log-level", "info", "bridge", handshake_only.url)
        async with Client.stdio(
            command, mode=MODERN, capabilities=ELICITATION, request_handlers={"elicitation/create": elicit},
            stderr=errlog, request_timeout=CALL_TIMEOUT,
        ) as client:  # fmt: skip
            assert client.is_modern and client.server_info["name"] == "upstream"
            first = await client.request("tools/call", {"name": "greet"})
            assert first["resultType"] == "input_required"  # the proxy parked the upstream call
            greeted = await client.call_tool("greet")
            assert greeted["content"] == [{"type": "text", "text": "Hello, Grace!"}]
            assert (await client.call_tool("echo", {"text": "hi"}))["content"][0]["text"] == "hi"
        errlog.seek(0)
        said = errlog.read().decode()
    assert f"(protocol revision {LATEST_HANDSHAKE})" in said, said
    assert [params["message"] for params in asked] == ["What is your name?"]


async def test_bridge_http_serves_a_stdio_server_over_http() -> None:
    command = jsonrpc_mcp("bridge", "--http", "--port", "0", "--", *jsonrpc_mcp("serve", EVERYTHING))
    async with served_http(command) as served:
        assert served.url.startswith("http://127.0.0.1:") and not served.url.endswith(":0/mcp")
        for mode in ("legacy", MODERN):
            with anyio.fail_after(START_TIMEOUT):
                async with Client.http(
                    served.url, mode=mode, capabilities={"elicitation": {}},
                    request_handlers={"elicitation/create": _our_elicit}, request_timeout=CALL_TIMEOUT,
                ) as client:  # fmt: skip
                    assert client.server_info["name"] == "jsonrpc-mcp-everything"
                    simple = await client.call_tool("test_simple_text")
                    assert simple["content"][0]["text"] == "This is a simple text response for testing."
                    elicited = await client.call_tool("test_elicitation", {"message": "Who?"})
                    assert elicited["content"][0]["text"].startswith("User response: action=accept"), elicited


def _typescript_sdk() -> tuple[Path, Path] | None:
    """(node, the node_modules holding the official TypeScript SDK 1.x), from the npm installs the
    conformance runner and the benchmarks make under .cache; None when neither is there."""
    for prefix in (REPO / ".cache" / "conformance" / "npm", REPO / ".cache" / "bench-ts" / "npm"):
        modules = prefix / "node_modules"
        manifest = modules / "@modelcontextprotocol" / "sdk" / "package.json"
        if not (node_binary(prefix).is_file() and manifest.is_file()):
            continue
        if json.loads(manifest.read_text(encoding="utf-8"))["version"].startswith("1."):
            return node_binary(prefix), modules
    return None


async def test_the_typescript_sdk_client_reaches_the_everything_server_through_the_bridge(
    everything: Served,
) -> None:
    found = _typescript_sdk()
    if found is None:
        pytest.skip(
            "the TypeScript SDK 1.x is not installed under .cache (make conformance-official installs it)"
        )
    node, modules = found
    command = [
        str(node),
        str(Path(__file__).parent / "ts_client.cjs"),
        *jsonrpc_mcp("bridge", everything.url),
    ]
    with anyio.fail_after(START_TIMEOUT):
        done = await anyio.run_process(
            command, cwd=REPO, env=environment(NODE_PATH=str(modules)), check=False
        )
    assert done.returncode == 0, done.stderr.decode()
    got = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert got["server"]["name"] == "jsonrpc-mcp-everything"
    assert {"test_simple_text", "test_elicitation"} <= set(got["tools"])
    assert got["simple"]["content"] == [
        {"type": "text", "text": "This is a simple text response for testing."}
    ]
    # The last one is sent before the result (the other tests check the order), but this SDK hands
    # notifications to their handlers a microtask later than responses: a progress notification
    # read in the same chunk as the result arrives after its request ended, and is dropped.
    assert got["progress"] in ([0, 50], [0, 50, 100]), got["progress"]
    elicited = got["elicited"]["content"][0]["text"]
    assert elicited == 'User response: action=accept, content={"username":"ts","email":"ts@example.com"}'
    assert got["read"]["contents"][0]["text"] == "This is the content of the static text resource."


def _bridge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        jsonrpc_mcp("bridge", *args), cwd=REPO, env=environment(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=START_TIMEOUT,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("--header", "X-A: 1", "--", "python", "server.py"), "--header needs an http(s):// URL"),
        (("--auth", "oauth", "--", "python", "server.py"), "--auth needs an http(s):// server"),
        (("http://127.0.0.1:9/mcp", "--header", "no colon"), "expected 'Name: value'"),
        (("http://127.0.0.1:9/mcp", "--scope", "read"), "--scope needs --auth oauth"),
        (("--http", "--workers", "2", "--", "python", "server.py"), "--workers"),
        (("http://127.0.0.1:9/mcp", "--auth-issuer", "http://i"), "need --http"),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(args: tuple[str, ...], words: str) -> None:
    done = _bridge(*args)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith("jsonrpc-mcp bridge: ") and words in done.stderr, done.stderr


def test_an_unreachable_upstream_is_one_line_on_stderr_and_exit_1() -> None:
    import socket

    with socket.socket() as held:  # bound, not listening: nothing answers there
        held.bind(("127.0.0.1", 0))
        done = _bridge(f"http://127.0.0.1:{held.getsockname()[1]}/mcp")
    assert done.returncode == 1, done.stderr
    assert done.stdout == ""  # stdio server mode: nothing but protocol on stdout
    lines = done.stderr.strip().splitlines()
    assert lines[-1].startswith("jsonrpc-mcp bridge: the upstream server failed: "), done.stderr
    assert "Traceback" not in done.stderr
