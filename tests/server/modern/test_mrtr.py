"""Multi round-trip requests (2026-07-28), in-memory: a handler's ``ctx.elicit`` / ``ctx.sample`` /
``ctx.list_roots`` become ``InputRequiredResult`` rounds, answered by retries carrying
``inputResponses`` and the echoed ``requestState`` (NOTES.md §4.2 MRTR, §10 D14-D17, D19)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from jsonrpc_mcp import CapabilityError, Context, Server
from jsonrpc_mcp.errors import MissingClientCapability
from jsonrpc_mcp.testing import connect, connect_raw

from .mrtr_server import CONFIRM_FORM, NAME_FORM, build_server
from .mrtr_support import (
    ACCEPT_ADA,
    ROOTS,
    SAMPLED,
    check_schema,
    meta,
    modern,
    retry_params,
    text_of,
)

pytestmark = pytest.mark.anyio


def _call(name: str, arguments: dict[str, Any] | None = None, **meta_options: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "_meta": meta(**meta_options)}
    if arguments is not None:
        params["arguments"] = arguments
    return params


# -- one ask ----------------------------------------------------------------------------------------
async def test_an_elicitation_becomes_an_input_required_result() -> None:
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "tools/call", _call("greet"))
    result = response["result"]
    assert result["resultType"] == "input_required"
    assert result["inputRequests"] == {
        "elicit-1": {
            "method": "elicitation/create",
            "params": {"mode": "form", "message": "What is your name?", "requestedSchema": NAME_FORM},
        }
    }
    assert isinstance(result["requestState"], str)


async def test_the_retry_with_the_answer_completes_the_call() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = await modern(raw, "tools/call", retry_params(first, round1, {"elicit-1": ACCEPT_ADA}))
    assert round2["id"] != 1  # a new JSON-RPC id
    assert round2["result"]["resultType"] == "complete"
    assert text_of(round2["result"]) == "Hello, Ada!"


async def test_a_declined_elicitation_reaches_the_handler() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = await modern(
            raw, "tools/call", retry_params(first, round1, {"elicit-1": {"action": "decline"}})
        )
    assert text_of(round2["result"]) == "Hello, <decline>!"


async def test_sampling_becomes_a_create_message_input_request() -> None:
    async with connect_raw(build_server()) as raw:
        result = (await modern(raw, "tools/call", _call("sample_or_fallback")))["result"]
    assert result["inputRequests"] == {
        "sample-1": {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "Say hi"}}],
                "maxTokens": 100,
            },
        }
    }


async def test_roots_become_a_roots_list_input_request_without_params() -> None:
    first = _call("show_roots")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"roots-1": ROOTS})))["result"]
    assert round1["inputRequests"] == {"roots-1": {"method": "roots/list"}}
    assert json.loads(text_of(round2)) == ROOTS["roots"]


async def test_url_elicitation_has_no_elicitation_id() -> None:
    async with connect_raw(build_server()) as raw:
        result = (await modern(raw, "tools/call", _call("visit")))["result"]
    assert result["inputRequests"]["elicit-1"]["params"] == {
        "mode": "url",
        "message": "Sign in",
        "url": "https://example.com/login",
    }
    check_schema("ElicitRequestURLParams", result["inputRequests"]["elicit-1"]["params"])


async def test_a_sync_handler_asks_through_the_event_loop() -> None:
    first = _call("ask_from_thread")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"elicit-1": ACCEPT_ADA})))[
            "result"
        ]
    assert list(round1["inputRequests"]) == ["elicit-1"]
    assert text_of(round2) == "thread got Ada"


# -- several asks -----------------------------------------------------------------------------------
async def test_asks_in_sequence_take_one_round_each_and_earlier_answers_travel_in_the_state() -> None:
    first = _call("survey", {"topic": "tea"})
    answers = {"elicit-1": ACCEPT_ADA, "sample-2": SAMPLED, "roots-3": ROOTS}
    asked: list[list[str]] = []
    async with connect_raw(build_server()) as raw:
        result = (await modern(raw, "tools/call", first))["result"]
        while result["resultType"] == "input_required":
            keys = list(result["inputRequests"])
            asked.append(keys)
            # only this round's answers: the earlier ones come back from the requestState
            result = (
                await modern(raw, "tools/call", retry_params(first, result, {k: answers[k] for k in keys}))
            )["result"]
    assert asked == [["elicit-1"], ["sample-2"], ["roots-3"]]
    assert json.loads(text_of(result)) == {
        "who": "Ada",
        "model": "test-model",
        "says": "blue",
        "roots": ROOTS["roots"],
    }


async def test_two_questions_of_the_same_kind_get_their_own_keys() -> None:
    first = _call("confirm_twice")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        yes = {"action": "accept", "content": {"ok": True}}
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"elicit-1": yes})))["result"]
        no = {"action": "accept", "content": {"ok": False}}
        round3 = (await modern(raw, "tools/call", retry_params(first, round2, {"elicit-2": no})))["result"]
    assert round1["inputRequests"]["elicit-1"]["params"]["message"] == "First: proceed?"
    assert round2["inputRequests"]["elicit-2"]["params"]["message"] == "Second: really proceed?"
    assert round2["inputRequests"]["elicit-2"]["params"]["requestedSchema"] == CONFIRM_FORM
    assert text_of(round3) == "{'ok': True} {'ok': False}"


async def test_questions_asked_concurrently_share_one_round() -> None:
    first = _call("ask_both")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        responses = {"elicit-1": ACCEPT_ADA, "sample-2": SAMPLED}
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, responses)))["result"]
    assert sorted(round1["inputRequests"]) == ["elicit-1", "sample-2"]
    assert text_of(round2) == "Ada / test-model"


async def test_a_retry_without_the_answer_asks_again() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, None)))["result"]
    assert round2["resultType"] == "input_required"
    assert round2["inputRequests"] == round1["inputRequests"]


async def test_unexpected_input_responses_are_ignored() -> None:
    first = _call("confirm_twice")
    yes = {"action": "accept", "content": {"ok": True}}
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        # elicit-2 was not asked yet, "bogus" never: neither is taken as an answer
        responses = {"elicit-1": yes, "elicit-2": yes, "bogus": {"action": "accept"}}
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, responses)))["result"]
    assert round2["resultType"] == "input_required"
    assert list(round2["inputRequests"]) == ["elicit-2"]


async def test_a_retry_answering_only_other_keys_asks_again() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        round2 = (await modern(raw, "tools/call", retry_params(first, round1, {"other": ACCEPT_ADA})))[
            "result"
        ]
    assert round2["resultType"] == "input_required"
    assert list(round2["inputRequests"]) == ["elicit-1"]


async def test_input_responses_without_a_request_state_answer_the_questions_of_their_keys() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        answered = {**first, "inputResponses": {"elicit-1": ACCEPT_ADA, "extra": ACCEPT_ADA}}
        result = (await modern(raw, "tools/call", answered))["result"]
        unasked = {**first, "inputResponses": {"other": ACCEPT_ADA}}
        other = (await modern(raw, "tools/call", unasked))["result"]
    assert result["resultType"] == "complete"
    assert text_of(result) == "Hello, Ada!"
    assert other["resultType"] == "input_required"  # a key the handler does not ask answers nothing


async def test_an_invalid_answer_is_the_clients_protocol_error() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        bad = {"elicit-1": {"action": "maybe"}}
        round2 = await modern(raw, "tools/call", retry_params(first, round1, bad), valid=False)
        not_an_object = {**first, "inputResponses": {"elicit-1": 12345}}
        number = await modern(raw, "tools/call", not_an_object, valid=False)
    assert round2["error"]["code"] == -32602
    assert "action 'maybe'" in round2["error"]["message"]
    assert round2["error"]["data"] == {"inputResponse": "elicit-1"}
    assert number["error"]["code"] == -32602


async def test_a_handler_swallowing_the_stop_still_gets_its_question_asked() -> None:
    async with connect_raw(build_server()) as raw:
        result = (await modern(raw, "tools/call", _call("swallow")))["result"]
    assert result["resultType"] == "input_required"
    assert list(result["inputRequests"]) == ["elicit-1"]


async def test_a_handlers_work_before_an_ask_runs_again_on_every_round() -> None:
    server = Server("replay")
    runs: list[str] = []

    @server.tool()
    async def count(ctx: Context) -> str:
        runs.append("before")
        await ctx.elicit("Name?", NAME_FORM)
        runs.append("after")
        return "done"

    first = {"name": "count", "_meta": meta()}
    async with connect_raw(server) as raw:
        round1 = (await modern(raw, "tools/call", first))["result"]
        await modern(raw, "tools/call", retry_params(first, round1, {"elicit-1": ACCEPT_ADA}))
    assert runs == ["before", "before", "after"]


async def test_logs_of_a_round_come_before_its_input_required_result() -> None:
    server = Server("logging-rounds", logging_enabled=True)

    @server.tool()
    async def chatty(ctx: Context) -> str:
        await ctx.info("about to ask")
        await ctx.elicit("Name?", NAME_FORM)
        return "done"

    params = {"name": "chatty", "_meta": meta(extra={"io.modelcontextprotocol/logLevel": "info"})}
    async with connect_raw(server) as raw:
        response = await modern(raw, "tools/call", params)
        frames = list(raw.frames)
    assert response["result"]["resultType"] == "input_required"
    methods = [f.get("method") for f in frames]
    assert methods == ["notifications/message", None]


# -- prompts and resources --------------------------------------------------------------------------
async def test_a_prompt_asks_and_completes_on_the_retry() -> None:
    first = {"name": "interview", "arguments": {"topic": "tea"}, "_meta": meta()}
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "prompts/get", first))["result"]
        round2 = (await modern(raw, "prompts/get", retry_params(first, round1, {"elicit-1": ACCEPT_ADA})))[
            "result"
        ]
    assert list(round1["inputRequests"]) == ["elicit-1"]
    assert round2["resultType"] == "complete"
    assert round2["messages"][0]["content"]["text"] == "Interview Ada about tea"


async def test_a_resource_read_asks_and_completes_on_the_retry() -> None:
    first = {"uri": "vault://secret", "_meta": meta()}
    yes = {"action": "accept", "content": {"ok": True}}
    async with connect_raw(build_server()) as raw:
        round1 = (await modern(raw, "resources/read", first))["result"]
        round2 = (await modern(raw, "resources/read", retry_params(first, round1, {"elicit-1": yes})))[
            "result"
        ]
    assert round1["resultType"] == "input_required"
    assert round2["contents"][0]["text"] == "the secret"


async def test_an_input_required_resource_read_carries_no_caching_hints() -> None:  # D19
    async with connect_raw(build_server(cache_ttl_ms=60_000)) as raw:
        result = (await modern(raw, "resources/read", {"uri": "vault://secret", "_meta": meta()}))["result"]
    assert result["resultType"] == "input_required"
    assert "ttlMs" not in result and "cacheScope" not in result


async def test_a_resource_read_completed_by_a_retry_says_do_not_reuse() -> None:
    first = {"uri": "vault://secret", "_meta": meta()}
    yes = {"action": "accept", "content": {"ok": True}}
    async with connect_raw(build_server(cache_ttl_ms=60_000, cache_scope="public")) as raw:
        round1 = (await modern(raw, "resources/read", first))["result"]
        round2 = (await modern(raw, "resources/read", retry_params(first, round1, {"elicit-1": yes})))[
            "result"
        ]
    assert (round2["ttlMs"], round2["cacheScope"]) == (0, "private")


async def test_a_resource_read_that_asks_nothing_keeps_the_servers_caching_hints() -> None:
    async with connect_raw(build_server(cache_ttl_ms=60_000, cache_scope="public")) as raw:
        result = (await modern(raw, "resources/read", {"uri": "plain://static", "_meta": meta()}))["result"]
    assert (result["ttlMs"], result["cacheScope"]) == (60_000, "public")


async def test_other_modern_requests_cannot_ask() -> None:  # D16: no InputRequiredResult for them
    params = {
        "ref": {"type": "ref/prompt", "name": "interview"},
        "argument": {"name": "topic", "value": ""},
        "_meta": meta(),
    }
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "completion/complete", params)
    result = response["result"]
    assert result["resultType"] == "complete"
    assert result["completion"]["values"][0].startswith("no: a completion/complete request cannot ask")


# -- capabilities the request did not declare (-32021, D14) -----------------------------------------
@pytest.mark.parametrize(
    ("tool", "capabilities", "required"),
    [
        ("greet", {}, {"elicitation": {}}),
        ("greet", {"elicitation": {"url": {}}}, {"elicitation": {"form": {}}}),
        ("visit", {"elicitation": {"form": {}}}, {"elicitation": {"url": {}}}),
        ("visit", {"elicitation": {}}, {"elicitation": {"url": {}}}),
        ("show_roots", {"sampling": {}}, {"roots": {}}),
        ("survey", {"sampling": {}, "roots": {}}, {"elicitation": {}}),
    ],
)
async def test_an_undeclared_capability_is_error_32021(
    tool: str, capabilities: dict[str, Any], required: dict[str, Any]
) -> None:
    arguments = {"topic": "tea"} if tool == "survey" else None
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "tools/call", _call(tool, arguments, capabilities=capabilities))
    check_schema("MissingRequiredClientCapabilityError", response)
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": required}


async def test_sampling_with_tools_needs_sampling_tools_declared() -> None:
    server = Server("sampling-tools")

    @server.tool()
    async def with_tools(ctx: Context) -> str:
        await ctx.sample(["hi"], tools=[{"name": "t", "inputSchema": {"type": "object"}}])
        return "sent"

    async with connect_raw(server) as raw:
        refused = await modern(raw, "tools/call", {"name": "with_tools", "_meta": meta({"sampling": {}})})
        caps: dict[str, Any] = {"sampling": {"tools": {}}}
        asked = await modern(raw, "tools/call", {"name": "with_tools", "_meta": meta(caps)})
    assert refused["error"]["data"] == {"requiredCapabilities": {"sampling": {"tools": {}}}}
    assert asked["result"]["inputRequests"]["sample-1"]["params"]["tools"][0]["name"] == "t"


async def test_sampling_with_context_needs_sampling_context_declared() -> None:
    server = Server("sampling-context")

    @server.tool()
    async def with_context(ctx: Context) -> str:
        await ctx.sample(["hi"], include_context="thisServer")
        return "sent"

    async with connect_raw(server) as raw:
        response = await modern(raw, "tools/call", {"name": "with_context", "_meta": meta({"sampling": {}})})
    assert response["error"]["data"] == {"requiredCapabilities": {"sampling": {"context": {}}}}


async def test_a_prompt_needing_an_undeclared_capability_is_error_32021() -> None:
    params = {"name": "interview", "arguments": {"topic": "tea"}, "_meta": meta({})}
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "prompts/get", params)
    assert response["error"]["code"] == -32021
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {}}}


async def test_a_resource_needing_an_undeclared_capability_is_error_32021() -> None:
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "resources/read", {"uri": "vault://secret", "_meta": meta({})})
    assert response["error"]["code"] == -32021


async def test_a_handler_catching_capability_error_falls_back_in_the_modern_era() -> None:  # D14
    async with connect_raw(build_server()) as raw:
        response = await modern(raw, "tools/call", _call("sample_or_fallback", capabilities={}))
    result = response["result"]
    assert result["resultType"] == "complete"
    assert text_of(result) == "fallback ({'requiredCapabilities': {'sampling': {}}})"


def test_the_modern_capability_error_is_a_capability_error() -> None:
    error = MissingClientCapability("needs elicitation", {"elicitation": {}})
    assert isinstance(error, CapabilityError)
    assert error.to_dict() == {
        "code": -32021,
        "message": "needs elicitation",
        "data": {"requiredCapabilities": {"elicitation": {}}},
    }


async def test_capabilities_are_read_from_each_request_alone() -> None:
    first = _call("greet")
    async with connect_raw(build_server()) as raw:
        await modern(raw, "tools/call", first)  # declared elicitation...
        response = await modern(raw, "tools/call", _call("greet", capabilities={}))  # ...but not now
    assert response["error"]["code"] == -32021


# -- the same tool for a handshake client -----------------------------------------------------------
async def test_the_same_tool_sends_a_real_request_to_a_handshake_client() -> None:
    seen: list[Any] = []

    async def elicit(params: Any) -> dict[str, Any]:
        seen.append(params)
        return ACCEPT_ADA

    caps: dict[str, Any] = {"elicitation": {"form": {}}}
    async with connect(
        build_server(), capabilities=caps, request_handlers={"elicitation/create": elicit}, recorder=True
    ) as client:
        result = await client.call_tool("greet")
        received = [json.loads(f) for f in client.wire.received]  # type: ignore[attr-defined]
    assert text_of(result) == "Hello, Ada!"
    assert seen == [{"mode": "form", "message": "What is your name?", "requestedSchema": NAME_FORM}]
    assert any(f.get("method") == "elicitation/create" and "id" in f for f in received)
    assert all("resultType" not in f.get("result", {}) for f in received)


async def test_a_handshake_client_without_the_capability_gets_the_old_tool_error() -> None:
    async with connect(build_server(), capabilities={}) as client:
        result = await client.call_tool("greet")
    assert result["isError"] is True
    assert "did not declare the 'elicitation' capability" in text_of(result)


async def test_mrtr_fields_mean_nothing_to_a_handshake_session() -> None:
    async def elicit(params: Any) -> dict[str, Any]:
        return ACCEPT_ADA

    caps: dict[str, Any] = {"elicitation": {}}
    async with connect(
        build_server(), capabilities=caps, request_handlers={"elicitation/create": elicit}
    ) as client:
        result = await client.request(
            "tools/call", {"name": "greet", "inputResponses": {"elicit-1": {}}, "requestState": "junk"}
        )
    assert text_of(result) == "Hello, Ada!"


async def test_a_modern_round_never_sends_a_request_to_the_client() -> None:  # D31
    first = _call("survey", {"topic": "tea"})
    answers = {"elicit-1": ACCEPT_ADA, "sample-2": SAMPLED, "roots-3": ROOTS}
    async with connect_raw(build_server()) as raw:
        result = (await modern(raw, "tools/call", first))["result"]
        while result["resultType"] == "input_required":
            result = (await modern(raw, "tools/call", retry_params(first, result, answers)))["result"]
        frames = list(raw.frames)
    assert len(frames) == 4
    assert not any("method" in f and "id" in f for f in frames)


# -- ctx.send_request in a modern request -------------------------------------------------------------
def _raw_sender() -> Server:
    server = Server("raw-sender")

    @server.tool()
    async def send(method: str, params: dict[str, Any], ctx: Context) -> str:
        return json.dumps(await ctx.send_request(method, params))

    return server


async def test_send_request_of_an_input_method_becomes_an_ask() -> None:
    params = {"mode": "url", "message": "Go", "url": "https://example.com"}
    call = _call("send", {"method": "elicitation/create", "params": params})
    async with connect_raw(_raw_sender()) as raw:
        result = (await modern(raw, "tools/call", call))["result"]
    assert result["inputRequests"] == {"elicit-1": {"method": "elicitation/create", "params": params}}


async def test_send_request_of_an_undeclared_mode_is_error_32021() -> None:
    params = {"mode": "url", "message": "Go", "url": "https://example.com"}
    call = _call("send", {"method": "elicitation/create", "params": params}, capabilities={"elicitation": {}})
    async with connect_raw(_raw_sender()) as raw:
        response = await modern(raw, "tools/call", call)
    assert response["error"]["data"] == {"requiredCapabilities": {"elicitation": {"url": {}}}}


async def test_send_request_of_another_method_is_refused_without_a_request() -> None:  # D31
    call = _call("send", {"method": "ping", "params": {}})
    async with connect_raw(_raw_sender()) as raw:
        response = await modern(raw, "tools/call", call)
        frames = list(raw.frames)
    assert response["result"]["isError"] is True
    assert "has no requests from the server to the client; ping cannot be sent" in text_of(response["result"])
    assert len(frames) == 1
