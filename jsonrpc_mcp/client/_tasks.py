"""The Tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663), client side.

``await client.call_tool(name, args, task=True)`` declares the extension on that request and, when
the server answers with a task, drives it to its end: it polls ``tasks/get`` at the server's
``pollIntervalMs``, answers ``input_required`` tasks' ``inputRequests`` with the client's
``request_handlers`` (through ``tasks/update``), and returns the tool's result (a ``failed`` task
raises its JSON-RPC error, a ``cancelled`` one :class:`TaskCancelled`). ``client.start_tool_task``
returns the :class:`ToolTask` handle instead, to poll, answer or cancel it yourself.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio

from ..jsonrpc.errors import JsonRpcError
from ._dispatch import RequestHandler
from ._modern import _answer, _can_answer

__all__ = ["TASKS", "TERMINAL", "TaskCancelled", "TaskInputUnanswerable", "ToolTask"]

TASKS = "io.modelcontextprotocol/tasks"
TERMINAL = frozenset({"completed", "failed", "cancelled"})
DEFAULT_POLL = 0.5  # seconds, when the server suggests no interval
MAX_POLL = 30.0

Request = Callable[[str, dict[str, Any]], Awaitable[Any]]


class TaskCancelled(Exception):
    """The task ended ``cancelled``: it has no result."""

    def __init__(self, task: dict[str, Any]) -> None:
        super().__init__(f"task {task.get('taskId')} was cancelled")
        self.task = task


class TaskInputUnanswerable(Exception):
    """The task needs input the client has no handler for (``task`` is the ``tasks/get`` result)."""

    def __init__(self, task: dict[str, Any]) -> None:
        methods = sorted({str(r.get("method")) for r in (task.get("inputRequests") or {}).values()})
        super().__init__(
            f"task {task.get('taskId')} needs input the client cannot give: {', '.join(methods)}"
        )
        self.task = task


class ToolTask:
    """A tool call the server runs as a task (``task_id``), or answered at once (``task_id`` None,
    the result in ``immediate``)."""

    def __init__(
        self, request: Request, handlers: Mapping[str, RequestHandler], created: dict[str, Any]
    ) -> None:
        self._request = request
        self._handlers = handlers
        self.created = created
        is_task = created.get("resultType") == "task" and isinstance(created.get("taskId"), str)
        self.task_id: str | None = created["taskId"] if is_task else None
        self.immediate: dict[str, Any] | None = None if is_task else created
        self.last: dict[str, Any] = created if is_task else {}
        self.poll_interval = _interval(created.get("pollIntervalMs"))

    def __repr__(self) -> str:
        return f"ToolTask({self.task_id!r}, status={self.last.get('status')!r})"

    def _id(self) -> str:
        if self.task_id is None:
            raise RuntimeError("the server answered this call at once: there is no task")
        return self.task_id

    async def get(self) -> dict[str, Any]:
        """``tasks/get``: the task now (``status``, and ``result``/``error``/``inputRequests``)."""
        self.last = await self._request("tasks/get", {"taskId": self._id()})
        if "pollIntervalMs" in self.last:
            self.poll_interval = _interval(self.last.get("pollIntervalMs"))
        return self.last

    async def update(self, input_responses: dict[str, Any]) -> None:
        """``tasks/update``: answers to (some of) the task's pending ``inputRequests``."""
        await self._request("tasks/update", {"taskId": self._id(), "inputResponses": input_responses})

    async def cancel(self) -> None:
        """``tasks/cancel`` (cooperative: :meth:`get` shows when the task ended ``cancelled``)."""
        await self._request("tasks/cancel", {"taskId": self._id()})

    async def wait(self) -> dict[str, Any]:
        """Poll until the task ends (answering its input requests); the final ``tasks/get``."""
        if self.task_id is None:
            return {"status": "completed", "result": self.immediate}
        while True:
            task = await self.get()
            status = task.get("status")
            if status in TERMINAL:
                return task
            if status == "input_required" and task.get("inputRequests"):
                requests = task["inputRequests"]
                if not _can_answer(requests, self._handlers):
                    raise TaskInputUnanswerable(task)
                await self.update(await _answer(requests, self._handlers))
                continue
            await anyio.sleep(self.poll_interval)

    async def result(self) -> dict[str, Any]:
        """The tool's result once the task ended: ``completed`` -> the ``CallToolResult``,
        ``failed`` -> its JSON-RPC error raised, ``cancelled`` -> :class:`TaskCancelled`."""
        task = await self.wait()
        status = task.get("status")
        if status == "completed":
            result = task.get("result")
            return result if isinstance(result, dict) else {}
        if status == "failed":
            found = task.get("error")
            error: dict[str, Any] = found if isinstance(found, dict) else {}
            code = error.get("code")
            raise JsonRpcError(
                str(error.get("message", "the task failed")),
                error.get("data"),
                code=code if isinstance(code, int) else -32603,
            )
        raise TaskCancelled(task)


def _interval(value: Any) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return min(value / 1000, MAX_POLL)
    return DEFAULT_POLL


def with_tasks_declared(
    params: dict[str, Any], capabilities: dict[str, Any], meta_key: str
) -> dict[str, Any]:
    """``params`` whose envelope declares the Tasks extension (besides the client's capabilities)."""
    declared = capabilities.get("extensions")
    extensions = {**(declared if isinstance(declared, dict) else {}), TASKS: {}}
    meta = dict(params.get("_meta") or {})
    meta[meta_key] = {**capabilities, "extensions": extensions}
    return {**params, "_meta": meta}
