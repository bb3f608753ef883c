"""Where tasks live: a small async store of plain JSON-like records, and the in-memory default.

A record is the task's wire fields (``taskId``, ``status``, ``statusMessage``, ``createdAt``,
``lastUpdatedAt``, ``ttlMs``, ``pollIntervalMs``, and by status ``inputRequests``, ``result`` or
``error``) plus two private fields: ``expiresAt`` (epoch seconds, None: never; the store's to set) and
``inputResponses`` (answers received by ``tasks/update`` that the running task has not taken yet).
Only serialisable data goes in, so a store may keep records elsewhere (Redis, a database) and
several server processes may share one.
"""

from __future__ import annotations

import copy
import heapq
import time
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "PRIVATE_FIELDS",
    "TERMINAL",
    "InMemoryTaskStore",
    "TaskStore",
    "TaskStoreFull",
    "is_terminal",
    "now_iso",
]

TERMINAL = frozenset({"completed", "failed", "cancelled"})
PRIVATE_FIELDS = frozenset({"expiresAt", "inputResponses"})


def now_iso() -> str:
    """The current UTC time as ISO 8601 (milliseconds, ``Z``): the tasks' timestamps."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def is_terminal(record: dict[str, Any]) -> bool:
    return record.get("status") in TERMINAL


@runtime_checkable
class TaskStore(Protocol):
    """The storage of a :class:`~jsonrpc_mcp.server.tasks.TasksExtension` (implement it for a
    shared store). Records are plain dicts; a store returns copies (callers may change them)."""

    async def create(self, record: dict[str, Any]) -> None:
        """Store a new task (readable by :meth:`get` once this returns) until ``ttlMs`` from now
        (None: no limit) has passed."""
        ...

    async def get(self, task_id: str) -> dict[str, Any] | None:
        """The task, or None when there is none (never created, deleted, or expired)."""
        ...

    async def update(self, task_id: str, changes: dict[str, Any]) -> dict[str, Any] | None:
        """Merge ``changes`` into a task that is not terminal (a value None removes the field) and
        return the record after; None when there is no such task or it is terminal already (a
        terminal status never changes)."""
        ...


class TaskStoreFull(Exception):
    """The store holds as many unfinished tasks as it may: a new one is refused."""


class InMemoryTaskStore:
    """Tasks in a dict of this process, at most ``max_tasks`` of them.

    Expired tasks are dropped when met and, on each create, from a heap ordered by expiry (so a
    create costs O(log n), never a scan of every task). When the store is full, the oldest finished
    task makes room; if every task is still running, the new one is refused (:class:`TaskStoreFull`).
    """

    def __init__(self, *, clock: Any = time.time, max_tasks: int = 10_000) -> None:
        if type(max_tasks) is not int or max_tasks <= 0:
            raise ValueError("max_tasks must be a positive integer")
        self._records: dict[str, dict[str, Any]] = {}
        self._expiry: list[tuple[float, str]] = []  # heap of (expiresAt, taskId); stale entries skipped
        self._finished: dict[str, None] = {}  # terminal tasks, oldest first (an ordered set)
        self._clock = clock
        self.max_tasks = max_tasks

    def _drop(self, task_id: str) -> None:
        self._records.pop(task_id, None)
        self._finished.pop(task_id, None)

    def _live(self, task_id: str) -> dict[str, Any] | None:
        record = self._records.get(task_id)
        if record is None:
            return None
        expires = record.get("expiresAt")
        if expires is not None and self._clock() >= expires:
            self._drop(task_id)
            return None
        return record

    def _expire(self, now: float) -> None:
        heap = self._expiry
        while heap and heap[0][0] <= now:
            expires, task_id = heapq.heappop(heap)
            record = self._records.get(task_id)
            if record is not None and record.get("expiresAt") == expires:
                self._drop(task_id)

    async def create(self, record: dict[str, Any]) -> None:
        """Store a copy of the new task (expiring ``ttlMs`` from now); expired tasks are dropped,
        and the oldest finished one when the store is full. :class:`TaskStoreFull` when every
        stored task is still running."""
        now = self._clock()
        self._expire(now)
        if len(self._records) >= self.max_tasks:
            if not self._finished:
                raise TaskStoreFull(
                    f"{len(self._records)} tasks are still running; the limit is {self.max_tasks}"
                )
            self._drop(next(iter(self._finished)))
        record = copy.deepcopy(record)
        ttl = record.get("ttlMs")
        record["expiresAt"] = None if ttl is None else now + ttl / 1000
        self._records[record["taskId"]] = record
        if record["expiresAt"] is not None:
            heapq.heappush(self._expiry, (record["expiresAt"], record["taskId"]))
        if is_terminal(record):
            self._finished[record["taskId"]] = None

    async def get(self, task_id: str) -> dict[str, Any] | None:
        """A copy of the task, or None when there is none (never created, or expired)."""
        record = self._live(task_id)
        return copy.deepcopy(record) if record is not None else None

    async def update(self, task_id: str, changes: dict[str, Any]) -> dict[str, Any] | None:
        """Merge ``changes`` into a task that is not terminal (None removes a field); a copy of the
        record after, or None when there is no such task or it is terminal."""
        record = self._live(task_id)
        if record is None or is_terminal(record):
            return None
        for key, value in copy.deepcopy(changes).items():
            if value is None:
                record.pop(key, None)
            else:
                record[key] = value
        if is_terminal(record):
            self._finished[task_id] = None
        return copy.deepcopy(record)

    def __len__(self) -> int:
        return len(self._records)
