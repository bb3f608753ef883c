"""Tasks in Redis: a :class:`~jsonrpc_mcp.server.tasks.TaskStore` the instances of a server share.

Each task is one JSON string at ``<prefix>:task:<taskId>``, set to expire with the task (``ttlMs``;
none: it stays until deleted). An update is an optimistic transaction (``WATCH`` the key, read,
merge, ``MULTI``/``SET ... KEEPTTL``/``EXEC``, again if another writer came first), so a terminal
status written by one instance is never overwritten by another. The task's run stays in the
instance that created it; ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` work on any instance
(the run reads the answers and the cancellation from the store as it polls). Each change of a task
is also published on the bus (``publish``), so the ``subscriptions/listen`` streams watching it on
other instances get ``notifications/tasks`` too: each instance reads the record and tells its own
listeners (:func:`tell_listeners`).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from ..server.tasks import InMemoryTaskStore, TasksExtension
from ..server.tasks._store import is_terminal

__all__ = ["RedisTaskStore", "share_tasks"]


class RedisTaskStore:
    """The tasks of a server in Redis (``client``: a ``redis.asyncio`` client)."""

    def __init__(self, client: Any, prefix: str = "jsonrpc-mcp", *, clock: Any = time.time) -> None:
        self._client = client
        self._prefix = prefix
        self._clock = clock

    def _key(self, task_id: str) -> str:
        return f"{self._prefix}:task:{task_id}"

    async def create(self, record: dict[str, Any]) -> None:
        ttl = record.get("ttlMs")
        stored = {**record, "expiresAt": None if ttl is None else self._clock() + ttl / 1000}
        await self._client.set(self._key(record["taskId"]), orjson.dumps(stored), px=ttl)

    async def get(self, task_id: str) -> dict[str, Any] | None:
        raw = await self._client.get(self._key(task_id))
        return None if raw is None else dict(orjson.loads(raw))

    async def update(self, task_id: str, changes: dict[str, Any]) -> dict[str, Any] | None:
        from redis.exceptions import WatchError

        key = self._key(task_id)
        async with self._client.pipeline(transaction=True) as pipe:
            while True:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    record: dict[str, Any] = orjson.loads(raw)
                    if is_terminal(record):
                        return None
                    for name, value in changes.items():
                        if value is None:
                            record.pop(name, None)
                        else:
                            record[name] = value
                    pipe.multi()
                    pipe.set(key, orjson.dumps(record), keepttl=True)
                    await pipe.execute()
                    return record
                except WatchError:  # another instance changed it meanwhile: read it again
                    continue


def share_tasks(
    server: Any, client: Any, prefix: str, publish: Callable[[dict[str, Any]], None] | None = None
) -> bool:
    """Put the server's tasks in Redis when its Tasks extension keeps the default store (still
    empty), and publish each change of a task with ``publish``; whether it did."""
    extension = _extension(server)
    if extension is None:
        return False
    store = extension.store
    if type(store) is not InMemoryTaskStore or len(store):
        return False
    extension.store = RedisTaskStore(client, prefix)
    if publish is not None:
        local: Callable[[str], Awaitable[None]] = extension._changed

        async def changed(task_id: str) -> None:  # what the extension calls after each change
            await local(task_id)
            publish({"k": "task", "v": task_id})

        extension._local_changed = local  # type: ignore[attr-defined]  # (see tell_listeners)
        extension._changed = changed  # type: ignore[method-assign]
    return True


async def tell_listeners(server: Any, task_id: str) -> None:
    """Another instance changed task ``task_id``: tell this instance's listeners watching it."""
    extension = _extension(server)
    local = getattr(extension, "_local_changed", None)
    if local is not None:
        await local(task_id)


def _extension(server: Any) -> TasksExtension | None:
    return next((e for e in server.extensions.values() if isinstance(e, TasksExtension)), None)
