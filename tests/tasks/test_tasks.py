"""The Tasks extension (SEP-2663), in memory: the rules, with tools the test controls.

Every wait is bounded; a tool that must stay "working" waits on an event the test sets.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, JsonRpcError, Server, ToolError
from jsonrpc_mcp.client import TaskCancelled, ToolTask
from jsonrpc_mcp.jsonrpc.errors import InternalError
from jsonrpc_mcp.server.tasks import TASKS, InMemoryTaskStore, TasksExtension, start_task
from jsonrpc_mcp.testing import connect
from tests import timeouts

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["asyncio", "trio"])
def anyio_backend(request: pytest.FixtureRequest) -> str:
    """Both backends: a task's run is detached differently on each (see server/tasks/_runner.py)."""
    return str(request.param)


TIMEOUT = timeouts.STEP
MODERN = "2026-07-28"
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
CREATE_FIELDS = {
    "resultType",
    "taskId",
    "status",
    "createdAt",
    "lastUpdatedAt",
    "ttlMs",
    "pollIntervalMs",
    "_meta",
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def make_server(clock: Clock | None = None) -> tuple[Server, anyio.Event, dict[str, anyio.Event]]:
    release = anyio.Event()
    seen = {"started": anyio.Event(), "cancelled": anyio.Event()}
    store = InMemoryTaskStore(clock=clock) if clock is not None else None
    server = Server(
        "tasks-test", extensions=[TasksExtension(store=store, ttl_ms=60_000, poll_interval_ms=10)]
    )

    @server.tool
    def plain(text: str) -> str:
        return text

    @server.tool(task="optional")
    async def held(ctx: Context) -> str:
        seen["started"].set()
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            seen["cancelled"].set()
            raise
        return "released"

    @server.tool(task="optional")
    async def quick() -> str:
        return "quick"

    @server.tool(task="required")
    async def tool_error() -> str:
        raise ToolError("it broke")

    @server.tool(task="optional")
    async def protocol_error() -> str:
        raise InternalError("Internal error: crashed")

    @server.tool(task="optional")
    async def ask_name(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        return f"hi {answer['content']['name']}"

    @server.tool(task="optional")
    async def ask_two(ctx: Context) -> str:
        answers = await ctx.ask({"a": ctx.elicitation("A?", NAME), "b": ctx.elicitation("B?", NAME)})
        return "+".join(answers[k]["content"]["name"] for k in ("a", "b"))

    @server.tool(task="required", defer_task=True)
    async def deferred(ctx: Context) -> str:
        answer = await ctx.elicit("Name?", NAME)
        await start_task()
        return f"later {answer['content']['name']}"

    return server, release, seen


@asynccontextmanager
async def client_of(server: Server, *, declare: bool = True, **options: Any) -> AsyncIterator[Client]:
    extensions: dict[str, dict[str, Any]] | None = {TASKS: {}} if declare else None
    options.setdefault("mode", MODERN)
    options.setdefault("capabilities", {"elicitation": {}})
    async with connect(server, extensions=extensions, **options) as client:
        yield client


async def until(client: Client, task_id: str, status: str) -> dict[str, Any]:
    with anyio.fail_after(TIMEOUT):
        while True:
            task: dict[str, Any] = await client.request("tasks/get", {"taskId": task_id})
            if task["status"] == status:
                return task
            await anyio.sleep(0.01)


async def test_the_extension_is_declared_in_discover_only() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        assert client.server_extensions == {TASKS: {}}
        assert "tasks" not in client.server_capabilities
    async with client_of(server, mode="legacy") as client:
        assert "extensions" not in client.server_capabilities


async def test_a_task_is_created_readable_at_once_then_completes_with_the_result() -> None:
    server, release, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "held"})
        assert created["resultType"] == "task" and set(created) <= CREATE_FIELDS
        assert (
            created["status"] == "working" and created["ttlMs"] == 60_000 and created["pollIntervalMs"] == 10
        )
        assert created["createdAt"].endswith("Z")
        task = await client.request("tasks/get", {"taskId": created["taskId"]})
        assert task["resultType"] == "complete" and task["status"] == "working"
        assert "result" not in task and "error" not in task and "requestState" not in task
        release.set()
        done = await until(client, created["taskId"], "completed")
        assert done["result"]["content"] == [{"type": "text", "text": "released"}]
        assert "resultType" not in done["result"] and "io.modelcontextprotocol/related-task" not in str(done)


