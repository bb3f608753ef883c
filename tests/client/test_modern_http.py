"""The client over HTTP in the stateless revision: the headers every modern POST carries (checked
against a scripted server under real uvicorn that records them), no session, cancellation by
closing the response stream, era detection from the body of a 4xx; and the header encoding rules."""

from __future__ import annotations

import base64
import contextlib
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError, RequestTimeout
from jsonrpc_mcp.transports.http import HttpClientStream
from jsonrpc_mcp.transports.http._mcp_headers import encode_header_value, header_parameters, modern_headers
from tests import timeouts
from tests.interop.servers.sdk_http_serving import ThreadedServer
from tests.transports.test_http_client import Reply, Script, Seen

from ..modern.support import MODERN, PROTOCOL_VERSION, discover_result, initialize_result

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP
WEATHER = {
    "name": "weather",
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "days": {"type": "integer", "x-mcp-header": "Days"},
            "metric": {"type": "boolean", "x-mcp-header": "Metric"},
            "where": {
                "type": "object",
                "properties": {"zip": {"type": "string", "x-mcp-header": "Zip"}},
            },
            "note": {"type": "string"},
        },
    },
}


class ModernServer:
    """A scripted 2026-07-28 endpoint: each POST is answered on its own (``answer`` may be replaced);
    anything carrying a session id, and every GET or DELETE, is counted as a mistake."""

    def __init__(self) -> None:
        self.answer = self.normal

    async def __call__(self, seen: Seen, reply: Reply) -> None:
        if seen.method != "POST":
            await reply.empty(405)
            return
        message = seen.message()
        if "id" not in message:
            await reply.empty(202)
            return
        await self.answer(seen, message, reply)

    async def normal(self, seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        method = message["method"]
        if method == "server/discover":
            value: Any = discover_result()
        elif method == "tools/list":
            value = {"resultType": "complete", "tools": [WEATHER], "ttlMs": 0, "cacheScope": "public"}
        else:
            value = {"resultType": "complete", "echo": message.get("params")}
        await reply.json({"jsonrpc": "2.0", "id": message["id"], "result": value})


@pytest.fixture(scope="module")
def running() -> Iterator[tuple[ThreadedServer, Script]]:
    script = Script()
    with ThreadedServer(script) as server:
        yield server, script


@pytest.fixture
def modern(running: tuple[ThreadedServer, Script]) -> ModernServer:
    server = ModernServer()
    running[1].reset(server)
    return server


@pytest.fixture
def script(running: tuple[ThreadedServer, Script], modern: ModernServer) -> Script:
    return running[1]


@pytest.fixture
def url(running: tuple[ThreadedServer, Script]) -> str:
    return running[0].url("/mcp")


def connect(url: str, **options: Any) -> Any:
    options.setdefault("request_timeout", TIMEOUT)
    options.setdefault("timeout", TIMEOUT)
    options.setdefault("mode", MODERN)
    return Client.http(url, **options)


def _b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


# -- the request headers --------------------------------------------------------------------------
async def test_every_modern_post_carries_protocol_version_and_method(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.list_prompts()
    posts = script.requests("POST")
    assert [seen.rpc_method for seen in posts] == ["server/discover", "prompts/list"]
    for seen in posts:
        assert seen.headers["mcp-protocol-version"] == MODERN
        assert seen.headers["mcp-method"] == seen.rpc_method
        assert seen.message()["params"]["_meta"][PROTOCOL_VERSION] == MODERN


async def test_modern_posts_carry_no_session_and_open_no_get_stream_nor_delete(
    url: str, script: Script
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.call_tool("weather", {"region": "eu"})
    assert [seen.method for seen in script.requests()] == ["POST", "POST"]
    assert all("mcp-session-id" not in seen.headers for seen in script.requests())


async def test_the_protocol_version_header_is_the_one_in_the_envelope(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False) as client:
            await client.request("tools/list", {"_meta": {PROTOCOL_VERSION: "2026-12-31"}})
    assert script.requests("POST")[0].headers["mcp-protocol-version"] == "2026-12-31"


@pytest.mark.parametrize(
    ("call", "method", "name"),
    [
        (lambda c: c.call_tool("weather", {"region": "eu"}), "tools/call", "weather"),
        (lambda c: c.get_prompt("greet", {"who": "me"}), "prompts/get", "greet"),
        (lambda c: c.read_resource("file:///notes/a.txt"), "resources/read", "file:///notes/a.txt"),
    ],
)
async def test_mcp_name_mirrors_the_name_or_uri(
    url: str, script: Script, call: Any, method: str, name: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False) as client:
            await call(client)
    [seen] = script.requests("POST", rpc=method)
    assert seen.headers["mcp-name"] == name


async def test_other_methods_carry_no_mcp_name(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
    assert all("mcp-name" not in seen.headers for seen in script.requests("POST"))


@pytest.mark.parametrize(
    "name",
    ["caf\u00e9", " padded", "tab\there", "=?base64?abc?="],
    ids=["non-ascii", "space", "control", "sentinel"],
)
async def test_a_name_that_is_not_plain_visible_ascii_is_sent_base64(
    url: str, script: Script, name: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False) as client:
            await client.call_tool(name, {})
    assert script.requests("POST")[0].headers["mcp-name"] == _b64(name)


async def test_x_mcp_header_arguments_are_mirrored_once_the_tool_list_is_known(
    url: str, script: Script
) -> None:
    arguments = {"region": "eu-west", "days": 3, "metric": False, "where": {"zip": "75001"}, "note": "n"}
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
            await client.call_tool("weather", arguments)
    [call] = script.requests("POST", rpc="tools/call")
    params = {name: value for name, value in call.headers.items() if name.startswith("mcp-param-")}
    assert params == {
        "mcp-param-region": "eu-west",
        "mcp-param-days": "3",
        "mcp-param-metric": "false",
        "mcp-param-zip": "75001",
    }


async def test_absent_and_null_arguments_get_no_param_header(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
            await client.call_tool("weather", {"region": None, "days": 1})
    [call] = script.requests("POST", rpc="tools/call")
    assert [name for name in call.headers if name.startswith("mcp-param-")] == ["mcp-param-days"]


async def test_a_param_value_that_is_not_plain_ascii_is_sent_base64(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
            await client.call_tool("weather", {"region": "Z\u00fcrich"})
    [call] = script.requests("POST", rpc="tools/call")
    assert call.headers["mcp-param-region"] == _b64("Z\u00fcrich")


async def test_without_the_tool_list_no_param_headers_are_sent(url: str, script: Script) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(url) as client:
            await client.call_tool("weather", {"region": "eu"})
    [call] = script.requests("POST", rpc="tools/call")
    assert not [name for name in call.headers if name.startswith("mcp-param-")]


async def test_legacy_requests_after_a_fallback_carry_no_modern_headers(
    url: str, script: Script, modern: ModernServer
) -> None:
    async def handshake_only(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        if message["method"] == "initialize":
            body = {"jsonrpc": "2.0", "id": message["id"], "result": initialize_result()}
            await reply.json(body, headers=[("mcp-session-id", "sess-1")])
        elif message["method"] == "server/discover":
            error = {"code": -32600, "message": "Bad Request: No valid session ID provided"}
            await reply.json({"jsonrpc": "2.0", "id": message["id"], "error": error}, status=400)
        else:
            await reply.json(
                {"jsonrpc": "2.0", "id": message["id"], "result": {"echo": message.get("params")}}
            )

    modern.answer = handshake_only
    with anyio.fail_after(TIMEOUT):
        async with connect(url, mode="auto") as client:
            assert client.protocol_version == "2025-11-25"
            await client.call_tool("weather", {"region": "eu"})
    [call] = script.requests("POST", rpc="tools/call")
    assert call.headers["mcp-session-id"] == "sess-1"
    assert call.headers["mcp-protocol-version"] == "2025-11-25"
    assert "mcp-method" not in call.headers
    assert "_meta" not in call.message()["params"]


# -- errors and cancellation ----------------------------------------------------------------------
async def test_a_modern_error_in_a_400_body_reaches_the_caller(url: str, modern: ModernServer) -> None:
    async def refuse(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        error = {"code": -32020, "message": "Header mismatch", "data": {"header": "Mcp-Name"}}
        await reply.json({"jsonrpc": "2.0", "id": message["id"], "error": error}, status=400)

    modern.answer = refuse
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False) as client:
            with pytest.raises(JsonRpcError) as raised:
                await client.call_tool("weather", {})
    assert (raised.value.code, raised.value.data) == (-32020, {"header": "Mcp-Name"})


async def test_auto_mode_retries_at_the_revision_a_400_with_32022_names(
    url: str, script: Script, modern: ModernServer
) -> None:
    async def picky(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        if len(script.requests("POST")) == 1:
            data = {"supported": [MODERN], "requested": MODERN}
            error = {"code": -32022, "message": "Unsupported protocol version", "data": data}
            await reply.json({"jsonrpc": "2.0", "id": message["id"], "error": error}, status=400)
        else:
            await modern.normal(seen, message, reply)

    modern.answer = picky
    with anyio.fail_after(TIMEOUT):
        async with connect(url, mode="auto") as client:
            assert client.protocol_version == MODERN
    assert [seen.rpc_method for seen in script.requests("POST")] == ["server/discover", "server/discover"]


async def test_cancelling_a_modern_request_closes_its_stream_and_posts_nothing(
    url: str, script: Script, modern: ModernServer
) -> None:
    async def never(seen: Seen, message: dict[str, Any], reply: Reply) -> None:
        await reply.wait_disconnect()

    modern.answer = never
    with anyio.fail_after(TIMEOUT):
        async with connect(url, initialize=False) as client:
            with pytest.raises(RequestTimeout):
                await client.request("tools/call", {"name": "slow"}, timeout=0.2)
            [hung] = script.requests("POST")
            assert await anyio.to_thread.run_sync(hung.disconnected.wait, TIMEOUT)
    assert [seen.rpc_method for seen in script.requests("POST")] == ["tools/call"]


# -- the encoding rules ---------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["get_weather", "file:///a b/c.txt", "a=?b", "", "x" * 300])
def test_plain_visible_ascii_is_sent_as_it_is(value: str) -> None:
    assert encode_header_value(value) == value


@pytest.mark.parametrize(
    "value", ["\u65e5\u672c", "trailing ", "\tlead", "line\nbreak", "del\x7f", "=?base64?eA==?="]
)
def test_anything_else_is_base64_of_its_utf8(value: str) -> None:
    encoded = encode_header_value(value)
    assert encoded.startswith("=?base64?") and encoded.endswith("?=")
    assert base64.b64decode(encoded[len("=?base64?") : -2]).decode("utf-8") == value


def test_header_parameters_follow_properties_only() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-mcp-header": "A"},
            "o": {"type": "object", "properties": {"b": {"type": "integer", "x-mcp-header": "B"}}},
            "bad": {"type": "string", "x-mcp-header": "not a token"},
        },
        "anyOf": [{"properties": {"c": {"type": "string", "x-mcp-header": "C"}}}],
    }
    assert header_parameters(schema) == [(("a",), "A"), (("o", "b"), "B")]


def test_modern_headers_are_none_for_handshake_era_messages() -> None:
    assert modern_headers({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}) is None
    notification = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"_meta": {PROTOCOL_VERSION: MODERN}},
    }
    assert modern_headers(notification) is None


def test_modern_headers_render_numbers_and_booleans() -> None:
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "t", "arguments": {"n": 42.0, "f": True}, "_meta": {PROTOCOL_VERSION: MODERN}},
    }
    headers = dict(modern_headers(message, [(("n",), "N"), (("f",), "F")]) or [])
    assert headers[b"mcp-param-N"] == b"42"
    assert headers[b"mcp-param-F"] == b"true"
    assert headers[b"mcp-name"] == b"t"


# -- against our own server over HTTP -------------------------------------------------------------
def _our_server() -> Server:
    server = Server("ours-modern-http", "2.0.0")
    region = {"type": "string", "x-mcp-header": "Region"}
    server.add_tool(
        "forecast",
        lambda region, days=1: f"sunny in {region} for {days}",
        input_schema={"type": "object", "properties": {"region": region, "days": {"type": "integer"}}},
    )

    @server.tool()
    async def who(ctx: Context) -> str:
        """Ask who is there."""
        answer = await ctx.elicit("Who?", {"type": "object", "properties": {"name": {"type": "string"}}})
        return f"hello {answer['content']['name']}"

    return server


@pytest.fixture(scope="module")
def ours() -> Iterator[tuple[Server, dict[str, str]]]:
    """One of our servers behind three apps: SSE answers, JSON answers, stateless."""
    server = _our_server()
    apps = {
        "sse": server.http_app(),
        "json": server.http_app(json_response=True),
        "stateless": server.http_app(stateless=True),
    }
    with contextlib.ExitStack() as stack:
        yield (
            server,
            {kind: stack.enter_context(ThreadedServer(app)).url("/mcp") for kind, app in apps.items()},
        )


KINDS = ["sse", "json", "stateless"]


@pytest.mark.parametrize("kind", KINDS)
async def test_auto_mode_reaches_the_modern_era_with_our_http_server(
    ours: tuple[Server, dict[str, str]], kind: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(ours[1][kind], mode="auto") as client:
            assert client.protocol_version == MODERN
            assert client.server_info["name"] == "ours-modern-http"
            stream = client._stream
            assert isinstance(stream, HttpClientStream)
            assert stream.session_id is None


@pytest.mark.parametrize("kind", KINDS)
async def test_our_http_server_accepts_the_param_headers_once_the_tools_are_listed(
    ours: tuple[Server, dict[str, str]], kind: str
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(ours[1][kind]) as client:
            with pytest.raises(JsonRpcError) as raised:
                await client.call_tool("forecast", {"region": "Z\u00fcrich"})
            await client.list_tools()
            called = await client.call_tool("forecast", {"region": "Z\u00fcrich", "days": 2})
    assert raised.value.code == -32020
    assert called["content"] == [{"type": "text", "text": "sunny in Z\u00fcrich for 2"}]


@pytest.mark.parametrize("kind", KINDS)
async def test_input_requests_of_our_http_server_are_answered(
    ours: tuple[Server, dict[str, str]], kind: str
) -> None:
    async def elicit(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Ada"}}

    options = {"capabilities": {"elicitation": {}}, "request_handlers": {"elicitation/create": elicit}}
    with anyio.fail_after(TIMEOUT):
        async with connect(ours[1][kind], **options) as client:
            called = await client.call_tool("who")
    assert called["content"] == [{"type": "text", "text": "hello Ada"}]


@pytest.mark.parametrize("kind", ["sse", "json"])
async def test_listen_over_http_gets_changes_and_ends_by_closing_its_stream(
    ours: tuple[Server, dict[str, str]], kind: str
) -> None:
    server, urls = ours
    with anyio.fail_after(TIMEOUT):
        async with connect(urls[kind]) as client:
            async with client.listen({"toolsListChanged": True}) as subscription:
                server.add_tool(f"added_for_{kind}", lambda: "new")
                method, params = await subscription.receive()
            assert subscription.ended
            tools = await client.list_tools()  # the connection is still usable
    assert method == "notifications/tools/list_changed"
    assert params["_meta"]["io.modelcontextprotocol/subscriptionId"] == subscription.id
    assert f"added_for_{kind}" in {tool["name"] for tool in tools}
