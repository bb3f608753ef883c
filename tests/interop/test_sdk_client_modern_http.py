"""Our HTTP client in the 2026-07-28 era against a server written with the official SDK.

The SDK's Streamable HTTP app serves modern requests one POST at a time and checks the request
headers against the body (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name`` with its base64
form, ``Mcp-Param-*`` for ``x-mcp-header`` arguments), answering -32020 when they disagree: a call
that succeeds is a call whose headers the SDK accepted. A recorder in front of the app notes what
each HTTP request carried.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any

import anyio
import pytest
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from jsonrpc_mcp import Client, JsonRpcError

from .interop_support import CALL_TIMEOUT, CONNECT_TIMEOUT
from .servers.sdk_http_serving import ThreadedServer

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"


def _app(json_response: bool) -> Any:
    server = MCPServer("sdk-modern-http", version="7.0.0", instructions="Headers are checked.")

    @server.tool()
    def forecast(
        region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})], days: int = 1
    ) -> str:
        """The weather of a region."""
        return f"sunny in {region} for {days} day(s)"

    @server.resource("notes://{name}", mime_type="text/plain")
    def note(name: str) -> str:
        return f"the note called {name}"

    @server.prompt(name="greet")
    def greet(name: str) -> str:
        return f"Greet {name}."

    return server.streamable_http_app(json_response=json_response)


class Recorder:
    """ASGI middleware noting the method and headers of each HTTP request."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {name.decode().lower(): value.decode() for name, value in scope["headers"]}
            self.requests.append((scope["method"], headers))
        await self.app(scope, receive, send)


@pytest.fixture(scope="module", params=["json", "sse"])
def served(request: pytest.FixtureRequest) -> Iterator[tuple[str, Recorder]]:
    recorder = Recorder(_app(json_response=request.param == "json"))
    with ThreadedServer(recorder) as running:
        yield running.url("/mcp"), recorder


def connect(url: str, **options: Any) -> Any:
    options.setdefault("mode", "auto")
    return Client.http(url, request_timeout=CALL_TIMEOUT, timeout=CALL_TIMEOUT, **options)


async def test_auto_mode_reaches_2026_07_28_without_a_session(served: tuple[str, Recorder]) -> None:
    url, recorder = served
    recorder.requests.clear()
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            assert client.protocol_version == MODERN
            assert client.server_info == {"name": "sdk-modern-http", "version": "7.0.0"}
            assert client.instructions == "Headers are checked."
            await client.list_tools()
    assert [method for method, _ in recorder.requests] == ["POST", "POST"]
    assert all("mcp-session-id" not in headers for _, headers in recorder.requests)
    assert [headers["mcp-method"] for _, headers in recorder.requests] == ["server/discover", "tools/list"]


async def test_a_call_with_an_x_mcp_header_argument_is_accepted_once_tools_are_listed(
    served: tuple[str, Recorder],
) -> None:
    url, recorder = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            await client.list_tools()
            recorder.requests.clear()
            called = await client.call_tool("forecast", {"region": "Z\u00fcrich", "days": 2})
    assert called["content"][0]["text"] == "sunny in Z\u00fcrich for 2 day(s)"
    [(_, headers)] = recorder.requests
    assert headers["mcp-name"] == "forecast"
    assert headers["mcp-param-region"].startswith("=?base64?")


async def test_without_the_tool_list_the_sdk_refuses_the_missing_param_header(
    served: tuple[str, Recorder],
) -> None:
    url, _ = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            with pytest.raises(JsonRpcError) as raised:
                await client.call_tool("forecast", {"region": "north"})
    assert raised.value.code == -32020


async def test_a_uri_that_needs_base64_in_mcp_name_is_read(served: tuple[str, Recorder]) -> None:
    url, recorder = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            recorder.requests.clear()
            read = await client.read_resource("notes://caf\u00e9 au lait")
    assert read["contents"][0]["text"] == "the note called caf\u00e9 au lait"
    assert recorder.requests[0][1]["mcp-name"].startswith("=?base64?")


async def test_a_prompt_is_got_with_its_name_header(served: tuple[str, Recorder]) -> None:
    url, recorder = served
    with anyio.fail_after(CONNECT_TIMEOUT):
        async with connect(url) as client:
            recorder.requests.clear()
            prompt = await client.get_prompt("greet", {"name": "Bo"})
    assert prompt["messages"][0]["content"]["text"] == "Greet Bo."
    assert recorder.requests[0][1]["mcp-name"] == "greet"