async def test_a_tool_error_completes_with_is_error_and_a_protocol_error_fails() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "tool_error"})
        done = await until(client, created["taskId"], "completed")
        assert done["result"]["isError"] is True
        created = await client.request("tools/call", {"name": "protocol_error"})
        failed = await until(client, created["taskId"], "failed")
        assert failed["error"]["code"] == -32603 and "crashed" in failed["error"]["message"]
        assert "crashed" in failed["statusMessage"]
        assert "result" not in failed


async def test_cancel_is_an_empty_ack_cancels_the_run_and_is_idempotent() -> None:
    server, release, seen = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "held"})
        with anyio.fail_after(TIMEOUT):
            await seen["started"].wait()
        ack = await client.request("tasks/cancel", {"taskId": created["taskId"]})
        assert set(ack) == {"resultType", "_meta"} and ack["resultType"] == "complete"
        assert (await client.request("tasks/get", {"taskId": created["taskId"]}))["status"] == "cancelled"
        with anyio.fail_after(TIMEOUT):
            await seen["cancelled"].wait()
        release.set()
        assert (await client.request("tasks/cancel", {"taskId": created["taskId"]}))[
            "resultType"
        ] == "complete"
        assert (await client.request("tasks/get", {"taskId": created["taskId"]}))["status"] == "cancelled"


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tasks/get", {"taskId": "nope"}),
        ("tasks/update", {"taskId": "nope", "inputResponses": {}}),
        ("tasks/cancel", {"taskId": "nope"}),
        ("tasks/get", {"taskId": 7}),
        ("tasks/get", {}),
    ],
)
async def test_an_unknown_or_missing_task_id_is_32602(method: str, params: dict[str, Any]) -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request(method, params)
        assert caught.value.code == -32602


async def test_a_non_declaring_client_gets_plain_calls_and_32021() -> None:
    server, _, _ = make_server()
    async with client_of(server, declare=False) as client:
        result = await client.request("tools/call", {"name": "quick"})
        assert result["resultType"] == "complete" and "taskId" not in result
        assert result["content"] == [{"type": "text", "text": "quick"}]
        with pytest.raises(JsonRpcError) as caught:
            await client.request("tools/call", {"name": "tool_error"})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            with pytest.raises(JsonRpcError) as caught:
                await client.request(method, {"taskId": "x", "inputResponses": {}})
            assert caught.value.code == -32021


async def test_an_ordinary_tool_and_a_legacy_task_param_never_make_a_task() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        result = await client.request(
            "tools/call", {"name": "plain", "arguments": {"text": "x"}, "task": {"ttl": 5}}
        )
        assert result["resultType"] == "complete" and "taskId" not in result


async def test_the_handshake_era_has_no_tasks() -> None:
    server, _, _ = make_server()
    async with client_of(server, mode="legacy") as client:
        result = await client.call_tool("quick")
        assert result["content"] == [{"type": "text", "text": "quick"}]
        with pytest.raises(JsonRpcError) as caught:
            await client.request("tasks/get", {"taskId": "x"})
        assert caught.value.code == -32601


