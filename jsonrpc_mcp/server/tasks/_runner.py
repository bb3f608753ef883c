"""A running task: its background run, its input channel, and the calls a tool makes from inside.

Theory of operation
-------------------
A task's tool call runs in a task of its own, detached from the request that created it (the
request is answered with the ``CreateTaskResult`` while the tool runs on): on asyncio a loop task,
on trio a system task. Each :class:`Job` wraps its run in a cancel scope that ``tasks/cancel``
cancels (cooperative cancellation: the tool sees a cancellation at its next await).

The run is the request itself, served again by the rest of the middleware chain (``call_next``),
so a tool in a task is served exactly as an ordinary modern ``tools/call`` is. Input the tool needs
reaches the client through ``tasks/get`` instead of an ``InputRequiredResult``:

* the run's ``current_input_channel`` (:mod:`.._mrtr`) is a :class:`TaskInputChannel`, so the
  tool's asks (``ctx.elicit``, ``ctx.ask({...})``...) reach :meth:`Job.ask`, which parks the task
  in ``input_required`` with the questions as ``inputRequests`` and returns when ``tasks/update``
  has answered them all (partly answered questions stay pending, the answered keys leave
  ``inputRequests``);
* a run that still ends in an ``InputRequiredResult`` (an ask of the multi round-trip exchange) is
  parked the same way, then replayed with the answers as ``inputResponses`` and its
  ``requestState``, as a client would retry it.

A *deferred* task (``defer_task=True``) runs as an ordinary call until the tool calls
:func:`start_task` (after gathering input the multi round-trip way, say): only then is the task
created, and the request answered with it; a run that ends before that answers the request itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

import anyio
import anyio.lowlevel

from .._mrtr import current_input_channel
from ._store import TaskStore, is_terminal, now_iso

__all__ = ["Job", "TaskInputChannel", "current_job", "spawn", "start_task"]

logger = logging.getLogger("jsonrpc_mcp.server.tasks")

current_job: ContextVar[Job | None] = ContextVar("jsonrpc_mcp_task_job", default=None)


def spawn(fn: Callable[[], Awaitable[None]]) -> None:
    """Run ``fn()`` detached from the caller (it outlives the request), in the caller's context."""
    context = contextvars.copy_context()
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:  # not asyncio: trio
        import trio

        trio.lowlevel.spawn_system_task(_guarded, fn, context=context)
        return
    task = context.run(loop.create_task, _guarded(fn))  # (the task copies the context it starts in)
    _RUNNING.add(task)
    task.add_done_callback(_RUNNING.discard)


_RUNNING: set[asyncio.Task[None]] = set()  # (a loop keeps only weak references to its tasks)


async def _guarded(fn: Callable[[], Awaitable[None]]) -> None:
    try:
        await fn()
    except BaseException:  # a detached task has no one to raise to
        logger.exception("a task's background run failed")


class Job:
    """This process's handle on one task it runs: the cancel scope, the wake-up for answers, and
    (deferred tasks) the hand-over to the request that started it."""

    def __init__(
        self,
        store: TaskStore,
        task_id: str,
        poll_interval: float,
        *,
        deferred: bool = False,
        changed: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.changed = changed  # told after each change of the task's record (notifications/tasks)
        self.task_id = task_id
        self.poll_interval = poll_interval
        self.scope = anyio.CancelScope()
        self.wake = anyio.Event()
        self.deferred = deferred
        self.started = not deferred
        self.start_requested = anyio.Event()  # (deferred) the tool called start_task()
        self.created = anyio.Event()  # (deferred) the task exists: the tool may go on
        self.early: tuple[bool, Any] | None = None  # (deferred) how the run ended before starting
        self.ended = anyio.Event()

    def cancel(self) -> None:
        self.scope.cancel()

    def poke(self) -> None:
        """Answers arrived (or the task changed): wake the run waiting for them."""
        self.wake.set()

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Park the task in ``input_required`` with ``requests`` (key -> ``{method, params}``) and
        return the client's answers (key -> result) once ``tasks/update`` brought every one."""
        record = await self.store.update(
            self.task_id,
            {"status": "input_required", "inputRequests": dict(requests), "inputResponses": {}, **_stamp()},
        )
        if record is not None and self.changed is not None:
            await self.changed(self.task_id)
        answers: dict[str, Any] = {}
        while True:
            if record is not None:
                self.wake = anyio.Event()
                record = await self.store.get(self.task_id)
            if record is None or is_terminal(record):  # cancelled (maybe by another process), or gone
                self.scope.cancel()
                await anyio.lowlevel.checkpoint()  # (the cancellation ends the run here)
                raise RuntimeError(f"task {self.task_id} ended")
            given = record.get("inputResponses") or {}
            answers.update({k: v for k, v in given.items() if k in requests})
            if len(answers) == len(requests):
                await self.store.update(
                    self.task_id,
                    {"status": "working", "inputRequests": None, "inputResponses": None, **_stamp()},
                )
                if self.changed is not None:
                    await self.changed(self.task_id)
                return answers
            with anyio.move_on_after(self.poll_interval):  # (another process may run tasks/update)
                await self.wake.wait()


class TaskInputChannel:
    """A task's way to ask the client for input: ``await channel.ask({key: {method, params}})``."""

    def __init__(self, job: Job) -> None:
        self._job = job

    async def ask(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Park the task in ``input_required`` with these requests and return the answers once
        ``tasks/update`` brings them (key -> result)."""
        return await self._job.ask(requests)


async def start_task() -> None:
    """In a tool registered with ``defer_task=True``: become a task now (the request is answered
    with the ``CreateTaskResult``; the tool runs on). Anywhere else it does nothing, so the same
    tool serves a client without the tasks extension synchronously."""
    job = current_job.get()
    if job is None or job.started:
        return
    job.started = True
    job.start_requested.set()
    await job.created.wait()
    current_input_channel.set(TaskInputChannel(job))  # from here on the tool's asks park the task


def _stamp() -> dict[str, str]:
    return {"lastUpdatedAt": now_iso()}
