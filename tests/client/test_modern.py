"""The client's eras: modern mode (the envelope on every request, server/discover) and auto mode
(probe server/discover, fall back to initialize on anything but modern evidence)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, NoCommonVersion, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.revisions import HANDSHAKE_REVISIONS
from jsonrpc_mcp.testing import connect
from tests import timeouts

from ..modern.support import (
    CLIENT_CAPABILITIES,
    CLIENT_INFO,
    LOG_LEVEL,
    MODERN,
    PROTOCOL_VERSION,
    Send,
    discover_result,
    error,
    initialize_result,
    meta_of,
    result,
    scripted_server,
    sent_frames,
)

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP
HANDSHAKE_ONLY = Path(__file__).resolve().parents[1] / "modern" / "servers" / "handshake_only.py"


def _server(*, modern: bool = True) -> Server:
    if modern:
        server = Server("era", "3.1.4", instructions="Both eras.")
    else:
        server = Server("era", "3.1.4", instructions="Both eras.", revisions=HANDSHAKE_REVISIONS)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text."""
        return text

    server.add_resource("era://note", lambda: "a note")
    server.add_prompt("hello", lambda: "hello there")
    return server


# -- modern mode ----------------------------------------------------------------------------------
async def test_modern_mode_connects_with_server_discover_and_no_initialize() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        sent = sent_frames(client)
    assert [frame["method"] for frame in sent] == ["server/discover"]
    assert client.protocol_version == MODERN
    assert client.is_modern


async def test_modern_mode_envelope_carries_version_capabilities_and_client_info() -> None:
    caps: dict[str, Any] = {"roots": {}, "elicitation": {"form": {}}}
    info = {"name": "probe", "version": "9"}
    async with connect(_server(), mode=MODERN, recorder=True, capabilities=caps, client_info=info) as client:
        await client.list_tools()
        sent = sent_frames(client)
    for frame in sent:
        assert meta_of(frame) == {PROTOCOL_VERSION: MODERN, CLIENT_CAPABILITIES: caps, CLIENT_INFO: info}


async def test_modern_mode_every_request_carries_the_envelope() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        await client.list_tools()
        await client.call_tool("echo", {"text": "hi"})
        await client.list_resources()
        await client.list_resource_templates()
        await client.read_resource("era://note")
        await client.list_prompts()
        await client.get_prompt("hello")
        sent = sent_frames(client)
    assert len(sent) == 8
    assert all(meta_of(frame)[PROTOCOL_VERSION] == MODERN for frame in sent)
    assert all(CLIENT_CAPABILITIES in meta_of(frame) for frame in sent)


async def test_modern_mode_sends_the_arguments_beside_the_envelope() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        await client.call_tool("echo", {"text": "hi"})
        call = sent_frames(client)[-1]
    assert {key: value for key, value in call["params"].items() if key != "_meta"} == {
        "name": "echo",
        "arguments": {"text": "hi"},
    }


async def test_modern_results_keep_result_type_and_server_info() -> None:
    async with connect(_server(), mode=MODERN) as client:
        called = await client.call_tool("echo", {"text": "hi"})
    assert called["resultType"] == "complete"
    assert called["content"] == [{"type": "text", "text": "hi"}]
    assert called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "era"


async def test_modern_mode_reads_server_info_capabilities_and_instructions_from_discover() -> None:
    async with connect(_server(), mode=MODERN) as client:
        assert client.discover_result["supportedVersions"] == [MODERN]
        assert client.server_info["name"] == "era"
        assert client.server_info["version"] == "3.1.4"
        assert {"tools", "resources", "prompts"} <= set(client.server_capabilities)
        assert client.instructions == "Both eras."
        assert client.initialize_result == {}


async def test_modern_mode_without_connecting_still_stamps_every_request() -> None:
    async with connect(_server(), mode=MODERN, initialize=False, recorder=True) as client:
        called = await client.call_tool("echo", {"text": "x"})
        sent = sent_frames(client)
    assert [frame["method"] for frame in sent] == ["tools/call"]
    assert meta_of(sent[0])[PROTOCOL_VERSION] == MODERN
    assert called["content"] == [{"type": "text", "text": "x"}]


async def test_log_level_goes_into_the_envelope() -> None:
    async with connect(_server(), mode=MODERN, recorder=True, log_level="warning") as client:
        await client.list_tools()
        assert meta_of(sent_frames(client)[-1])[LOG_LEVEL] == "warning"


async def test_without_a_log_level_the_envelope_has_none() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        await client.list_tools()
        assert LOG_LEVEL not in meta_of(sent_frames(client)[-1])


async def test_set_logging_level_in_modern_mode_sends_nothing_and_stamps_later_requests() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        before = len(client.wire.sent)  # type: ignore[attr-defined]
        await client.set_logging_level("error")
        assert len(client.wire.sent) == before  # type: ignore[attr-defined]
        await client.list_prompts()
        assert meta_of(sent_frames(client)[-1])[LOG_LEVEL] == "error"