async def test_input_is_asked_through_tasks_get_and_answered_by_tasks_update() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "ask_name"})
        waiting = await until(client, created["taskId"], "input_required")
        (key, request), *rest = waiting["inputRequests"].items()
        assert rest == [] and request["method"] == "elicitation/create"
        answer = {"action": "accept", "content": {"name": "Ada"}}
        ack = await client.request(
            "tasks/update", {"taskId": created["taskId"], "inputResponses": {key: answer}}
        )
        assert ack["resultType"] == "complete" and "status" not in ack
        done = await until(client, created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "hi Ada"


async def test_partial_answers_leave_the_rest_pending_and_unknown_keys_are_ignored() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "ask_two"})
        task_id = created["taskId"]
        waiting = await until(client, task_id, "input_required")
        assert set(waiting["inputRequests"]) == {"a", "b"}
        await client.request("tasks/update", {"taskId": task_id, "inputResponses": {"zzz": {}}})
        one = {"action": "accept", "content": {"name": "x"}}
        await client.request("tasks/update", {"taskId": task_id, "inputResponses": {"a": one}})
        still = await client.request("tasks/get", {"taskId": task_id})
        assert still["status"] == "input_required" and set(still["inputRequests"]) == {"b"}
        two = {"action": "accept", "content": {"name": "y"}}
        await client.request("tasks/update", {"taskId": task_id, "inputResponses": {"b": two}})
        done = await until(client, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "x+y"


async def test_a_deferred_tool_asks_the_mrtr_way_then_becomes_a_task() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        first = await client.request("tools/call", {"name": "deferred"})
        assert first["resultType"] == "input_required" and "taskId" not in first
        key = next(iter(first["inputRequests"]))
        retry = {
            "name": "deferred",
            "inputResponses": {key: {"action": "accept", "content": {"name": "Bo"}}},
            "requestState": first["requestState"],
        }
        created = await client.request("tools/call", retry)
        assert created["resultType"] == "task" and "requestState" not in created
        done = await until(client, created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "later Bo"


async def test_a_task_expires_after_its_ttl() -> None:
    clock = Clock()
    server, _, _ = make_server(clock)
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "quick"})
        await until(client, created["taskId"], "completed")
        clock.now += 59.9
        assert (await client.request("tasks/get", {"taskId": created["taskId"]}))["status"] == "completed"
        clock.now += 0.2
        with pytest.raises(JsonRpcError) as caught:
            await client.request("tasks/get", {"taskId": created["taskId"]})
        assert caught.value.code == -32602


async def test_the_client_drives_a_task_to_its_result_answering_input() -> None:
    server, _, _ = make_server()

    async def elicit(params: Any) -> dict[str, Any]:
        return {"action": "accept", "content": {"name": "Cy"}}

    async with client_of(server, declare=False, request_handlers={"elicitation/create": elicit}) as client:
        with anyio.fail_after(TIMEOUT):
            assert (await client.call_tool("ask_name", task=True))["content"][0]["text"] == "hi Cy"
            assert (await client.call_tool("ask_two", task=True))["content"][0]["text"] == "Cy+Cy"
            assert (await client.call_tool("deferred", task=True))["content"][0]["text"] == "later Cy"
            handle = await client.start_tool_task("held")
            assert isinstance(handle, ToolTask) and handle.task_id is not None
            assert (await handle.get())["status"] == "working"
            await handle.cancel()
            with pytest.raises(TaskCancelled):
                await handle.result()
            with pytest.raises(JsonRpcError) as caught:
                await client.call_tool("protocol_error", task=True)
            assert caught.value.code == -32603
            assert (await client.call_tool("plain", {"text": "p"}, task=True))["content"][0]["text"] == "p"


async def test_a_task_option_without_the_extension_adds_it_with_defaults() -> None:
    server = Server("auto")

    @server.tool(task="optional")
    async def job() -> str:
        return "done"

    assert isinstance(server.extensions[TASKS], TasksExtension)
    async with client_of(server, declare=False) as client:
        assert (await client.call_tool("job", task=True))["content"][0]["text"] == "done"


def test_bad_task_options_are_refused() -> None:
    server = Server("bad")
    with pytest.raises(ValueError):
        server.add_tool("t", lambda: "x", task="sometimes")
    with pytest.raises(ValueError):
        TasksExtension(ttl_ms=0)
    with pytest.raises(ValueError):
        TasksExtension(poll_interval_ms=1.5)  # type: ignore[arg-type]


async def test_listening_for_task_notifications_needs_the_extension() -> None:
    server, _, _ = make_server()
    async with client_of(server, declare=False) as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("subscriptions/listen", {"notifications": {"taskIds": ["x"]}})
        assert caught.value.code == -32021
        assert caught.value.data == {"requiredCapabilities": {"extensions": {TASKS: {}}}}


@pytest.mark.parametrize("responses", [None, [], "x"])
async def test_tasks_update_needs_an_object_of_responses(responses: Any) -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "ask_name"})
        with pytest.raises(JsonRpcError) as caught:
            await client.request("tasks/update", {"taskId": created["taskId"], "inputResponses": responses})
        assert caught.value.code == -32602
        await client.request("tasks/cancel", {"taskId": created["taskId"]})


def test_the_in_memory_store_is_a_task_store() -> None:
    from jsonrpc_mcp.server.tasks import TaskStore

    assert isinstance(InMemoryTaskStore(), TaskStore)


