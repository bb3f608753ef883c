"""The client's side of multi round-trip requests (InputRequiredResult) and of subscriptions/listen."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.client import InputRequiredError
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect
from tests import timeouts

from ..modern.support import (
    MODERN,
    PROTOCOL_VERSION,
    SUBSCRIPTION_ID,
    Send,
    error,
    meta_of,
    result,
    scripted_server,
)

pytestmark = pytest.mark.anyio

TIMEOUT = timeouts.STEP
ELICIT = {
    "method": "elicitation/create",
    "params": {"message": "Who?", "requestedSchema": {"type": "object"}},
}
SAMPLE = {
    "method": "sampling/createMessage",
    "params": {"messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}], "maxTokens": 5},
}
ROOTS = {"method": "roots/list", "params": {}}
ELICITED = {"action": "accept", "content": {"name": "Ada"}}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "4"}, "model": "m"}
LISTED = {"roots": [{"uri": "file:///work", "name": "work"}]}


def _without_meta(params: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in params.items() if key != "_meta"}


def _asking(
    requests: dict[str, Any] | None = None, state: str | None = "opaque-state-1", rounds: int = 1
) -> Any:
    """A peer whose tools/call, prompts/get and resources/read ask for input ``rounds`` times
    (``requests`` and ``state``), then answer with what the last retry carried."""
    asked = 0

    async def respond(frame: dict[str, Any], send: Send) -> Any:
        nonlocal asked
        if frame.get("method") not in ("tools/call", "prompts/get", "resources/read"):
            return None
        if asked < rounds:
            asked += 1
            interim: dict[str, Any] = {"resultType": "input_required"}
            if requests is not None:
                interim["inputRequests"] = requests
            if state is not None:
                interim["requestState"] = state
            return result(frame, interim)
        params = frame["params"]
        return result(frame, {"resultType": "complete", "echo": _without_meta(params)})

    return respond


def _handlers(seen: list[tuple[str, Any]] | None = None) -> dict[str, Any]:
    def answering(method: str, answer: dict[str, Any]) -> Any:
        async def handler(params: Any) -> dict[str, Any]:
            if seen is not None:
                seen.append((method, params))
            return answer

        return handler

    return {
        "elicitation/create": answering("elicitation/create", ELICITED),
        "sampling/createMessage": answering("sampling/createMessage", SAMPLED),
        "roots/list": answering("roots/list", LISTED),
    }


async def _call(respond: Any, **options: Any) -> tuple[Any, list[dict[str, Any]]]:
    options.setdefault("request_handlers", _handlers())
    async with (
        scripted_server(respond) as (stream, received),
        Client(stream, mode=MODERN, **options) as client,
    ):
        with anyio.fail_after(TIMEOUT):
            answer = await client.call_tool("book", {"city": "Paris"})
    return answer, received


# -- answering input requests ---------------------------------------------------------------------
async def test_each_input_request_is_answered_by_its_handler_under_its_key() -> None:
    answer, _ = await _call(_asking({"who": ELICIT, "sum": SAMPLE, "where": ROOTS}))
    assert answer["resultType"] == "complete"
    assert answer["echo"]["inputResponses"] == {"who": ELICITED, "sum": SAMPLED, "where": LISTED}


async def test_handlers_get_the_input_requests_params() -> None:
    seen: list[tuple[str, Any]] = []
    await _call(_asking({"who": ELICIT, "sum": SAMPLE}), request_handlers=_handlers(seen))
    assert sorted(seen, key=lambda item: item[0]) == [
        ("elicitation/create", ELICIT["params"]),
        ("sampling/createMessage", SAMPLE["params"]),
    ]


async def test_the_retry_has_a_new_id_and_the_original_params() -> None:
    _, received = await _call(_asking({"who": ELICIT}))
    first, retry = received
    assert retry["id"] != first["id"]
    assert retry["method"] == "tools/call"
    assert {key: retry["params"][key] for key in ("name", "arguments")} == {
        "name": "book",
        "arguments": {"city": "Paris"},
    }
    assert meta_of(retry)[PROTOCOL_VERSION] == MODERN


async def test_the_retry_echoes_the_request_state_exactly() -> None:
    state = "  eyJ0IjoxfQ==.x y\u00e9  "
    answer, _ = await _call(_asking({"who": ELICIT}, state=state))
    assert answer["echo"]["requestState"] == state


async def test_the_retry_carries_no_request_state_when_none_was_given() -> None:
    answer, _ = await _call(_asking({"who": ELICIT}, state=None))
    assert "requestState" not in answer["echo"]
    assert answer["echo"]["inputResponses"] == {"who": ELICITED}


async def test_several_rounds_are_driven_to_the_complete_result() -> None:
    answer, received = await _call(_asking({"who": ELICIT}, rounds=3))
    assert answer["resultType"] == "complete"
    assert len(received) == 4
    assert len({frame["id"] for frame in received}) == 4


async def test_a_result_carrying_only_request_state_is_retried_with_it() -> None:
    answer, received = await _call(_asking(None, state="later"))
    assert len(received) == 2
    assert answer["echo"] == {"name": "book", "arguments": {"city": "Paris"}, "requestState": "later"}


@pytest.mark.parametrize(
    ("method", "call"),
    [
        ("prompts/get", lambda client: client.get_prompt("p", {"a": "b"})),
        ("resources/read", lambda client: client.read_resource("file:///x")),
    ],
)
async def test_get_prompt_and_read_resource_answer_input_requests_too(method: str, call: Any) -> None:
    async with (
        scripted_server(_asking({"where": ROOTS})) as (stream, received),
        Client(stream, mode=MODERN, request_handlers=_handlers()) as client,
    ):
        with anyio.fail_after(TIMEOUT):
            answer = await call(client)
    assert [frame["method"] for frame in received] == [method, method]
    assert answer["echo"]["inputResponses"] == {"where": LISTED}


# -- what is returned as it came ------------------------------------------------------------------
async def test_without_a_handler_for_a_requested_method_the_result_is_returned_as_is() -> None:
    handlers = _handlers()
    del handlers["sampling/createMessage"]
    answer, received = await _call(_asking({"who": ELICIT, "sum": SAMPLE}), request_handlers=handlers)
    assert answer == {
        "resultType": "input_required",
        "inputRequests": {"who": ELICIT, "sum": SAMPLE},
        "requestState": "opaque-state-1",
    }
    assert len(received) == 1


async def test_an_input_request_of_another_method_is_returned_as_is() -> None:
    odd = {"method": "tools/list", "params": {}}
    answer, received = await _call(
        _asking({"odd": odd}), request_handlers={**_handlers(), "tools/list": None}
    )
    assert answer["inputRequests"] == {"odd": odd}
    assert len(received) == 1


async def test_with_max_input_rounds_zero_the_result_is_returned_as_is() -> None:
    answer, received = await _call(_asking({"who": ELICIT}), max_input_rounds=0)
    assert answer["resultType"] == "input_required"
    assert len(received) == 1


async def test_rounds_are_capped() -> None:
    with pytest.raises(InputRequiredError) as raised:
        await _call(_asking({"who": ELICIT}, rounds=100), max_input_rounds=3)
    assert raised.value.rounds == 3
    assert raised.value.method == "tools/call"
    assert raised.value.result["resultType"] == "input_required"


async def test_rounds_cap_counts_retries_sent() -> None:
    received: list[dict[str, Any]] = []

    async def respond(frame: dict[str, Any], send: Send) -> Any:
        received.append(frame)
        return await _asking({"who": ELICIT}, rounds=100)(frame, send)

    with pytest.raises(InputRequiredError):
        await _call(respond, max_input_rounds=2)
    assert len(received) == 3  # the request and two retries


async def test_a_handler_error_propagates_and_nothing_is_retried() -> None:
    async def refuse(params: Any) -> Any:
        raise JsonRpcError("the user declined to be asked", code=-1)

    with pytest.raises(JsonRpcError, match="declined"):
        await _call(_asking({"who": ELICIT}), request_handlers={"elicitation/create": refuse})


async def test_a_complete_result_is_returned_without_retrying() -> None:
    answer, received = await _call(_asking({"who": ELICIT}, rounds=0))
    assert answer["resultType"] == "complete"
    assert len(received) == 1


# -- against our server ---------------------------------------------------------------------------
def _asking_server() -> Server:
    server = Server("asks", "1.0")

    @server.tool()
    async def plan(ctx: Context) -> str:
        """Ask the user, then the model, then for the roots."""
        answer = await ctx.elicit("Who?", {"type": "object", "properties": {"name": {"type": "string"}}})
        sampled = await ctx.sample(messages=[{"role": "user", "content": {"type": "text", "text": "2+2?"}}])
        roots = await ctx.list_roots()
        return f"{answer['content']['name']} {sampled['content']['text']} {roots[0]['uri']}"

    return server


CAPABILITIES: dict[str, Any] = {"elicitation": {"form": {}}, "sampling": {}, "roots": {}}


async def test_our_servers_input_requests_are_driven_to_the_result() -> None:
    async with connect(
        _asking_server(), mode=MODERN, capabilities=CAPABILITIES, request_handlers=_handlers()
    ) as client:
        answer = await client.call_tool("plan")
    assert answer["resultType"] == "complete"
    assert answer["content"] == [{"type": "text", "text": "Ada 4 file:///work"}]


async def test_the_same_handlers_answer_our_server_in_both_eras() -> None:
    answers = []
    for mode in ("legacy", MODERN):
        async with connect(
            _asking_server(), mode=mode, capabilities=CAPABILITIES, request_handlers=_handlers()
        ) as client:
            answers.append((await client.call_tool("plan"))["content"])
    assert answers[0] == answers[1] == [{"type": "text", "text": "Ada 4 file:///work"}]


async def test_without_handlers_our_servers_input_required_result_is_returned() -> None:
    async with connect(_asking_server(), mode=MODERN, capabilities=CAPABILITIES) as client:
        answer = await client.call_tool("plan")
    assert answer["resultType"] == "input_required"
    assert [request["method"] for request in answer["inputRequests"].values()] == ["elicitation/create"]
    assert isinstance(answer["requestState"], str)


# -- subscriptions/listen -------------------------------------------------------------------------
class _Listener:
    """A peer that acknowledges subscriptions/listen and keeps it open; ``push`` sends on it."""

    def __init__(self, honoured: dict[str, Any] | None = None, refuse: bool = False) -> None:
        self.honoured = honoured
        self.refuse = refuse
        self.send: Send | None = None
        self.listen_frame: dict[str, Any] | None = None

    async def respond(self, frame: dict[str, Any], send: Send) -> Any:
        self.send = send
        if frame.get("method") != "subscriptions/listen":
            return None
        if self.refuse:
            return error(frame, -32601, "Method not found")
        self.listen_frame = frame
        filters = self.honoured if self.honoured is not None else frame["params"]["notifications"]
        await send(self.notification("notifications/subscriptions/acknowledged", {"notifications": filters}))
        return None

    def notification(self, method: str, params: dict[str, Any], sid: Any = None) -> dict[str, Any]:
        assert self.listen_frame is not None
        tag = self.listen_frame["id"] if sid is None else sid
        return {"jsonrpc": "2.0", "method": method, "params": {**params, "_meta": {SUBSCRIPTION_ID: tag}}}

    async def push(self, method: str, params: dict[str, Any], sid: Any = None) -> None:
        assert self.send is not None
        await self.send(self.notification(method, params, sid))

    async def finish(self) -> None:
        assert self.send is not None and self.listen_frame is not None
        final = {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: self.listen_frame["id"]}}
        await self.send(result(self.listen_frame, final))


async def test_listen_sends_the_filter_with_the_envelope_and_yields_once_acknowledged() -> None:
    peer = _Listener(honoured={"toolsListChanged": True})
    wanted = {"toolsListChanged": True, "promptsListChanged": True}
    async with scripted_server(peer.respond) as (stream, _), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT):
            async with client.listen(wanted) as subscription:
                assert subscription.acknowledged == {"toolsListChanged": True}
                assert peer.listen_frame is not None
                assert subscription.id == peer.listen_frame["id"]
    assert peer.listen_frame["params"]["notifications"] == wanted
    assert meta_of(peer.listen_frame)[PROTOCOL_VERSION] == MODERN


async def test_listen_delivers_the_notifications_tagged_with_its_id() -> None:
    peer = _Listener()
    async with scripted_server(peer.respond) as (stream, _), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT):
            async with client.listen({"resourceSubscriptions": ["file:///a"]}) as subscription:
                await peer.push(
                    "notifications/resources/updated", {"uri": "file:///other"}, sid="someone-else"
                )
                await peer.push("notifications/resources/updated", {"uri": "file:///a"})
                method, params = await subscription.receive()
    assert method == "notifications/resources/updated"
    assert params["uri"] == "file:///a"


async def test_leaving_listen_cancels_the_listen_request() -> None:
    peer = _Listener()
    async with scripted_server(peer.respond) as (stream, received), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT):
            async with client.listen({"toolsListChanged": True}) as subscription:
                sid = subscription.id
            assert subscription.ended
    cancelled = [frame for frame in received if frame.get("method") == "notifications/cancelled"]
    assert [frame["params"]["requestId"] for frame in cancelled] == [sid]


async def test_a_refused_listen_raises_the_servers_error() -> None:
    peer = _Listener(refuse=True)
    async with scripted_server(peer.respond) as (stream, _), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT), pytest.raises(JsonRpcError) as raised:
            async with client.listen({"toolsListChanged": True}):
                pass
    assert raised.value.code == -32601


async def test_when_the_server_ends_listen_iteration_stops_with_its_result() -> None:
    peer = _Listener()
    async with scripted_server(peer.respond) as (stream, _), Client(stream, mode=MODERN) as client:
        with anyio.fail_after(TIMEOUT):
            async with client.listen({"toolsListChanged": True}) as subscription:
                await peer.push("notifications/tools/list_changed", {})
                await peer.finish()
                seen = [method async for method, _ in subscription]
    assert seen == ["notifications/tools/list_changed"]
    assert subscription.result == {"resultType": "complete", "_meta": {SUBSCRIPTION_ID: subscription.id}}


async def test_listen_on_our_server_gets_the_tool_list_change() -> None:
    server = Server("listening", "1.0")
    server.add_tool("first", lambda: "1")
    async with (
        connect(server, mode=MODERN) as client,
        client.listen({"toolsListChanged": True}) as subscription,
    ):
        server.add_tool("second", lambda: "2")
        with anyio.fail_after(TIMEOUT):
            method, params = await subscription.receive()
    assert method == "notifications/tools/list_changed"
    assert params["_meta"][SUBSCRIPTION_ID] == subscription.id