async def test_meta_given_by_the_caller_is_kept_beside_the_envelope() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        await client.request(
            "tools/call", {"name": "echo", "arguments": {"text": "t"}, "_meta": {"progressToken": 7}}
        )
        meta = meta_of(sent_frames(client)[-1])
    assert meta["progressToken"] == 7
    assert meta[PROTOCOL_VERSION] == MODERN


async def test_envelope_keys_given_by_the_caller_win() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.request("tools/list", {"_meta": {PROTOCOL_VERSION: "1900-01-01"}})
    assert raised.value.code == -32022
    assert raised.value.data["requested"] == "1900-01-01"


async def test_request_without_envelope_sends_params_exactly() -> None:
    async with connect(_server(), mode=MODERN, recorder=True) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.request("server/discover", {}, envelope=False)
        assert sent_frames(client)[-1]["params"] == {}
    assert raised.value.code == -32602  # a modern-only method without its envelope


async def test_discover_naming_no_revision_we_speak_raises() -> None:
    async def respond(frame: dict[str, Any], send: Send) -> Any:
        return result(frame, discover_result(["2099-01-01"]))

    async with scripted_server(respond) as (stream, _), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT), pytest.raises(NoCommonVersion):
            await client.connect()


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="mode"):
        Client(None, mode="2099-01-01")  # type: ignore[arg-type]


async def test_legacy_is_the_default_mode() -> None:
    async with connect(_server(), recorder=True) as client:
        sent = sent_frames(client)
    assert client.mode == "legacy"
    assert [frame["method"] for frame in sent] == ["initialize", "notifications/initialized"]
    assert client.protocol_version == "2025-11-25"


async def test_legacy_mode_requests_carry_no_envelope() -> None:
    async with connect(_server(), mode="legacy", recorder=True) as client:
        await client.call_tool("echo", {"text": "hi"})
        assert sent_frames(client)[-1]["params"] == {"name": "echo", "arguments": {"text": "hi"}}


# -- auto mode against real servers ---------------------------------------------------------------
async def test_auto_mode_reaches_the_modern_era_on_a_dual_era_server() -> None:
    async with connect(_server(), mode="auto", recorder=True) as client:
        await client.call_tool("echo", {"text": "hi"})
        sent = sent_frames(client)
    assert client.protocol_version == MODERN
    assert [frame["method"] for frame in sent] == ["server/discover", "tools/call"]
    assert meta_of(sent[1])[PROTOCOL_VERSION] == MODERN


async def test_auto_mode_falls_back_to_initialize_on_a_handshake_only_server() -> None:
    async with connect(_server(modern=False), mode="auto", recorder=True) as client:
        await client.call_tool("echo", {"text": "hi"})
        sent = sent_frames(client)
    assert client.protocol_version == "2025-11-25"
    assert not client.is_modern
    assert [frame["method"] for frame in sent] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert sent[-1]["params"] == {"name": "echo", "arguments": {"text": "hi"}}
    assert client.server_info == {"name": "era", "version": "3.1.4"}


async def test_auto_mode_fallback_asks_initialize_for_the_configured_revision() -> None:
    async with connect(_server(modern=False), mode="auto", protocol_version="2025-03-26") as client:
        assert client.protocol_version == "2025-03-26"


async def test_auto_mode_over_stdio_reaches_the_modern_era(repo_root: Path) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", "examples/everything/server.py"]
    with anyio.fail_after(timeouts.STARTUP):
        async with Client.stdio(command, cwd=repo_root, mode="auto", request_timeout=TIMEOUT) as client:
            assert client.protocol_version == MODERN
            called = await client.call_tool("test_simple_text")
    assert called["resultType"] == "complete"
    assert called["content"][0]["text"] == "This is a simple text response for testing."


async def test_auto_mode_over_stdio_falls_back_on_a_handshake_only_server(repo_root: Path) -> None:
    command = [sys.executable, "-m", "jsonrpc_mcp", "serve", str(HANDSHAKE_ONLY)]
    with anyio.fail_after(timeouts.STARTUP):
        async with Client.stdio(command, cwd=repo_root, mode="auto", request_timeout=TIMEOUT) as client:
            assert client.protocol_version == "2025-11-25"
            called = await client.call_tool("echo", {"text": "old"})
    assert called == {"content": [{"type": "text", "text": "old"}]}


# -- auto mode against scripted servers -----------------------------------------------------------
def _handshake_after(discover_answer: Any) -> Any:
    """A peer answering server/discover with ``discover_answer(frame)`` and initialize normally."""

    async def respond(frame: dict[str, Any], send: Send) -> Any:
        method = frame.get("method")
        if method == "server/discover":
            return discover_answer(frame)
        if method == "initialize":
            return result(frame, initialize_result())
        return None

    return respond