def test_the_tasks_package_exports_what_it_lists() -> None:
    import jsonrpc_mcp.server.tasks as tasks

    assert [name for name in tasks.__all__ if not hasattr(tasks, name)] == []


async def test_a_handshake_session_answers_a_task_call_at_once() -> None:
    server, _, _ = make_server()
    async with client_of(server, mode="legacy") as client:
        handle = await client.start_tool_task("quick")
        assert handle.task_id is None and handle.immediate is not None
        assert (await handle.result())["content"] == [{"type": "text", "text": "quick"}]
        with pytest.raises(RuntimeError):
            await handle.get()


def test_client_extensions_merge_with_declared_capabilities() -> None:
    from jsonrpc_mcp.transports.memory import memory_pair

    stream, _ = memory_pair()
    declared = {"extensions": {"a.b/c": {"x": 1}}, "roots": {}}
    client = Client(stream, capabilities=declared, extensions={TASKS: {}})
    assert client.capabilities == {"extensions": {"a.b/c": {"x": 1}, TASKS: {}}, "roots": {}}
    assert client.extensions == {"a.b/c": {"x": 1}, TASKS: {}}


async def test_a_listener_for_task_ids_gets_each_change_as_notifications_tasks() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        created = await client.request("tools/call", {"name": "ask_name"})
        task_id = created["taskId"]
        with anyio.fail_after(TIMEOUT):
            async with client.listen({"taskIds": [task_id], "toolsListChanged": True}) as subscription:
                assert subscription.acknowledged == {"taskIds": [task_id], "toolsListChanged": True}
                waiting = await until(client, task_id, "input_required")
                key = next(iter(waiting["inputRequests"]))
                answer = {"action": "accept", "content": {"name": "Di"}}
                await client.request("tasks/update", {"taskId": task_id, "inputResponses": {key: answer}})
                seen: list[dict[str, Any]] = []
                while not seen or seen[-1]["status"] != "completed":
                    method, params = await subscription.receive()
                    assert method == "notifications/tasks" and params["taskId"] == task_id
                    seen.append(params)
        assert seen[-1]["result"]["content"][0]["text"] == "hi Di"
        assert "expiresAt" not in seen[-1] and "inputResponses" not in seen[-1]
        assert seen[-1]["_meta"]["io.modelcontextprotocol/subscriptionId"] is not None


async def test_task_ids_must_be_a_list_of_strings() -> None:
    server, _, _ = make_server()
    async with client_of(server) as client:
        with pytest.raises(JsonRpcError) as caught:
            await client.request("subscriptions/listen", {"notifications": {"taskIds": "x"}})
        assert caught.value.code == -32602


async def test_a_full_store_refuses_a_new_task_as_a_tool_error_and_makes_room_from_finished_ones() -> None:
    server = Server("full", extensions=[TasksExtension(store=InMemoryTaskStore(max_tasks=2), ttl_ms=60_000)])
    release = anyio.Event()

    @server.tool(task="required")
    async def held() -> str:
        await release.wait()
        return "done"

    async with client_of(server) as client:
        first = await client.request("tools/call", {"name": "held"})
        second = await client.request("tools/call", {"name": "held"})
        refused = await client.request("tools/call", {"name": "held"})  # both still running
        assert refused["isError"] is True
        assert "cannot start another task" in refused["content"][0]["text"]
        release.set()
        await until(client, first["taskId"], "completed")
        await until(client, second["taskId"], "completed")
        third = await client.request("tools/call", {"name": "held"})  # a finished one made room
        assert third["resultType"] == "task"
        gone = []
        for task in (first, second):  # the one that finished first (their order is the scheduler's)
            try:
                await client.request("tasks/get", {"taskId": task["taskId"]})
            except JsonRpcError:
                gone.append(task["taskId"])
        assert len(gone) == 1


async def test_expired_tasks_leave_the_store_as_new_ones_come() -> None:
    clock = Clock()
    store = InMemoryTaskStore(clock=clock)
    for n in range(1000):
        await store.create({"taskId": f"t{n}", "status": "completed", "ttlMs": 1000})
    clock.now += 2
    await store.create({"taskId": "new", "status": "working", "ttlMs": 1000})
    assert len(store) == 1 and await store.get("t0") is None


def test_max_tasks_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_tasks"):
        InMemoryTaskStore(max_tasks=0)
