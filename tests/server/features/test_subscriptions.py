"""Resource subscriptions: resources/subscribe, unsubscribe, notifications/resources/updated; and the
URI template matcher under hostile input."""

from __future__ import annotations

import subprocess
import sys
import time

import anyio
import pytest

from jsonrpc_mcp import Client, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.server._uritemplate import UriTemplate
from jsonrpc_mcp.testing import connect

from .feature_server import build_server
from .support import SERVE, TIMEOUT, VERSIONS, Inbox, check_schema, frames, text_of

pytestmark = pytest.mark.anyio

UPDATED = "notifications/resources/updated"


async def test_the_resources_capability_offers_subscribe() -> None:
    async with connect(build_server()) as client:
        assert client.server_capabilities["resources"] == {"subscribe": True, "listChanged": True}


async def test_a_subscribed_uri_gets_updated_notifications() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.subscribe_resource("res://watched")
        result = await client.call_tool("touch", {"uri": "res://watched"})
    assert text_of(result) == "told 1"
    assert inbox.of(UPDATED) == [{"uri": "res://watched"}]


async def test_an_unsubscribed_uri_gets_nothing() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.subscribe_resource("res://watched")
        result = await client.call_tool("touch", {"uri": "res://items/1"})
        await client.ping()
    assert text_of(result) == "told 0"
    assert inbox.of(UPDATED) == []


async def test_unsubscribe_stops_the_notifications() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.subscribe_resource("res://watched")
        await client.unsubscribe_resource("res://watched")
        result = await client.call_tool("touch", {"uri": "res://watched"})
        await client.ping()
    assert text_of(result) == "told 0"
    assert inbox.of(UPDATED) == []


async def test_a_uri_below_a_subscribed_uri_is_notified() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.subscribe_resource("res://items")
        await client.call_tool("touch", {"uri": "res://items/7"})
        await client.call_tool("touch", {"uri": "res://itemsX"})
    assert inbox.of(UPDATED) == [{"uri": "res://items/7"}]


async def test_only_subscribed_sessions_are_notified() -> None:
    server = build_server()
    watcher, bystander = Inbox(), Inbox()
    async with (
        connect(server, on_notification=watcher) as first,
        connect(server, on_notification=bystander) as second,
    ):
        await first.subscribe_resource("res://watched")
        result = await second.call_tool("touch", {"uri": "res://watched"})
        await watcher.wait_for(lambda items: bool(items))
        await second.ping()
    assert text_of(result) == "told 1"
    assert watcher.of(UPDATED) == [{"uri": "res://watched"}]
    assert bystander.items == []


async def test_the_application_can_notify_outside_any_request() -> None:
    server = build_server()
    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.subscribe_resource("res://watched")
        assert await server.notify_resource_updated("res://watched") == 1
        await inbox.wait_for(lambda items: bool(items))
    assert inbox.of(UPDATED) == [{"uri": "res://watched"}]


@pytest.mark.parametrize("params", [{}, {"uri": 3}, {"uri": None}])
async def test_subscribe_without_a_string_uri_is_invalid_params(params: dict[str, object]) -> None:
    async with connect(build_server()) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.request("resources/subscribe", params)
    assert raised.value.code == -32602


async def test_subscribe_on_a_server_without_resources_is_method_not_found() -> None:
    server = Server("no-resources")
    server.add_tool("t", lambda: "x")
    async with connect(server) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.subscribe_resource("res://x")
    assert raised.value.code == -32601


@pytest.mark.parametrize("version", VERSIONS)
async def test_subscription_frames_validate_against_the_official_schema(version: str) -> None:
    async with connect(build_server(), protocol_version=version, recorder=True) as client:
        await client.subscribe_resource("res://watched")
        await client.call_tool("touch", {"uri": "res://watched"})
        await client.unsubscribe_resource("res://watched")
        sent, received = frames(client)
    check_schema(
        version, "SubscribeRequest", next(f for f in sent if f.get("method") == "resources/subscribe")
    )
    check_schema(
        version, "UnsubscribeRequest", next(f for f in sent if f.get("method") == "resources/unsubscribe")
    )
    (updated,) = [f for f in received if f.get("method") == UPDATED]
    check_schema(version, "ResourceUpdatedNotification", updated)
    ids = {f["id"] for f in sent if f.get("method") in ("resources/subscribe", "resources/unsubscribe")}
    for frame in received:
        if frame.get("id") in ids:
            check_schema(version, "EmptyResult", frame["result"])


async def test_subscriptions_over_stdio_with_a_subprocess() -> None:
    inbox = Inbox()
    with anyio.fail_after(TIMEOUT * 2):
        async with Client.stdio(SERVE, on_notification=inbox) as client:
            await client.subscribe_resource("res://watched")
            result = await client.call_tool("touch", {"uri": "res://watched"})
    assert text_of(result) == "told 1"
    assert inbox.of(UPDATED) == [{"uri": "res://watched"}]


# -- the RFC 6570 matcher cannot be made to backtrack ---------------------------------------------
ADJACENT = "x://" + "".join(f"{{v{n}}}" for n in range(12))  # x://{v0}{v1}...{v11}
SEPARATED = "x://" + "-".join(f"{{v{n}}}" for n in range(12)) + ".json"  # x://{v0}-{v1}-...-{v11}.json
HOSTILE = [
    (ADJACENT, "x://" + "a" * 200_000 + "/"),
    (SEPARATED, "x://" + "-" * 200_000 + "x"),
    (SEPARATED, "x://" + "a-" * 100_000 + "json"),
    ("x://{+a}/{b}/{c}/{d}/{e}/end", "x://" + "/" * 200_000),
    ("x://{a}{?p,q,r}", "x://a?" + "p=1&" * 50_000 + "q"),
]


@pytest.mark.parametrize(
    ("template", "uri"), HOSTILE, ids=["adjacent", "separators", "near-miss", "reserved", "query"]
)
def test_hostile_uris_are_matched_in_linear_time(template: str, uri: str) -> None:
    matcher = UriTemplate(template)
    started = time.thread_time()  # CPU time of this thread: a busy machine does not stretch it
    matcher.match(uri)
    assert time.thread_time() - started < 0.5  # linear: milliseconds; backtracking: hours


def test_the_hostile_input_chokes_a_naive_regex_matcher() -> None:
    # what the matcher above avoids: a regex with one group per variable backtracks combinatorially
    # on a 300-character near miss (C(299, 11) ways to split it); bounded by the subprocess timeout
    code = (
        "import re; pattern = re.compile(r'x://' + '([^/]+)' * 12 + '$'); "
        "pattern.match('x://' + 'a' * 300 + '/')"
    )
    with pytest.raises(subprocess.TimeoutExpired):
        subprocess.run([sys.executable, "-c", code], timeout=1.0, check=False)


async def test_reading_a_hostile_uri_through_the_server_is_answered_promptly() -> None:
    server = Server("hostile")
    server.add_resource(ADJACENT, lambda **variables: "x")
    server.add_resource(SEPARATED, lambda **variables: "y")
    async with connect(server) as client:
        with anyio.fail_after(TIMEOUT):  # linear: milliseconds; backtracking: hours
            for _, uri in HOSTILE[:3]:
                with pytest.raises(JsonRpcError) as raised:
                    await client.read_resource(uri)
                assert raised.value.code == -32002
            assert (await client.read_resource("x://" + "-".join("abcdefghijkl") + ".json"))["contents"][0][
                "text"
            ] == "y"
