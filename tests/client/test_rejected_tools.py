"""Tools whose ``x-mcp-header`` declarations are invalid, on the wire: in 2026-07-28 over HTTP the
client leaves them out of ``list_tools`` (one warning each) and refuses to call them without sending
anything; ``raw_tools=True`` shows and calls every tool; over other transports and in the handshake
era the list is the server's as it was.

The server is our own, under real uvicorn on 127.0.0.1, behind an ASGI layer that records the
JSON-RPC method and tool name of every POST body, so "nothing was sent" is what the server saw."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.client import RejectedToolError
from jsonrpc_mcp.testing import connect as connect_in_memory
from tests import timeouts
from tests.interop.servers.sdk_http_serving import ThreadedServer

from ..modern.support import MODERN

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"  # the HTTP server is uvicorn in a thread of this process, as in test_modern_http


def _schema(**properties: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


VALID = "valid_tool"
INVALID = {
    "invalid_empty_header": _schema(value={"type": "string", "x-mcp-header": ""}),
    "invalid_object_header": _schema(data={"type": "object", "x-mcp-header": "Data"}),
    "invalid_number_header": _schema(score={"type": "number", "x-mcp-header": "Score"}),
    "invalid_duplicate_diff_case": _schema(
        field1={"type": "string", "x-mcp-header": "MyField"},
        field2={"type": "string", "x-mcp-header": "myfield"},
    ),
    "invalid_colon_in_name": _schema(value={"type": "string", "x-mcp-header": "Region:Primary"}),
    "invalid_control_char_name": _schema(value={"type": "string", "x-mcp-header": "Region\t1"}),
    "invalid_under_items": _schema(
        tags={"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}
    ),
}
ALL = [VALID, *INVALID]


class Recorder:
    """An ASGI layer that notes ``(method, params.name)`` of each JSON-RPC request POSTed through it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[Any, Any]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []

        async def tee() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
                if not message.get("more_body"):
                    self._note(b"".join(chunks))
            return message

        await self.app(scope, tee, send)

    def _note(self, body: bytes) -> None:
        try:
            message = orjson.loads(body)
        except orjson.JSONDecodeError:
            return
        if isinstance(message, dict) and "id" in message:
            params = message.get("params")
            self.requests.append(
                (message.get("method"), params.get("name") if isinstance(params, dict) else None)
            )

    def calls(self) -> list[Any]:
        return [name for method, name in self.requests if method == "tools/call"]


def _server(called: list[str]) -> Server:
    server = Server("header-rules", "1.0.0")

    def handler(name: str) -> Any:
        def run(**arguments: Any) -> str:
            called.append(name)
            return f"{name} ran"

        return run

    region = {"type": "string", "x-mcp-header": "Region"}
    server.add_tool(VALID, handler(VALID), input_schema=_schema(region=region))
    for name, schema in INVALID.items():  # (our Server registers them: the rules bind the client)
        server.add_tool(name, handler(name), input_schema=schema)
    return server


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, Recorder, list[str]]]:
    called: list[str] = []
    recorder = Recorder(_server(called).http_app())
    with ThreadedServer(recorder) as running:
        yield running.url("/mcp"), recorder, called


@pytest.fixture
def server(served: tuple[str, Recorder, list[str]]) -> tuple[str, Recorder, list[str]]:
    _, recorder, called = served
    recorder.requests.clear()
    called.clear()
    return served


def _connect(url: str, **options: Any) -> Any:
    options.setdefault("mode", MODERN)
    return Client.http(url, request_timeout=TIMEOUT, timeout=TIMEOUT, **options)


def _names(tools: list[dict[str, Any]]) -> list[str]:
    return [tool["name"] for tool in tools]


async def test_only_the_valid_tool_is_listed_and_each_invalid_one_is_named_in_one_warning(
    server: tuple[str, Recorder, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    url, recorder, _ = server
    caplog.set_level(logging.WARNING, logger="jsonrpc_mcp.client")
    with anyio.fail_after(TIMEOUT):
        async with _connect(url) as client:
            assert _names(await client.list_tools()) == [VALID]
            warned = [r.getMessage() for r in caplog.records if r.name == "jsonrpc_mcp.client"]
            assert _names(await client.list_tools()) == [VALID]  # again: no second warning
    assert [r.getMessage() for r in caplog.records if r.name == "jsonrpc_mcp.client"] == warned
    assert len(warned) == len(INVALID)
    for name, line in zip(INVALID, warned, strict=True):
        assert line.startswith(f"tool {name!r} left out of tools/list: invalid x-mcp-header")
        assert "\n" not in line and "\t" not in line  # the control character is escaped
    assert "'myfield' repeats the header of /properties/field1" in warned[3]
    assert "/properties/tags/items" in warned[6]
    # the server did answer with every tool: the client left them out
    assert recorder.requests == [("server/discover", None), ("tools/list", None), ("tools/list", None)]


async def test_calling_an_excluded_tool_raises_and_sends_nothing(
    server: tuple[str, Recorder, list[str]],
) -> None:
    url, recorder, called = server
    with anyio.fail_after(TIMEOUT):
        async with _connect(url) as client:
            await client.list_tools()
            for name in INVALID:
                with pytest.raises(RejectedToolError) as raised:
                    await client.call_tool(name, {"value": "x"})
                assert raised.value.tool == name and raised.value.reasons
                assert repr(name) in str(raised.value) and "x-mcp-header" in str(raised.value)
                assert isinstance(raised.value, ValueError)
                with pytest.raises(RejectedToolError):
                    await client.call_tool(name, {"value": "x"}, task=True)
            result = await client.call_tool(VALID, {"region": "eu-west"})
    assert result["content"] == [{"type": "text", "text": f"{VALID} ran"}]
    assert recorder.calls() == [VALID] and called == [VALID]


async def test_raw_tools_lists_every_tool_and_lets_each_be_called(
    server: tuple[str, Recorder, list[str]], caplog: pytest.LogCaptureFixture
) -> None:
    url, recorder, called = server
    caplog.set_level(logging.WARNING, logger="jsonrpc_mcp.client")
    with anyio.fail_after(TIMEOUT):
        async with _connect(url, raw_tools=True) as client:
            assert _names(await client.list_tools()) == ALL
            result = await client.call_tool("invalid_empty_header", {"value": "x"})
    assert result["content"] == [{"type": "text", "text": "invalid_empty_header ran"}]
    assert recorder.calls() == ["invalid_empty_header"] and called == ["invalid_empty_header"]
    assert not [r for r in caplog.records if r.name == "jsonrpc_mcp.client"]


async def test_the_handshake_era_over_http_lists_every_tool(server: tuple[str, Recorder, list[str]]) -> None:
    # Mcp-Param-* headers belong to 2026-07-28: an older revision sends none, so nothing is invalid
    url, _, called = server
    with anyio.fail_after(TIMEOUT):
        async with _connect(url, mode="legacy") as client:
            assert not client.is_modern
            assert _names(await client.list_tools()) == ALL
            await client.call_tool("invalid_object_header", {"data": {}})
    assert called == ["invalid_object_header"]


async def test_the_stateless_revision_over_another_transport_lists_every_tool() -> None:
    # the revision binds clients of Streamable HTTP; over other transports the annotation means nothing
    called: list[str] = []
    with anyio.fail_after(TIMEOUT):
        async with connect_in_memory(_server(called), mode=MODERN) as client:
            assert client.is_modern
            assert _names(await client.list_tools()) == ALL
            await client.call_tool("invalid_number_header", {"score": 1.5})
    assert called == ["invalid_number_header"]
