"""Several input requests per round, under keys the handler chooses (``ctx.ask``): one
``InputRequiredResult`` carries every unanswered key (2026-07-28), handshake sessions send the
requests together, and an :class:`InputChannel` set by whoever runs the handler takes them all."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Context, Server
from jsonrpc_mcp.errors import ClientError
from jsonrpc_mcp.jsonrpc.errors import JsonRpcError
from jsonrpc_mcp.server._mrtr import current_input_channel
from jsonrpc_mcp.testing import connect, connect_raw
from tests import timeouts

from .mrtr_support import ACCEPT_ADA, ROOTS, SAMPLED, meta, modern, retry_params, text_of

pytestmark = pytest.mark.anyio

NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
COLOR = {"type": "object", "properties": {"color": {"type": "string"}}, "required": ["color"]}
BLUE = {"action": "accept", "content": {"color": "blue"}}
TIMEOUT = timeouts.STEP


def build_server(question: dict[str, str] | None = None) -> Server:
    server = Server("many", mask_errors=False)  # the developer errors are shown, not masked
    asked = question if question is not None else {"name": "What is your name?"}

    @server.tool()
    async def three(ctx: Context) -> str:
        answers = await ctx.ask(
            {
                "user_name": ctx.elicitation(asked["name"], NAME),
                "greeting": ctx.sampling(["Generate a greeting"], max_tokens=50),
                "client_roots": ctx.roots(),
            }
        )
        roots = ",".join(root["uri"] for root in answers["client_roots"])
        return f"{answers['user_name']['content']['name']}|{answers['greeting']['model']}|{roots}"

    @server.tool()
    async def two_rounds(ctx: Context) -> str:
        name = await ctx.elicit("Step 1", NAME, key="step1")
        color = await ctx.elicit("Step 2", COLOR, key="step2")
        return f"{name['content']['name']} likes {color['content']['color']}"

    @server.tool()
    async def twice(ctx: Context) -> str:
        await ctx.ask({"same": ctx.roots()})
        await ctx.list_roots(key="same")
        return "unreachable"

    return server


def _call(name: str) -> dict[str, Any]:
    return {"name": name, "arguments": {}, "_meta": meta()}


async def _round(raw: Any, params: dict[str, Any]) -> dict[str, Any]:
    response = await modern(raw, "tools/call", params)
    assert "result" in response, response
    result: dict[str, Any] = response["result"]
    return result


# -- 2026-07-28 ---------------------------------------------------------------------------------------
async def test_one_input_required_result_carries_every_key() -> None:
    async with connect_raw(build_server()) as raw:
        result = await _round(raw, _call("three"))
    assert result["resultType"] == "input_required"
    requests = result["inputRequests"]
    assert list(requests) == ["user_name", "greeting", "client_roots"]
    assert [r["method"] for r in requests.values()] == [
        "elicitation/create",
        "sampling/createMessage",
        "roots/list",
    ]
    assert requests["user_name"]["params"]["message"] == "What is your name?"


async def test_every_answer_in_one_retry_completes_the_call() -> None:
    first = _call("three")
    answers = {"user_name": ACCEPT_ADA, "greeting": SAMPLED, "client_roots": ROOTS}
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, answers))
    assert round2["resultType"] == "complete"
    assert text_of(round2) == "Ada|test-model|file:///work/project"


async def test_a_partial_answer_re_asks_only_the_rest() -> None:
    first = _call("three")
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, {"greeting": SAMPLED}))
        assert round2["resultType"] == "input_required"
        assert list(round2["inputRequests"]) == ["user_name", "client_roots"]
        rest = {"user_name": ACCEPT_ADA, "client_roots": ROOTS}
        round3 = await _round(raw, retry_params(first, round2, rest))  # greeting: from the state
    assert text_of(round3) == "Ada|test-model|file:///work/project"


async def test_missing_answers_are_asked_again_and_unexpected_entries_ignored() -> None:
    first = _call("three")
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, {"unexpected": ACCEPT_ADA}))
        answers = {"user_name": ACCEPT_ADA, "greeting": SAMPLED, "client_roots": ROOTS, "extra": BLUE}
        round3 = await _round(raw, retry_params(first, round2, answers))
    assert round2["resultType"] == "input_required"  # not an error
    assert list(round2["inputRequests"]) == ["user_name", "greeting", "client_roots"]
    assert round3["resultType"] == "complete"


async def test_an_answer_to_another_question_under_the_same_key_is_asked_again() -> None:
    question = {"name": "What is your name?"}
    first = _call("three")
    async with connect_raw(build_server(question)) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, {"user_name": ACCEPT_ADA}))
        question["name"] = "What is your full name?"  # the handler now asks something else
        rest = {"greeting": SAMPLED, "client_roots": ROOTS}
        round3 = await _round(raw, retry_params(first, round2, rest))
    assert round3["resultType"] == "input_required"
    assert list(round3["inputRequests"]) == ["user_name"]
    assert round3["inputRequests"]["user_name"]["params"]["message"] == "What is your full name?"


async def test_round_two_asks_something_new_after_round_one() -> None:
    first = _call("two_rounds")
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, {"step1": ACCEPT_ADA}))
        round3 = await _round(raw, retry_params(first, round2, {"step2": BLUE}))
    assert list(round1["inputRequests"]) == ["step1"]
    assert list(round2["inputRequests"]) == ["step2"]
    assert round2["requestState"] != round1["requestState"]
    assert text_of(round3) == "Ada likes blue"


async def test_a_key_asked_twice_in_one_run_is_a_clear_error() -> None:
    first = _call("twice")
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        round2 = await _round(raw, retry_params(first, round1, {"same": ROOTS}))
    assert round2["isError"] is True
    assert "'same' was already asked" in text_of(round2)


async def test_a_tampered_state_is_refused() -> None:
    first = _call("three")
    async with connect_raw(build_server()) as raw:
        round1 = await _round(raw, first)
        tampered = {**retry_params(first, round1, {"greeting": SAMPLED})}
        tampered["requestState"] = round1["requestState"][:-2] + "AA"
        response = await modern(raw, "tools/call", tampered)
    assert response["error"]["code"] == -32602
    assert response["error"]["data"] == {"requestState": "tampered"}


# -- handshake sessions ------------------------------------------------------------------------------
async def test_a_handshake_session_gets_the_requests_together() -> None:
    arrived: list[str] = []
    all_there = anyio.Event()

    def together(method: str, answer: dict[str, Any]) -> Any:
        async def handle(params: Any) -> Any:
            arrived.append(method)
            if len(arrived) == 3:
                all_there.set()
            with anyio.fail_after(TIMEOUT):  # each answer waits for the other two requests
                await all_there.wait()
            return answer

        return handle

    handlers = {
        "elicitation/create": together("elicitation/create", ACCEPT_ADA),
        "sampling/createMessage": together("sampling/createMessage", SAMPLED),
        "roots/list": together("roots/list", ROOTS),
    }
    capabilities: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    async with connect(build_server(), capabilities=capabilities, request_handlers=handlers) as client:
        result = await client.call_tool("three")
    assert text_of(result) == "Ada|test-model|file:///work/project"
    assert sorted(arrived) == ["elicitation/create", "roots/list", "sampling/createMessage"]


# -- the input channel seam ---------------------------------------------------------------------------
class Recorder:
    """An InputChannel answering from a table, recording what it was asked."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.asked: list[dict[str, dict[str, Any]]] = []

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        self.asked.append(requests)
        return {key: self.answers[key] for key in requests}


