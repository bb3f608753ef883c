"""A session's events in Redis Streams (:class:`RedisEventStore`), for :mod:`._redis`.

Each SSE stream of a session is a Redis stream, ``<prefix>:events:<session id>:<stream id>``; an
event id is ``<stream id>:<entry id>``. :meth:`RedisEventStore.follow` is how a GET connection
serves a stream any instance writes (``XREAD BLOCK``). See :mod:`._redis` for the whole story.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
import orjson

from ..transports.sse import encode_event

__all__ = ["RedisEventStore"]

logger = logging.getLogger("jsonrpc_mcp.http.redis")

_ENTRY_ID = re.compile(rb"[0-9]{1,20}-[0-9]{1,20}")
_STREAM_ID = re.compile(r"[A-Za-z0-9_]{1,32}")
_BACKOFF = (0.1, 0.5, 1.0, 2.0)  # seconds between attempts to reach Redis again
# store_event, unless no mark (KEYS[3]...) is new: each is set (for ARGV[4] seconds) if it was not;
# KEYS[1]: the stream, KEYS[2]: the session's record; ARGV: message, max events, ttl, marks' ttl
_STORE_ONCE = """
local new = false
for i = 3, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'NX', 'EX', ARGV[4]) then new = true end
end
if not new then return false end
local entry = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[2], '*', 'm', ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return entry
"""


class RedisEventStore:
    """The events of one session's streams in Redis Streams (an :class:`~._events.EventStore`)."""

    def __init__(
        self,
        client: Any,
        base: str,
        *,
        max_events: int = 1000,
        ttl: float = 3600.0,
        record: str | None = None,
    ) -> None:
        self._client = client
        self._base = base  # <prefix>:events:<session id>
        self._record = record  # <prefix>:session:<session id>, kept alive as long as the streams
        self._max = max_events
        self._ttl = max(1, int(ttl))
        self._keys: set[str] = set()  # the streams written here, dropped by close

    async def store_event(self, stream_id: str, message: bytes) -> str:
        """Store the event; with Redis down, the event still goes to the connection attached, with
        an id no replay knows (a warning says so): the request is not failed for it."""
        key = f"{self._base}:{stream_id}"
        pipe = self._client.pipeline(transaction=False)
        pipe.xadd(key, {b"m": message}, maxlen=self._max, approximate=True)
        pipe.expire(key, self._ttl)
        if self._record is not None:
            pipe.expire(self._record, self._ttl)
        try:
            entry = (await pipe.execute())[0]
        except Exception as exc:
            logger.warning("an event was not stored in Redis (it cannot be replayed): %s", exc)
            return f"{stream_id}:0-0"
        self._keys.add(key)
        return f"{stream_id}:{entry.decode('ascii')}"

    async def store_once(self, stream_id: str, message: bytes, marks: Sequence[str], ttl: int) -> bool:
        """Store the event unless it was stored already: one Lua script sets each of ``marks`` (keys
        naming what the message tells, living ``ttl`` seconds) that was not set, and appends the
        event only if one was new. True: stored now; False: another instance stored it (whatever
        connection is attached follows the stream: nothing to write). Raises when Redis fails."""
        key = f"{self._base}:{stream_id}"
        args = (message, self._max, self._ttl, ttl)
        entry = await self._client.eval(_STORE_ONCE, 2 + len(marks), key, self._record or key, *marks, *args)
        if entry is None:
            return False
        self._keys.add(key)
        return True

    async def events_after(self, last_event_id: str) -> tuple[str, list[tuple[str, bytes]]] | None:
        """(stream id, [(event id, message), ...] after it) from the Redis stream, or None if the
        id is malformed, unknown, trimmed or expired."""
        stream_id, _, entry = last_event_id.rpartition(":")
        raw = entry.encode("latin-1", "replace")
        if not _STREAM_ID.fullmatch(stream_id) or not _ENTRY_ID.fullmatch(raw):
            return None
        entries = await self._client.xrange(f"{self._base}:{stream_id}", min=entry, max="+")
        if not entries or entries[0][0] != raw:  # trimmed away, expired, or never there
            return None
        replay = [(f"{stream_id}:{eid.decode('ascii')}", fields[b"m"]) for eid, fields in entries[1:]]
        return stream_id, replay

    async def last_entry(self, stream_id: str) -> str:
        """The entry id of the stream's last event ("0-0": none yet): where a follower starts."""
        entries = await self._client.xrevrange(f"{self._base}:{stream_id}", max="+", min="-", count=1)
        return entries[0][0].decode("ascii") if entries else "0-0"

    async def follow(
        self,
        stream_id: str,
        after: str,
        write: Callable[[bytes], Awaitable[None]],
        *,
        until_answer: bool,
    ) -> None:
        """Write each event of the stream after entry ``after`` as it is stored, by whichever
        instance (``XREAD BLOCK``); return once an answer was written when ``until_answer`` (a
        request's stream), else run until cancelled. Empty events (priming, final) are skipped:
        the instance that stored one wrote it to its own connection, with its retry hint.
        Redis unreachable: retried with a bounded back-off, from the last event written."""
        key, last, attempt = f"{self._base}:{stream_id}", after, 0
        while True:
            try:
                found = await self._client.xread({key: last}, block=15_000, count=100)
            except Exception as exc:
                log = logger.warning if attempt == 0 else logger.debug
                log("following stream %s in Redis failed (%s): retrying", stream_id, exc)
                await anyio.sleep(_BACKOFF[min(attempt, len(_BACKOFF) - 1)])
                attempt += 1
                continue
            attempt = 0
            for _, entries in found or ():
                for entry, fields in entries:
                    last = entry.decode("ascii")
                    message = fields.get(b"m", b"")
                    if not message:
                        continue
                    await write(encode_event(message, id=f"{stream_id}:{last}"))
                    if until_answer and _is_answer(message):
                        return

    async def close(self) -> None:
        """Nothing: the session ended *here* (shutdown, idle expiry), and another instance may still
        resume its streams; the TTL drops them. :meth:`drop` is for a session deleted by its client."""

    async def drop(self) -> None:
        """Delete the streams written here and the session's record (the client ended the session)."""
        keys = [*self._keys, *([self._record] if self._record is not None else [])]
        if keys:
            self._keys = set()
            with contextlib.suppress(Exception):  # Redis down: the TTL removes them
                await self._client.delete(*keys)


def _is_answer(message: bytes) -> bool:
    """Whether a stored message is a request's answer (the last event of its stream)."""
    if not message:
        return False
    try:
        decoded = orjson.loads(message)
    except orjson.JSONDecodeError:
        return False
    return type(decoded) is list or (type(decoded) is dict and "method" not in decoded)
