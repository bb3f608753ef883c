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
import time
from datetime import datetime, timezone
from typing import Any, Protocol, runtime_checkable

__all__ = ["PRIVATE_FIELDS", "TERMINAL", "InMemoryTaskStore", "TaskStore", "is_terminal", "now_iso"]

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


class InMemoryTaskStore:
    """Tasks in a dict of this process; expired ones are dropped when met (and on each create)."""

    def __init__(self, *, clock: Any = time.time) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._clock = clock

    def _live(self, task_id: str) -> dict[str, Any] | None:
        record = self._records.get(task_id)
        if record is None:
            return None
        expires = record.get("expiresAt")
        if expires is not None and self._clock() >= expires:
            del self._records[task_id]
            return None
        return record

    async def create(self, record: dict[str, Any]) -> None:
        """Store a copy of the new task (expiring ``ttlMs`` from now); expired tasks are dropped."""
        now = self._clock()
        for key in [
            k for k, r in self._records.items() if r.get("expiresAt") is not None and now >= r["expiresAt"]
        ]:
            del self._records[key]
        record = copy.deepcopy(record)
        ttl = record.get("ttlMs")
        record["expiresAt"] = None if ttl is None else now + ttl / 1000
        self._records[record["taskId"]] = record

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
        return copy.deepcopy(record)

    def __len__(self) -> int:
        return len(self._records)
