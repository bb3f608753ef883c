"""The official MCP Python SDK's client (default ``auto`` mode, so 2026-07-28) drives our multi
round-trip requests over stdio, answering through its elicitation / sampling / roots callbacks;
in ``legacy`` mode the same tools send it real requests. Retries work on another process that
shares the state key (NOTES.md §10 D17)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.context import ClientRequestContext
from mcp.shared.exceptions import MCPError

from jsonrpc_mcp.server._mrtr import STATE_FILE_ENV, STATE_KEY_ENV
from tests import timeouts

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[3]
SERVER = Path(__file__).resolve().parent / "mrtr_server.py"
TIMEOUT = timeouts.STARTUP  # starting a subprocess, connecting (the SDK is slow to import) and a few rounds


def _params(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "jsonrpc_mcp", "serve", str(SERVER)], env=env, cwd=REPO
    )


class Answers:
    """The SDK client's callbacks, answering fixed results and recording what they were asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Any]] = []

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.asked.append(("elicitation/create", params.message))
        return types.ElicitResult(action="accept", content={"name": "Ada", "ok": True})

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.asked.append(("sampling/createMessage", params.max_tokens))
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="blue"), model="sdk-model"
        )

    async def roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        self.asked.append(("roots/list", None))
        return types.ListRootsResult(
            roots=[types.Root.model_validate({"uri": "file:///work/project", "name": "project"})]
        )

    def client(self, mode: str = "auto", **options: Any) -> Client:
        return Client(
            _params(options.pop("env", None)),
            mode=mode,
            read_timeout_seconds=TIMEOUT,
            elicitation_callback=self.elicit,
            sampling_callback=self.sample,
            list_roots_callback=self.roots,
            **options,
        )


def _text(result: types.CallToolResult) -> str:
    return "".join(block.text for block in result.content if isinstance(block, types.TextContent))


async def test_the_sdk_client_answers_three_rounds_through_its_callbacks() -> None:
    answers = Answers()
    with anyio.fail_after(TIMEOUT):
        async with answers.client() as client:
            version = client.protocol_version
            result = await client.call_tool("survey", {"topic": "tea"})
    assert version == "2026-07-28"
    assert result.is_error is not True
    assert json.loads(_text(result)) == {
        "who": "Ada",
        "model": "sdk-model",
        "says": "blue",
        "roots": [{"uri": "file:///work/project", "name": "project"}],
    }
    assert answers.asked == [
        ("elicitation/create", "Who is asking about tea?"),
        ("sampling/createMessage", 20),
        ("roots/list", None),
    ]


async def test_the_sdk_client_completes_a_prompt_and_a_resource_that_ask() -> None:
    answers = Answers()
    with anyio.fail_after(TIMEOUT):
        async with answers.client() as client:
            prompt = await client.get_prompt("interview", {"topic": "tea"})
            read = await client.read_resource("vault://secret")
    message = prompt.messages[0].content
    assert isinstance(message, types.TextContent) and message.text == "Interview Ada about tea"
    content = read.contents[0]
    assert isinstance(content, types.TextResourceContents) and content.text == "the secret"


async def test_an_sdk_client_without_the_callback_gets_error_32021() -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(_params(), read_timeout_seconds=TIMEOUT) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("greet")
    assert caught.value.error.code == -32021
    assert caught.value.error.data == {"requiredCapabilities": {"elicitation": {}}}


async def test_the_same_tool_sends_real_requests_to_a_legacy_sdk_client() -> None:
    answers = Answers()
    with anyio.fail_after(TIMEOUT):
        async with answers.client(mode="legacy") as client:
            version = client.protocol_version
            result = await client.call_tool("survey", {"topic": "tea"})
    assert version == "2025-11-25"
    assert json.loads(_text(result))["who"] == "Ada"
    assert [method for method, _ in answers.asked] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]


async def _round_one_then_retry_elsewhere(
    env_a: dict[str, str], env_b: dict[str, str]
) -> types.CallToolResult | MCPError:
    """The first round on one server process, the retry on another (as behind a load balancer)."""
    answers = Answers()
    with anyio.fail_after(TIMEOUT):
        async with answers.client(env=env_a) as first:
            pending = await first.session.call_tool("greet", {}, allow_input_required=True)
        assert isinstance(pending, types.InputRequiredResult)
        assert pending.input_requests is not None and list(pending.input_requests) == ["elicit-1"]
        accepted = types.ElicitResult(action="accept", content={"name": "Ada"})
        async with answers.client(env=env_b) as second:
            try:
                return await second.call_tool(
                    "greet", {}, input_responses={"elicit-1": accepted}, request_state=pending.request_state
                )
            except MCPError as exc:
                return exc


async def test_a_retry_is_served_by_another_process_sharing_the_key() -> None:  # D17
    shared = {STATE_KEY_ENV: "the-key-every-worker-shares-0123456789"}
    result = await _round_one_then_retry_elsewhere(shared, shared)
    assert isinstance(result, types.CallToolResult)
    assert _text(result) == "Hello, Ada!"


async def test_without_a_key_processes_share_the_per_user_key_file() -> None:  # D17 by default
    result = await _round_one_then_retry_elsewhere({}, {})
    assert isinstance(result, types.CallToolResult)
    assert _text(result) == "Hello, Ada!"


async def test_without_any_shared_key_another_process_refuses_the_retry() -> None:
    own = {STATE_FILE_ENV: ""}  # no key file: each process draws its own key
    error = await _round_one_then_retry_elsewhere(own, own)
    assert isinstance(error, MCPError)
    assert error.error.code == -32602
    assert "requestState failed verification" in error.error.message