async def _auto(respond: Any, **options: Any) -> tuple[Client, list[dict[str, Any]]]:
    async with (
        scripted_server(respond) as (stream, received),
        Client(stream, mode="auto", **options) as client,
    ):
        with anyio.fail_after(TIMEOUT):
            await client.connect()
    return client, received


@pytest.mark.parametrize("code", [-32601, -32600, -32602, -32603, -32000, -32002, -32020, -32021, -32022, 1])
async def test_auto_mode_falls_back_whatever_the_probe_error_code(code: int) -> None:
    client, received = await _auto(_handshake_after(lambda frame: error(frame, code)))
    assert client.protocol_version == "2025-11-25"
    assert [frame.get("method") for frame in received] == [
        "server/discover",
        "initialize",
        "notifications/initialized",
    ]


async def test_auto_mode_falls_back_when_the_probe_times_out() -> None:
    client, received = await _auto(_handshake_after(lambda frame: None), probe_timeout=0.2)
    assert client.protocol_version == "2025-11-25"
    methods = [frame.get("method") for frame in received]
    assert methods == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "notifications/initialized",
    ]
    assert received[1]["params"]["requestId"] == received[0]["id"]


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"resultType": "complete", "capabilities": {}},
        {"resultType": "input_required", "supportedVersions": [MODERN], "capabilities": {}},
        {"resultType": "complete", "supportedVersions": MODERN, "capabilities": {}},
        discover_result(["2025-11-25"]),
    ],
    ids=["empty", "no-versions", "not-complete", "versions-not-a-list", "no-modern-version"],
)
async def test_auto_mode_falls_back_on_a_result_that_is_no_usable_discover_result(answer: Any) -> None:
    client, received = await _auto(_handshake_after(lambda frame: result(frame, answer)))
    assert client.protocol_version == "2025-11-25"
    assert [frame.get("method") for frame in received][:2] == ["server/discover", "initialize"]


async def test_auto_mode_retries_the_probe_at_a_revision_named_by_32022() -> None:
    answers: Iterator[Callable[[dict[str, Any]], dict[str, Any]]] = iter(
        [
            lambda frame: error(frame, -32022, "Unsupported", {"supported": [MODERN], "requested": MODERN}),
            lambda frame: result(frame, discover_result()),
        ]
    )
    client, received = await _auto(_handshake_after(lambda frame: next(answers)(frame)))
    assert client.protocol_version == MODERN
    assert [frame.get("method") for frame in received] == ["server/discover", "server/discover"]
    assert received[0]["id"] != received[1]["id"]
    assert meta_of(received[1])[PROTOCOL_VERSION] == MODERN


async def test_auto_mode_falls_back_when_32022_names_no_revision_we_speak() -> None:
    refuse = lambda frame: error(frame, -32022, "Unsupported", {"supported": ["2099-01-01"]})  # noqa: E731
    client, received = await _auto(_handshake_after(refuse))
    assert client.protocol_version == "2025-11-25"
    assert [frame.get("method") for frame in received][:2] == ["server/discover", "initialize"]


async def test_auto_mode_reprobes_when_initialize_is_refused_with_32022() -> None:
    """A probe answered after its timeout locked the (SDK-style) server into the modern era."""
    probes = 0

    async def respond(frame: dict[str, Any], send: Send) -> Any:
        nonlocal probes
        if frame.get("method") == "server/discover":
            probes += 1
            return None if probes == 1 else result(frame, discover_result())
        if frame.get("method") == "initialize":
            return error(
                frame, -32022, "modern connection", {"supported": [MODERN], "requested": "2025-11-25"}
            )
        return None

    client, received = await _auto(respond, probe_timeout=0.2)
    assert client.protocol_version == MODERN
    assert [frame.get("method") for frame in received] == [
        "server/discover",
        "notifications/cancelled",
        "initialize",
        "server/discover",
    ]


async def test_auto_mode_raises_when_initialize_fails_after_the_probe() -> None:
    async def respond(frame: dict[str, Any], send: Send) -> Any:
        return error(frame, -32601, "nothing here") if "id" in frame else None

    async with scripted_server(respond) as (stream, _), Client(stream, mode="auto") as client:
        with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError) as raised:
            await client.connect()
    assert raised.value.code == -32601
    assert client.protocol_version is None


async def test_auto_mode_probe_uses_the_clients_capabilities() -> None:
    caps: dict[str, Any] = {"sampling": {}}
    client, received = await _auto(
        _handshake_after(lambda frame: result(frame, discover_result())), capabilities=caps
    )
    assert meta_of(received[0])[CLIENT_CAPABILITIES] == caps
    assert client.server_info == {"name": "scripted", "version": "1"}
    assert client.server_capabilities == {"tools": {}}
    assert client.instructions == "Scripted."