def _channel_server(channel: Recorder, outcome: dict[str, Any]) -> Server:
    server = Server("channel")

    @server.tool()
    async def via_channel(ctx: Context) -> str:
        token = current_input_channel.set(channel)
        try:
            outcome["many"] = await ctx.ask({"user_name": ctx.elicitation("Name?", NAME), "r": ctx.roots()})
            outcome["one"] = await ctx.sample(["hi"], key="s")
            try:
                await ctx.elicit("Name again?", NAME, key="bad")
            except ClientError as exc:
                outcome["bad"] = exc.message
        finally:
            current_input_channel.reset(token)
        return "done"

    return server


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_an_input_channel_takes_every_ask_after_the_capability_checks(mode: str) -> None:
    channel = Recorder({"user_name": ACCEPT_ADA, "r": ROOTS, "s": SAMPLED, "bad": {"action": "maybe"}})
    outcome: dict[str, Any] = {}
    capabilities: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    async with connect(_channel_server(channel, outcome), mode=mode, capabilities=capabilities) as client:
        result = await client.call_tool("via_channel")
    assert text_of(result) == "done"
    assert [list(asked) for asked in channel.asked] == [["user_name", "r"], ["s"], ["bad"]]
    assert channel.asked[0]["r"] == {"method": "roots/list"}
    assert channel.asked[1]["s"]["method"] == "sampling/createMessage"
    assert outcome["many"] == {"user_name": ACCEPT_ADA, "r": ROOTS["roots"]}  # parsed as ever
    assert outcome["one"] == SAMPLED
    assert "action 'maybe'" in outcome["bad"]


async def test_an_input_channel_is_not_asked_what_the_client_cannot_answer() -> None:
    channel = Recorder({})
    outcome: dict[str, Any] = {}
    async with connect(_channel_server(channel, outcome), mode="2026-07-28", capabilities={}) as client:
        with pytest.raises(JsonRpcError) as refused:
            await client.call_tool("via_channel")
    assert channel.asked == []
    assert refused.value.code == -32021


async def test_a_handshake_error_answer_to_one_of_several_is_the_clients_error() -> None:
    async def refuse(params: Any) -> Any:
        raise JsonRpcError("no model here", code=-1)

    async def roots(params: Any) -> Any:
        return ROOTS

    async def elicit(params: Any) -> Any:
        return ACCEPT_ADA

    handlers = {"elicitation/create": elicit, "sampling/createMessage": refuse, "roots/list": roots}
    capabilities: dict[str, Any] = {"elicitation": {}, "sampling": {}, "roots": {}}
    async with connect(build_server(), capabilities=capabilities, request_handlers=handlers) as client:
        result = await client.call_tool("three")
    assert result["isError"] is True
    assert "sampling/createMessage with error -1: no model here" in text_of(result)


async def test_ask_refuses_what_it_cannot_send() -> None:
    server = Server("picky")
    errors: list[str] = []

    @server.tool()
    async def bad(ctx: Context) -> str:
        for requests in ({"": ctx.roots()}, {"k": {"method": "roots/list"}}):
            try:
                await ctx.ask(requests)  # type: ignore[arg-type]
            except (TypeError, ValueError) as exc:
                errors.append(type(exc).__name__)
        return "checked"

    async with connect(server, capabilities={"roots": {}}) as client:
        await client.call_tool("bad")
    assert errors == ["ValueError", "TypeError"]
