"""The Tasks extension ``io.modelcontextprotocol/tasks`` (SEP-2663), server side.

Theory of operation
-------------------
Creation is server-directed: a tool registered with ``task="optional"`` or ``task="required"``
(``@server.tool(task=...)``) is run as a task when the ``tools/call`` request declares the
extension in its envelope's ``clientCapabilities.extensions``; the request is answered at once
with a ``CreateTaskResult`` (``resultType: "task"``, the task's fields at the top level), after
the task was stored, so a ``tasks/get`` right after it resolves. A request that does not declare
the extension gets an ordinary call (``optional``), or -32021 naming the extension
(``required``). Only the stateless revisions (2026-07-28 on) have the extension.

The task's run (:mod:`._runner`) ends in one of the statuses: ``completed`` with the tool's result
(an ``isError`` result included: the tool ran), ``failed`` with the JSON-RPC error a protocol-level
failure is (its ``code``, ``message``, ``data``), or ``cancelled`` (``tasks/cancel``; the run is
cancelled cooperatively). While it runs it is ``working``, or ``input_required`` with
``inputRequests`` waiting for ``tasks/update``. A terminal status never changes. A task lives
``ttl_ms`` from its creation (None: until the store drops it), then ``tasks/get`` no longer knows it.

Methods (each -32021 for a request not declaring the extension, -32602 for an unknown ``taskId``):
``tasks/get`` (the task, with ``result``/``error``/``inputRequests`` by status), ``tasks/update``
(answers to pending input requests; keys not pending are ignored; an empty ack), ``tasks/cancel``
(an empty ack; cancelling a terminal task changes nothing). ``subscriptions/listen`` asking for
``notifications.taskIds`` without declaring the extension is -32021; with it, the listener gets a
``notifications/tasks`` (the task as ``tasks/get`` shows it) on every change of those tasks (made
in this process: a shared store's other processes push to their own listeners).
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import anyio

from ... import wire
from ...jsonrpc.errors import InternalError, InvalidParams, JsonRpcError
from .._boundary import to_wire, tool_error
from .._extensions import Extension, ExtensionHandler, call_client_extensions, missing_extension
from .._mrtr import current_input_channel
from .._stateless import finish
from ._runner import Job, TaskInputChannel, current_job, spawn
from ._store import PRIVATE_FIELDS, InMemoryTaskStore, TaskStore, TaskStoreFull, is_terminal, now_iso

if TYPE_CHECKING:
    from .._context import Context
    from .._pipeline import Call, CallNext
    from .._server import Server

__all__ = ["TASKS", "TasksExtension"]

TASKS = "io.modelcontextprotocol/tasks"
MODES = ("optional", "required")
NOTIFICATION = "notifications/tasks"


class TasksExtension(Extension):
    """``io.modelcontextprotocol/tasks``: tools that run as tasks, and ``tasks/get``,
    ``tasks/update``, ``tasks/cancel``.

    ``store``: where tasks live (default :class:`InMemoryTaskStore`); ``ttl_ms``: how long a task
    stays readable after its creation (None: no limit); ``poll_interval_ms``: the polling interval
    suggested to clients. ``@server.tool(task=...)`` adds one with the defaults when the server has
    none; add your own first (``Server(extensions=[TasksExtension(...)])``) to choose them.
    """

    id = TASKS

    def __init__(
        self,
        *,
        store: TaskStore | None = None,
        ttl_ms: int | None = 3_600_000,
        poll_interval_ms: int = 500,
    ) -> None:
        if ttl_ms is not None and (type(ttl_ms) is not int or ttl_ms <= 0):
            raise ValueError("ttl_ms must be a positive integer (milliseconds) or None")
        if type(poll_interval_ms) is not int or poll_interval_ms <= 0:
            raise ValueError("poll_interval_ms must be a positive integer (milliseconds)")
        self.store: TaskStore = store if store is not None else InMemoryTaskStore()
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.tools: dict[str, tuple[str, bool]] = {}  # tool name -> (mode, deferred)
        self.jobs: dict[str, Job] = {}  # the tasks this process runs
        self.server: Server | None = None
        self.middleware = self._intercept

    def attach(self, server: Any) -> None:
        """Keep a reference to the server the extension is added to."""
        self.server = server

    def mark(self, tool: str, mode: str | None, *, deferred: bool = False) -> None:
        """Make ``tool`` run as a task ("optional": when the client declares the extension;
        "required": never otherwise, -32021), or an ordinary tool again (None)."""
        if mode is None:
            self.tools.pop(tool, None)
            return
        if mode not in MODES:
            raise ValueError(f'task must be "optional" or "required"; got {mode!r}')
        self.tools[tool] = (mode, deferred)

    def methods(self) -> dict[str, ExtensionHandler]:
        """``tasks/get``, ``tasks/update`` and ``tasks/cancel``."""
        return {"tasks/get": self._get, "tasks/update": self._update, "tasks/cancel": self._cancel}

    # -- creation ---------------------------------------------------------------------------------
    async def _intercept(self, call: Call, call_next: CallNext) -> Any:
        if call.method != wire.TOOLS_CALL or call.era != "stateless" or call.revision is None:
            if _asks_task_notifications(call) and TASKS not in call_client_extensions(call):
                # (a MUST, whether or not the server pushes them)
                raise missing_extension(TASKS, "subscriptions/listen with notifications.taskIds")
            return await call_next(call)
        name = call.params.get("name")
        found = self.tools.get(name) if type(name) is str else None
        if found is None or (self.server is not None and self.server.tools.get(str(name)) is None):
            return await call_next(call)
        mode, deferred = found
        if TASKS not in call_client_extensions(call):
            if mode == "required":
                raise missing_extension(TASKS, f"tool {name!r}")
            return await call_next(call)
        return await (self._deferred(call, call_next) if deferred else self._immediate(call, call_next))

    def _new_job(self, deferred: bool) -> Job:
        task_id = str(uuid.uuid4())
        job = Job(self.store, task_id, self.poll_interval_ms / 1000, deferred=deferred, changed=self._changed)
        self.jobs[task_id] = job
        return job

    async def _create(self, job: Job) -> dict[str, Any]:
        stamp = now_iso()
        record: dict[str, Any] = {
            "taskId": job.task_id,
            "status": "working",
            "createdAt": stamp,
            "lastUpdatedAt": stamp,
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        try:
            await self.store.create(record)
        except TaskStoreFull:
            self.jobs.pop(job.task_id, None)
            job.cancel()  # (deferred: the call was running until it asked to become a task)
            raise
        await self._changed(job.task_id)
        return record

    def _created_result(self, call: Call, record: dict[str, Any]) -> Any:
        fields = (
            "taskId",
            "status",
            "statusMessage",
            "createdAt",
            "lastUpdatedAt",
            "ttlMs",
            "pollIntervalMs",
        )
        result = {"resultType": "task", **{k: record[k] for k in fields if k in record}}
        assert self.server is not None and call.revision is not None
        return finish(self.server, call.revision, wire.TOOLS_CALL, result)

    def _refused(self, call: Call, exc: TaskStoreFull) -> Any:
        """The answer when the store has no room: a tool error the model can read."""
        assert self.server is not None and call.revision is not None
        text = f"The server cannot start another task now ({exc}); try again later"
        return finish(self.server, call.revision, wire.TOOLS_CALL, tool_error(text))

    async def _immediate(self, call: Call, call_next: CallNext) -> Any:
        job = self._new_job(deferred=False)
        try:
            record = await self._create(job)  # durably created before the request is answered
        except TaskStoreFull as exc:
            return self._refused(call, exc)
        spawn(lambda: self._run(job, call, call_next))
        return self._created_result(call, record)

    async def _deferred(self, call: Call, call_next: CallNext) -> Any:
        """Run the call until the tool calls start_task() (then answer with the new task) or ends
        (then answer with how it ended: a result, an InputRequiredResult, an error)."""
        job = self._new_job(deferred=True)
        spawn(lambda: self._run(job, call, call_next))
        try:
            async with anyio.create_task_group() as tg:

                async def ended() -> None:
                    await job.ended.wait()
                    tg.cancel_scope.cancel()

                tg.start_soon(ended)
                await job.start_requested.wait()
                tg.cancel_scope.cancel()
        except BaseException:
            job.cancel()  # the request was cancelled: so is the call
            if not job.start_requested.is_set():
                self.jobs.pop(job.task_id, None)
            raise
        if not job.start_requested.is_set():
            self.jobs.pop(job.task_id, None)
            if job.early is None:
                raise InternalError(
                    f"Internal error: the call of tool {call.params.get('name')!r} was cancelled"
                )
            ok, value = job.early
            if ok:
                return value
            raise value
        try:
            record = await self._create(job)
        except TaskStoreFull as exc:
            return self._refused(call, exc)
        job.created.set()
        return self._created_result(call, record)

    # -- the run ----------------------------------------------------------------------------------
    async def _run(self, job: Job, call: Call, call_next: CallNext) -> None:
        """Serve the call in the background and store how it ended (see the module docs)."""
        channel = TaskInputChannel(job)
        token = current_job.set(job)
        seam_token = current_input_channel.set(channel) if not job.deferred else None
        outcome: dict[str, Any] | None = None
        try:
            with job.scope:
                params = call.params
                while True:
                    call.params = params
                    result = await call_next(call)
                    if not job.started:  # (deferred) ended before becoming a task
                        job.early = (True, result)
                        return
                    if type(result) is dict and result.get("resultType") == "input_required":
                        answers = await job.ask(result.get("inputRequests") or {})
                        params = {**params, "inputResponses": answers}
                        params.pop("requestState", None)
                        if result.get("requestState") is not None:
                            params["requestState"] = result["requestState"]
                        continue  # replayed with the answers, as a client retries
                    outcome = {"status": "completed", "result": _inner(result)}
                    break
        except Exception as exc:
            if not job.started:
                job.early = (False, exc)
                return
            error = to_wire(exc, call.revision, wire.TOOLS_CALL)
            assert isinstance(error, JsonRpcError)
            body: dict[str, Any] = {"code": error.code, "message": error.message}
            if error.data is not None:
                body["data"] = error.data
            outcome = {"status": "failed", "error": body, "statusMessage": error.message}
        finally:
            current_job.reset(token)
            if seam_token is not None:
                current_input_channel.reset(seam_token)
            if job.started:
                self.jobs.pop(job.task_id, None)
            job.ended.set()
        if outcome is not None:  # (None: cancelled, and the status says so already)
            outcome["lastUpdatedAt"] = now_iso()
            await self.store.update(job.task_id, outcome)
            await self._changed(job.task_id)

    # -- status notifications ---------------------------------------------------------------------
    def listen_filters(self, requested: dict[str, Any]) -> dict[str, Any]:
        """``notifications.taskIds`` of a ``subscriptions/listen`` that declared the extension: every
        id given is honoured (the tasks of this process's store are pushed as they change)."""
        ids = requested.get("taskIds")
        if ids is None:
            return {}
        if type(ids) is not list or not all(type(i) is str for i in ids):
            raise InvalidParams("Invalid params: notifications.taskIds must be a list of task ids")
        return {"taskIds": list(dict.fromkeys(ids))}

    async def _changed(self, task_id: str) -> None:
        """Push the task, as ``tasks/get`` shows it now, to the listeners that asked for it."""
        if self.server is None or not len(self.server.subscriptions):
            return
        watching = [
            lis for lis in self.server.subscriptions.listeners() if task_id in lis.granted.get("taskIds", ())
        ]
        if not watching:
            return
        record = await self.store.get(task_id)
        if record is None:
            return
        view = {k: v for k, v in record.items() if k not in PRIVATE_FIELDS}
        for listener in watching:
            listener.post_params(NOTIFICATION, task_id, view)

    # -- the methods ------------------------------------------------------------------------------
    async def _find(self, params: dict[str, Any], method: str) -> dict[str, Any]:
        task_id = params.get("taskId")
        if type(task_id) is not str:
            raise InvalidParams(f"Invalid params: {method} needs a string 'taskId'")
        record = await self.store.get(task_id)
        if record is None:
            raise InvalidParams(f"Invalid params: unknown task {task_id!r}", {"taskId": task_id})
        return record

    async def _get(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        record = await self._find(params, "tasks/get")
        return {k: v for k, v in record.items() if k not in PRIVATE_FIELDS}

    async def _update(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        record = await self._find(params, "tasks/update")
        responses = params.get("inputResponses")
        if type(responses) is not dict:
            raise InvalidParams("Invalid params: tasks/update needs an object 'inputResponses'")
        pending = record.get("inputRequests") or {}
        answered = {k: v for k, v in responses.items() if k in pending}  # others are ignored
        if answered and record.get("status") == "input_required":
            remaining = {k: v for k, v in pending.items() if k not in answered}
            changes: dict[str, Any] = {
                "inputResponses": {**(record.get("inputResponses") or {}), **answered},
                "inputRequests": remaining or None,
                "lastUpdatedAt": now_iso(),
            }
            if not remaining:
                changes["status"] = "working"
            await self.store.update(record["taskId"], changes)
            await self._changed(record["taskId"])
            job = self.jobs.get(record["taskId"])
            if job is not None:
                job.poke()
        return {}

    async def _cancel(self, ctx: Context, params: dict[str, Any]) -> dict[str, Any]:
        record = await self._find(params, "tasks/cancel")
        if not is_terminal(record):
            changes = {"status": "cancelled", "inputRequests": None, "lastUpdatedAt": now_iso()}
            await self.store.update(record["taskId"], changes)
            await self._changed(record["taskId"])
            job = self.jobs.pop(record["taskId"], None)
            if job is not None:
                job.cancel()
        return {}


def _asks_task_notifications(call: Call) -> bool:
    if call.method != wire.LISTEN or call.era != "stateless":
        return False
    wanted = call.params.get("notifications")
    return type(wanted) is dict and "taskIds" in wanted


def _inner(result: Any) -> Any:
    """A tool's result as ``tasks/get`` inlines it: without the envelope fields of a response."""
    if type(result) is not dict:
        return result
    out = {k: v for k, v in result.items() if k != "resultType"}
    meta = out.get("_meta")
    if type(meta) is dict:
        meta = {k: v for k, v in meta.items() if k != wire.SERVER_INFO}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    return out
