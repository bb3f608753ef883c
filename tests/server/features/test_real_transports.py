"""The feature server as a real process, driven by the official MCP Python SDK's client (its
callbacks answer sampling, elicitation and roots; it receives logging and progress) over stdio
(``serve feature_server.py``) and over Streamable HTTP (``serve feature_server.py --http --port N``,
where the server's requests travel on the tools/call POST's SSE stream); and by our client over HTTP."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from pydantic import FileUrl

from jsonrpc_mcp import Client as OurClient

from .support import (
    ACCEPTED,
    REPO,
    ROOTS,
    SAMPLED,
    SERVE,
    START_TIMEOUT,
    TIMEOUT,
    Inbox,
    answers,
    http_server,
)

pytestmark = pytest.mark.anyio


class Callbacks:
    """The SDK client's callbacks, recording what the server asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []
        self.logs: list[types.LoggingMessageNotificationParams] = []

    async def sampling(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(("sampling", params))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="4"), model="sdk-model"
        )

    async def elicitation(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append(("elicitation", params))
        return types.ElicitResult(action="accept", content={"name": "Grace", "age": 85})

    async def roots(self, context: Any) -> types.ListRootsResult:
        self.asked.append(("roots", None))
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl("file:///sdk/root"), name="sdk")])

    async def logging(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    def client(self, server: Any) -> Client:
        return Client(
            server,
            mode="legacy",
            read_timeout_seconds=TIMEOUT,
            sampling_callback=self.sampling,
            elicitation_callback=self.elicitation,
            list_roots_callback=self.roots,
            logging_callback=self.logging,
        )


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


@pytest.fixture
async def stdio_sdk() -> AsyncIterator[tuple[Client, Callbacks]]:
    callbacks = Callbacks()
    params = StdioServerParameters(command=SERVE[0], args=SERVE[1:], cwd=REPO)
    with anyio.fail_after(START_TIMEOUT):
        async with callbacks.client(params) as client:
            yield client, callbacks


async def _exercise(client: Client, callbacks: Callbacks) -> None:
    """Sampling, elicitation and roots through tools; the SDK's callbacks answer them."""
    with anyio.fail_after(TIMEOUT):
        sampled = await client.call_tool("ask_model", {"question": "2+2?"})
        elicited = await client.call_tool("ask_user")
        roots = await client.call_tool("show_roots")
    assert _text(sampled) == "sdk-model says 4"
    assert json.loads(_text(elicited)) == {"action": "accept", "content": {"name": "Grace", "age": 85}}
    assert json.loads(_text(roots)) == [{"uri": "file:///sdk/root", "name": "sdk"}]
    kinds = [kind for kind, _ in callbacks.asked]
    assert kinds == ["sampling", "elicitation", "roots"]
    sampling = callbacks.asked[0][1]
    assert sampling.max_tokens == 50
    assert sampling.system_prompt == "Answer briefly."


async def test_the_sdk_client_answers_sampling_elicitation_and_roots_over_stdio(
    stdio_sdk: tuple[Client, Callbacks],
) -> None:
    await _exercise(*stdio_sdk)


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_the_sdk_client_receives_filtered_log_messages_over_stdio(
    stdio_sdk: tuple[Client, Callbacks],
) -> None:
    client, callbacks = stdio_sdk
    with anyio.fail_after(TIMEOUT):
        await client.set_logging_level("error")
        await client.call_tool("log_every_level")
    assert [m.level for m in callbacks.logs] == ["error", "critical", "alert", "emergency"]
    assert callbacks.logs[0].logger == "levels"


async def test_the_sdk_client_receives_progress_over_stdio(stdio_sdk: tuple[Client, Callbacks]) -> None:
    client, _ = stdio_sdk
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        await client.call_tool("count_up", {"steps": 2}, progress_callback=progress)
    assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]


async def test_the_sdk_client_completes_over_stdio(stdio_sdk: tuple[Client, Callbacks]) -> None:
    client, _ = stdio_sdk
    with anyio.fail_after(TIMEOUT):
        result = await client.complete(
            types.PromptReference(type="ref/prompt", name="greet"),
            {"name": "name", "value": "al"},
            context_arguments={"style": "formal"},
        )
    assert result.completion.values == ["Alice", "Albert"]


async def test_the_sdk_client_answers_the_servers_requests_over_http() -> None:
    callbacks = Callbacks()
    with http_server() as url:
        with anyio.fail_after(START_TIMEOUT):
            async with callbacks.client(url) as client:
                await _exercise(client, callbacks)
                with anyio.fail_after(TIMEOUT):
                    await client.call_tool("log_from_thread")
    assert [(m.level, m.logger, m.data) for m in callbacks.logs] == [
        ("info", "features", "first"),
        ("warning", "features.db", "second 2"),
        ("error", "features", {"third": 3}),
    ]


async def test_our_client_answers_the_servers_requests_over_http() -> None:
    inbox = Inbox()
    handlers = answers(sampling=SAMPLED, elicitation=ACCEPTED, roots=ROOTS)
    caps: dict[str, Any] = {"sampling": {}, "elicitation": {}, "roots": {}}
    with http_server() as url:
        with anyio.fail_after(START_TIMEOUT):
            async with OurClient.http(
                url, capabilities=caps, request_handlers=handlers, on_notification=inbox
            ) as c:
                sampled = await c.call_tool("ask_model", {"question": "?"})
                elicited = await c.call_tool("ask_user")
                roots = await c.call_tool("show_roots")
                progress = await c.request(
                    "tools/call",
                    {"name": "count_up", "arguments": {"steps": 2}, "_meta": {"progressToken": "h"}},
                )
    assert sampled["content"][0]["text"] == "test-model says 4"
    assert json.loads(elicited["content"][0]["text"]) == ACCEPTED
    assert json.loads(roots["content"][0]["text"]) == ROOTS
    assert progress["content"][0]["text"] == "counted to 2"
    assert [p["progress"] for p in inbox.of("notifications/progress")] == [1, 2]


@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_resource_updates_reach_the_sdk_client_over_http() -> None:
    updated: list[str] = []
    arrived = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))
            arrived.set()

    with http_server() as url:
        with anyio.fail_after(START_TIMEOUT):
            async with Client(
                url, mode="legacy", read_timeout_seconds=TIMEOUT, message_handler=on_message
            ) as client:
                await client.subscribe_resource("res://watched")
                result = await client.call_tool("touch", {"uri": "res://watched"})
                await arrived.wait()
    assert _text(result) == "told 1"
    assert updated == ["res://watched"]
