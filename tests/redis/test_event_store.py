"""RedisEventStore against a real Redis: ids name their stream, a replay after an id carries what
followed it on that stream only, an unknown or trimmed id is unknown, streams expire and close."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from jsonrpc_mcp.http._redis import RedisBackend

from .support import RedisServer

pytestmark = pytest.mark.anyio


@pytest.fixture
async def backend(redis_server: RedisServer) -> AsyncIterator[RedisBackend]:
    made = RedisBackend.from_url(redis_server.url, max_events=5, event_ttl=60)
    try:
        yield made
    finally:
        await made.client.aclose()


async def test_a_replay_carries_what_followed_on_that_stream_only(backend: RedisBackend) -> None:
    store = backend.event_store("s1")
    first = await store.store_event("_", b"one")
    await store.store_event("1", b"elsewhere")
    second = await store.store_event("_", b"two")
    third = await store.store_event("_", b"three")
    assert first.startswith("_:") and second.startswith("_:")
    assert await store.events_after(first) == ("_", [(second, b"two"), (third, b"three")])
    assert await store.events_after(third) == ("_", [])


async def test_another_instance_reads_the_same_streams(
    backend: RedisBackend, redis_server: RedisServer
) -> None:
    first = await backend.event_store("s2").store_event("_", b"one")
    later = await backend.event_store("s2").store_event("_", b"two")
    other = RedisBackend.from_url(redis_server.url)
    try:
        assert await other.event_store("s2").events_after(first) == ("_", [(later, b"two")])
        assert await other.event_store("another session").events_after(first) is None
    finally:
        await other.client.aclose()


@pytest.mark.parametrize("bad", ["", "_", "_:", "_:1-x", "no-colon", "../x:1-0", "_:99999-0", "9:1-0"])
async def test_an_unknown_or_malformed_id_is_unknown(backend: RedisBackend, bad: str) -> None:
    store = backend.event_store("s3")
    await store.store_event("_", b"one")
    assert await store.events_after(bad) is None


async def test_the_length_is_bounded_and_a_trimmed_id_is_unknown(backend: RedisBackend) -> None:
    store = backend.event_store("s4")
    ids = [await store.store_event("_", str(n).encode()) for n in range(300)]
    length = await backend.client.xlen("jsonrpc-mcp:events:s4:_")
    assert 5 <= length < 300  # MAXLEN ~ 5: trimmed by whole nodes, never below the bound
    assert await store.events_after(ids[0]) is None
    found = await store.events_after(ids[-2])
    assert found == ("_", [(ids[-1], b"299")])


async def test_each_stream_has_a_ttl_close_keeps_them_and_drop_deletes_them(backend: RedisBackend) -> None:
    store = backend.event_store("s5")
    await backend.client.set("jsonrpc-mcp:session:s5", b"{}", ex=60)  # (what register_session writes)
    keys = ("jsonrpc-mcp:events:s5:_", "jsonrpc-mcp:events:s5:2", "jsonrpc-mcp:session:s5")
    await store.store_event("_", b"one")
    await store.store_event("2", b"two")
    assert [0 < await backend.client.ttl(key) <= 60 for key in keys] == [True] * 3
    await store.close()  # the session ended on this instance: another may still resume it
    assert await backend.client.exists(*keys) == 3
    await store.drop()  # the client deleted it
    assert await backend.client.exists(*keys) == 0
