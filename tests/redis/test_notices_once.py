"""A list change or resource update is stored once in a session's standalone stream whatever the
teller leases say: two copies of a session that both believe they are its teller (a live instance
starved of CPU past its heartbeat looks dead, and another copy takes over) store each change once,
because each change carries an id where it was made and the store marks it atomically."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import orjson
import pytest

from jsonrpc_mcp import Server
from jsonrpc_mcp.http._events import InMemoryEventStore
from jsonrpc_mcp.http._redis import RedisBackend
from jsonrpc_mcp.http._redis_notices import ChangeLog, list_key, notice_key, resource_key
from jsonrpc_mcp.http._sessions import HttpSession, SessionTable
from jsonrpc_mcp.wire import RESOURCE_UPDATED, TOOLS_LIST_CHANGED

from .support import RedisServer

pytestmark = pytest.mark.anyio

LIST_CHANGED = orjson.dumps({"jsonrpc": "2.0", "method": TOOLS_LIST_CHANGED})
TOOLS = TOOLS_LIST_CHANGED


@pytest.fixture
async def two(redis_server: RedisServer) -> AsyncIterator[tuple[RedisBackend, RedisBackend]]:
    """Two instances' backends on one Redis."""
    a, b = RedisBackend.from_url(redis_server.url), RedisBackend.from_url(redis_server.url)
    try:
        yield a, b
    finally:
        await a.client.aclose()
        await b.client.aclose()


def copy_of(backend: RedisBackend, session_id: str) -> HttpSession:
    """This instance's copy of session ``session_id``."""
    table = SessionTable(
        Server("t"),
        session_idle_timeout=60,
        max_sessions=None,
        event_store_factory=InMemoryEventStore,
        redis=backend,
    )
    return HttpSession(table, session_id)


async def both_tellers(self: RedisBackend, session_id: str) -> bool:
    return True  # every copy believes it holds the lease


async def stored(backend: RedisBackend, session_id: str) -> list[Any]:
    entries = await backend.client.xrange(f"jsonrpc-mcp:events:{session_id}:_")
    return [orjson.loads(fields[b"m"]) for _, fields in entries]


async def test_two_copies_that_both_tell_store_each_change_once(
    two: tuple[RedisBackend, RedisBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two
    monkeypatch.setattr(RedisBackend, "_claim", both_tellers)
    on_a, on_b = copy_of(a, "s1"), copy_of(b, "s1")
    first = a.changes.new_change(list_key("tool"))  # made on A, published with its id
    b.changes.heard(TOOLS, first)  # what B's bus subscriber does with the message
    told = [await a.told(on_a, LIST_CHANGED), await b.told(on_b, LIST_CHANGED)]
    once = await stored(a, "s1")
    second = b.changes.new_change(list_key("tool"))
    a.changes.heard(TOOLS, second)
    told += [await b.told(on_b, LIST_CHANGED), await a.told(on_a, LIST_CHANGED)]
    twice = await stored(a, "s1")
    marks = sorted(await a.client.keys("jsonrpc-mcp:told:s1:*"))
    assert told == [True, True, True, True]  # each copy told it (to Redis) ...
    assert [m["method"] for m in once] == [TOOLS]  # ... and Redis took the first one only
    assert [m["method"] for m in twice] == [TOOLS, TOOLS]  # one per change
    assert marks == sorted(f"jsonrpc-mcp:told:s1:{c}".encode() for c in (first, second))
    assert 0 < await a.client.ttl(marks[0]) <= 600  # short-lived


async def test_a_copy_that_coalesced_other_changes_stores_what_is_new(
    two: tuple[RedisBackend, RedisBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = two
    monkeypatch.setattr(RedisBackend, "_claim", both_tellers)
    on_a, on_b = copy_of(a, "s2"), copy_of(b, "s2")
    first, second = a.changes.new_change(TOOLS), a.changes.new_change(TOOLS)  # a burst on A
    b.changes.heard(TOOLS, first)
    await b.told(on_b, LIST_CHANGED)  # B heard of the first change only, and told it
    b.changes.heard(TOOLS, second)
    await a.told(on_a, LIST_CHANGED)  # A tells both at once: the second is new
    await b.told(on_b, LIST_CHANGED)  # B's notice of the second: already stored
    assert len(await stored(a, "s2")) == 2  # never more notices than changes, none lost


async def test_a_notice_is_marked_per_session_and_resource_updates_per_uri(
    two: tuple[RedisBackend, RedisBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, _ = two
    monkeypatch.setattr(RedisBackend, "_claim", both_tellers)
    one, other = copy_of(a, "s3"), copy_of(a, "s4")
    a.changes.new_change(resource_key("res://doc"))
    updated = orjson.dumps({"jsonrpc": "2.0", "method": RESOURCE_UPDATED, "params": {"uri": "res://doc"}})
    assert await a.told(one, updated) and await a.told(other, updated)
    assert len(await stored(a, "s3")) == 1 and len(await stored(a, "s4")) == 1


async def test_with_redis_down_every_copy_sends_it(
    two: tuple[RedisBackend, RedisBackend], redis_server: RedisServer
) -> None:
    a, _ = two
    on_a = copy_of(a, "s5")
    a.changes.new_change(TOOLS)
    redis_server.stop()
    assert await a.told(on_a, LIST_CHANGED) is False  # the caller emits it as any message


def test_the_change_log_gives_each_copy_the_ids_it_has_not_told() -> None:
    log = ChangeLog("i")
    start = log.now()
    first, second = log.new_change(TOOLS), log.new_change(resource_key("u"))
    ids, upto = log.since(TOOLS, start)
    assert (ids, log.since(TOOLS, upto)[0]) == ([first], [])
    assert log.since(resource_key("u"), start)[0] == [second]
    assert log.since("nothing", start) == ([], start)
    assert notice_key(LIST_CHANGED) == TOOLS and notice_key(b"{") is None
    assert notice_key(b'{"jsonrpc":"2.0","id":1,"result":{}}') is None
