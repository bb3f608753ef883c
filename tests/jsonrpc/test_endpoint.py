"""The endpoint: per-request tasks, cancellation, at-most-once answers, outgoing requests.

A real :class:`Endpoint` runs over the in-memory transport; the test is the raw peer on the other
end (``wire``), so every assertion is about frames on the wire.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import orjson
import pytest

from jsonrpc_mcp.jsonrpc import (
    CancelSpec,
    ConnectionClosed,
    Endpoint,
    InternalError,
    JsonRpcError,
    MethodTable,
    Notification,
    Request,
    RequestContext,
    RequestTimeout,
)
from jsonrpc_mcp.transports.base import FrameTooLarge

from .wire import TIMEOUT, Wire, serve, stop

pytestmark = pytest.mark.anyio

CANCEL = CancelSpec("notifications/cancelled", "requestId")
Handler = Callable[[Request, RequestContext], Awaitable[Any]]


class Handlers:
    """A dispatcher from a dict of ``method -> async fn(request, context)``; records notifications."""

    accepts_batches = True
    omits_unknown_ids = False
    ordered_methods: frozenset[str] = frozenset()

    def __init__(self, **handlers: Handler) -> None:
        self.handlers = handlers
        self.notifications: list[Notification] = []

    async def handle_request(self, request: Request, context: RequestContext) -> Any:
        return await self.handlers[request.method](request, context)

    async def handle_notification(self, notification: Notification) -> None:
        self.notifications.append(notification)


async def _ping(request: Request, context: RequestContext) -> Any:
    return "pong"


def _cancel(rid: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid}}


def _ids(frames: list[bytes]) -> list[Any]:
    return [orjson.loads(frame).get("id") for frame in frames]


# -- answering ------------------------------------------------------------------------------------------


async def test_a_request_is_answered_with_its_result() -> None:
    async with serve(Handlers(ping=_ping)) as (_, wire):
        assert await wire.call(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": "pong"}


async def test_a_handler_exception_becomes_internal_error_without_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def boom(request: Request, context: RequestContext) -> Any:
        raise RuntimeError("secret detail /etc/passwd")

    async with serve(Handlers(boom=boom)) as (_, wire):
        answer = await wire.call("b", "boom")
    assert answer == {"jsonrpc": "2.0", "id": "b", "error": {"code": -32603, "message": "Internal error"}}
    assert "secret detail" in caplog.text  # the details go to the log, not to the peer


async def test_a_handler_type_error_is_logged_as_a_handler_failure_not_as_a_bad_result(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(request: Request, context: RequestContext) -> Any:
        raise TypeError("bug in the handler")

    async with serve(Handlers(broken=broken)) as (_, wire):
        answer = await wire.call(1, "broken")
    assert answer["error"] == {"code": -32603, "message": "Internal error"}
    assert "unhandled error while serving 'broken'" in caplog.text
    assert "not JSON-serialisable" not in caplog.text


async def test_a_result_that_is_not_json_becomes_internal_error() -> None:
    async def weird(request: Request, context: RequestContext) -> Any:
        return {"when": object()}

    async with serve(Handlers(weird=weird)) as (_, wire):
        answer = await wire.call(1, "weird")
    assert answer["id"] == 1 and answer["error"]["code"] == -32603
    assert "Traceback" not in answer["error"]["message"] and "data" not in answer["error"]


async def test_a_json_rpc_error_raised_by_a_handler_goes_out_as_is() -> None:
    async def refuse(request: Request, context: RequestContext) -> Any:
        raise JsonRpcError("Resource not found", {"uri": "x://y"}, code=-32002)

    async with serve(Handlers(refuse=refuse)) as (_, wire):
        answer = await wire.call(4, "refuse")
    assert answer["error"] == {"code": -32002, "message": "Resource not found", "data": {"uri": "x://y"}}


async def test_an_error_code_zero_from_a_handler_never_reaches_the_wire() -> None:
    async def zero(request: Request, context: RequestContext) -> Any:
        raise JsonRpcError("zero", code=0)  # refused at construction: a developer error

    async with serve(Handlers(zero=zero)) as (_, wire):
        answer = await wire.call(1, "zero")
    assert answer["error"]["code"] == -32603


async def test_an_invalid_message_with_unreadable_id_is_answered_with_null_id() -> None:
    async with serve(Handlers()) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": True, "method": "ping"})
        answer = await wire.receive()
    assert answer["id"] is None and answer["error"]["code"] == -32600


async def test_an_error_without_id_omits_the_member_when_the_dispatcher_says_so() -> None:
    class Omitting(Handlers):
        omits_unknown_ids = True

    async with serve(Omitting()) as (_, wire):
        await wire.send(b"{not json")
        answer = await wire.receive()
    assert "id" not in answer and answer["error"]["code"] == -32700


async def test_a_notification_is_never_answered_even_when_its_handler_fails(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Failing(Handlers):
        async def handle_notification(self, notification: Notification) -> None:
            raise RuntimeError("notification handler broke")

    async with serve(Failing(ping=_ping)) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "method": "anything", "params": {"a": 1}})
        assert await wire.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
        assert await stop(endpoint, wire) == []
    assert "notification handler broke" in caplog.text


async def test_a_frame_too_large_is_answered_with_invalid_request_and_serving_goes_on() -> None:
    class Oversized:
        """A stream whose first frame was discarded by the framing layer."""

        def __init__(self, inner: Any) -> None:
            self.inner = inner
            self.raised = False

        async def receive(self) -> bytes:
            if not self.raised:
                self.raised = True
                raise FrameTooLarge("message exceeds the limit of 10 bytes")
            return bytes(await self.inner.receive())

        async def send(self, message: bytes) -> None:
            await self.inner.send(message)

        async def aclose(self) -> None:
            await self.inner.aclose()

    from jsonrpc_mcp.transports.memory import memory_pair

    ours, theirs = memory_pair()
    endpoint = Endpoint(Oversized(ours), Handlers(ping=_ping))
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.run)
        with anyio.fail_after(TIMEOUT):
            error = orjson.loads(await theirs.receive())
            await theirs.send(b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
            answer = orjson.loads(await theirs.receive())
        await theirs.aclose()
    assert error["id"] is None and error["error"]["code"] == -32600
    assert "limit" in error["error"]["message"]
    assert answer["result"] == "pong"


# -- concurrency ----------------------------------------------------------------------------------------


async def test_each_request_runs_in_its_own_task_so_slow_requests_overlap() -> None:
    started = {"a": anyio.Event(), "b": anyio.Event()}

    async def slow(request: Request, context: RequestContext) -> Any:
        assert isinstance(request.params, dict)
        name = request.params["name"]
        started[name].set()
        other = "b" if name == "a" else "a"
        await started[other].wait()  # finishes only if the other one runs at the same time
        return name

    async with serve(Handlers(slow=slow)) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "slow", "params": {"name": "a"}})
        await wire.send({"jsonrpc": "2.0", "id": 2, "method": "slow", "params": {"name": "b"}})
        answers = [await wire.receive(), await wire.receive()]
    assert sorted((a["id"], a["result"]) for a in answers) == [(1, "a"), (2, "b")]


async def test_a_fast_request_is_answered_while_a_slow_one_is_still_running() -> None:
    release = anyio.Event()

    async def slow(request: Request, context: RequestContext) -> Any:
        await release.wait()
        return "slow"

    async with serve(Handlers(slow=slow, ping=_ping)) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": "slow", "method": "slow"})
        assert (await wire.call("fast", "ping"))["id"] == "fast"
        release.set()
        assert (await wire.receive())["id"] == "slow"


async def test_ordered_methods_finish_before_the_next_message_is_read() -> None:
    state = {"ready": False}

    async def init(request: Request, context: RequestContext) -> Any:
        for _ in range(5):
            await anyio.lowlevel.checkpoint()  # give a concurrent task every chance to run
        state["ready"] = True
        return "ok"

    async def check(request: Request, context: RequestContext) -> Any:
        return state["ready"]

    class Ordered(Handlers):
        ordered_methods = frozenset({"init"})

    async with serve(Ordered(init=init, check=check)) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "init"})
        await wire.send({"jsonrpc": "2.0", "id": 2, "method": "check"})
        answers = {a["id"]: a["result"] for a in [await wire.receive(), await wire.receive()]}
    assert answers == {1: "ok", 2: True}


# -- cancellation -------------------------------------------------------------------------------------------


class Sleeper(Handlers):
    """``sleep`` never finishes on its own; it reports when it started and when it was cancelled."""

    def __init__(self) -> None:
        super().__init__(sleep=self.sleep, ping=_ping)
        self.started = anyio.Event()
        self.cancelled = anyio.Event()

    async def sleep(self, request: Request, context: RequestContext) -> Any:
        self.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.cancelled.set()


async def test_cancellation_cancels_the_handler_and_nothing_is_ever_sent_for_that_id() -> None:
    sleeper = Sleeper()
    async with serve(sleeper, cancel=CANCEL) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 7, "method": "sleep"})
        with anyio.fail_after(TIMEOUT):
            await sleeper.started.wait()
        await wire.send(_cancel(7))
        with anyio.fail_after(TIMEOUT):
            await sleeper.cancelled.wait()
        assert await wire.call(8, "ping") == {"jsonrpc": "2.0", "id": 8, "result": "pong"}
        frames = await stop(endpoint, wire)
    assert frames == []  # not an answer, not an error: nothing at all for id 7


async def test_the_cancellation_notification_is_also_passed_to_the_dispatcher() -> None:
    sleeper = Sleeper()
    async with serve(sleeper, cancel=CANCEL) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "sleep"})
        await wire.send(_cancel(1))
        await wire.call(2, "ping")
    assert [n.method for n in sleeper.notifications] == ["notifications/cancelled"]


async def test_cancellation_arriving_before_the_handler_starts_wins() -> None:
    # In one batch, the cancellation is processed before the request's task gets to run.
    sleeper = Sleeper()
    async with serve(sleeper, cancel=CANCEL) as (endpoint, wire):
        await wire.send([{"jsonrpc": "2.0", "id": 1, "method": "sleep"}, _cancel(1)])
        assert (await wire.call(2, "ping"))["id"] == 2
        frames = await stop(endpoint, wire)
    assert frames == []
    assert sleeper.cancelled.is_set()  # cancelled at its first await


async def test_cancellation_claimed_just_before_the_handler_returns_suppresses_the_answer() -> None:
    finishing = anyio.Event()
    release = anyio.Event()

    async def almost_done(request: Request, context: RequestContext) -> Any:
        with anyio.CancelScope(shield=True):  # the cancellation cannot interrupt the last step
            finishing.set()
            await release.wait()
        return "too late"

    async with serve(Handlers(almost=almost_done, ping=_ping), cancel=CANCEL) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "almost"})
        with anyio.fail_after(TIMEOUT):
            await finishing.wait()
        await wire.send(_cancel(1))
        assert (await wire.call(2, "ping"))["id"] == 2  # the cancellation has been processed
        release.set()  # the handler now returns a result nobody may send
        frames = await stop(endpoint, wire)
    assert frames == []


async def test_cancellation_after_the_answer_was_sent_is_ignored(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "jsonrpc_mcp.jsonrpc")
    async with serve(Handlers(ping=_ping), cancel=CANCEL) as (endpoint, wire):
        assert (await wire.call(1, "ping"))["result"] == "pong"
        await wire.send(_cancel(1))
        assert (await wire.call(2, "ping"))["id"] == 2
        frames = await stop(endpoint, wire)
    assert frames == []
    assert "cancellation for unknown or finished request 1 ignored" in caplog.text


async def test_without_a_cancel_spec_the_cancellation_method_is_just_a_notification() -> None:
    sleeper = Sleeper()
    async with serve(sleeper) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "sleep"})
        with anyio.fail_after(TIMEOUT):
            await sleeper.started.wait()
        await wire.send(_cancel(1))
        await wire.call(2, "ping")
        assert not sleeper.cancelled.is_set()


@pytest.mark.parametrize(
    "bad_id", [True, [1], {"id": 1}, None, 1.0], ids=["bool", "list", "dict", "null", "float"]
)
async def test_a_cancellation_with_an_unusable_request_id_cancels_nothing_and_breaks_nothing(
    bad_id: Any,
) -> None:
    # regression: a list/dict id crashed the reader (unhashable); True aliased request id 1
    sleeper = Sleeper()
    async with serve(sleeper, cancel=CANCEL) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "sleep"})
        with anyio.fail_after(TIMEOUT):
            await sleeper.started.wait()
        await wire.send(_cancel(bad_id))
        assert await wire.call(2, "ping") == {"jsonrpc": "2.0", "id": 2, "result": "pong"}
        assert not sleeper.cancelled.is_set()


async def test_a_handler_outliving_its_cancellation_does_not_answer_a_new_request_with_the_same_id() -> None:
    # regression: the old handler claimed the id by value and took the newer request's answer slot
    first_running = anyio.Event()
    release_first = anyio.Event()
    second_running = anyio.Event()
    release_second = anyio.Event()

    async def stubborn(request: Request, context: RequestContext) -> Any:
        with anyio.CancelScope(shield=True):
            first_running.set()
            await release_first.wait()
        return "first"

    async def second(request: Request, context: RequestContext) -> Any:
        second_running.set()
        await release_second.wait()
        return "second"

    async with serve(Handlers(stubborn=stubborn, second=second), cancel=CANCEL) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "stubborn"})
        with anyio.fail_after(TIMEOUT):
            await first_running.wait()
        await wire.send(_cancel(1))
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "second"})  # id reused after cancelling
        with anyio.fail_after(TIMEOUT):
            await second_running.wait()
        release_first.set()  # the cancelled handler finishes first
        release_second.set()
        assert await wire.receive() == {"jsonrpc": "2.0", "id": 1, "result": "second"}
        frames = await stop(endpoint, wire)
    assert frames == []


async def test_a_duplicate_id_in_flight_is_refused_and_the_first_request_is_answered_once() -> None:
    release = anyio.Event()
    calls: list[Any] = []

    async def slow(request: Request, context: RequestContext) -> Any:
        calls.append(request.params)
        await release.wait()
        return "done"

    async with serve(Handlers(slow=slow)) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": "d", "method": "slow", "params": [1]})
        await wire.send({"jsonrpc": "2.0", "id": "d", "method": "slow", "params": [2]})
        refused = await wire.receive()
        release.set()
        answered = await wire.receive()
        frames = await stop(endpoint, wire)
    assert refused["id"] == "d" and refused["error"]["code"] == -32600
    assert "duplicate" in refused["error"]["message"]
    assert answered == {"jsonrpc": "2.0", "id": "d", "result": "done"}
    assert calls == [[1]] and frames == []


async def test_closing_the_input_cancels_requests_in_flight_and_ends_the_endpoint() -> None:
    sleeper = Sleeper()
    async with serve(sleeper) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 1, "method": "sleep"})
        with anyio.fail_after(TIMEOUT):
            await sleeper.started.wait()
        frames = await stop(endpoint, wire)
        assert sleeper.cancelled.is_set()
        assert endpoint.closed
    assert frames == []


# -- outgoing requests -----------------------------------------------------------------------------------


async def test_outgoing_requests_get_unique_ids_and_responses_are_matched_out_of_order() -> None:
    async with serve(Handlers()) as (endpoint, wire):
        results: dict[int, Any] = {}

        async def ask(n: int) -> None:
            results[n] = await endpoint.request("double", [n])

        async with anyio.create_task_group() as tg:
            for n in range(5):
                tg.start_soon(ask, n)
            requests = [await wire.receive() for _ in range(5)]
            for request in reversed(requests):
                await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": request["params"][0] * 2})
    assert len({r["id"] for r in requests}) == 5
    assert all(r["method"] == "double" for r in requests)
    assert results == {n: n * 2 for n in range(5)}


async def test_an_error_response_raises_json_rpc_error_with_code_message_and_data() -> None:
    async with serve(Handlers()) as (endpoint, wire), anyio.create_task_group() as tg:
        tg.start_soon(lambda: _answer_next(wire, error={"code": -32601, "message": "nope", "data": [1]}))
        with pytest.raises(JsonRpcError) as info:
            await endpoint.request("missing")
    assert (info.value.code, info.value.message, info.value.data) == (-32601, "nope", [1])


async def test_an_error_response_with_code_zero_does_not_break_the_connection() -> None:
    # regression: JsonRpcError.from_dict raised ValueError in the reader and ended the endpoint
    async with serve(Handlers(ping=_ping)) as (endpoint, wire):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: _answer_next(wire, error={"code": 0, "message": "zero"}))
            with pytest.raises(InternalError):
                await endpoint.request("x")
        assert (await wire.call(9, "ping"))["result"] == "pong"


async def _answer_next(wire: Wire, *, result: Any = None, error: Any = None) -> None:
    request = await wire.receive()
    if error is not None:
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "error": error})
    else:
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": result})


async def test_a_response_with_an_unknown_id_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with serve(Handlers(ping=_ping)) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "id": 12345, "result": "stray"})
        await wire.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        assert (await wire.call(1, "ping"))["result"] == "pong"
        frames = await stop(endpoint, wire)
    assert frames == []
    assert "unknown or already answered id 12345" in caplog.text
    assert "unknown or already answered id None" in caplog.text


async def test_a_duplicate_response_is_logged_and_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with serve(Handlers(ping=_ping)) as (endpoint, wire):
        async with anyio.create_task_group() as tg:

            async def answer_twice() -> None:
                request = await wire.receive()
                await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": "first"})
                await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": "second"})

            tg.start_soon(answer_twice)
            assert await endpoint.request("q") == "first"
        assert (await wire.call(1, "ping"))["result"] == "pong"
    assert "unknown or already answered id 1" in caplog.text


async def test_responses_inside_a_batch_are_matched() -> None:
    async with serve(Handlers()) as (endpoint, wire):
        results: list[Any] = []
        async with anyio.create_task_group() as tg:

            async def ask(n: int) -> None:
                results.append(await endpoint.request("n", [n]))

            tg.start_soon(ask, 1)
            tg.start_soon(ask, 2)
            requests = [await wire.receive(), await wire.receive()]
            await wire.send([{"jsonrpc": "2.0", "id": r["id"], "result": r["params"][0]} for r in requests])
    assert sorted(results) == [1, 2]


async def test_an_outgoing_request_times_out_and_the_peer_is_told_to_cancel_it() -> None:
    async with serve(Handlers(), request_timeout=0.2, cancel=CANCEL) as (endpoint, wire):
        with anyio.fail_after(TIMEOUT), pytest.raises(RequestTimeout):
            await endpoint.request("never")
        request = await wire.receive()
        cancel = await wire.receive()
    assert cancel == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request["id"], "reason": "timeout"},
    }


async def test_a_per_call_timeout_overrides_the_endpoint_default() -> None:
    async with serve(Handlers(), request_timeout=None, cancel=CANCEL) as (endpoint, wire):
        with anyio.fail_after(TIMEOUT), pytest.raises(RequestTimeout):
            await endpoint.request("never", timeout=0.1)
        request = await wire.receive()
        assert (await wire.receive())["params"]["requestId"] == request["id"]


async def test_a_response_arriving_after_the_timeout_is_dropped(caplog: pytest.LogCaptureFixture) -> None:
    async with serve(Handlers(ping=_ping), request_timeout=0.1, cancel=CANCEL) as (endpoint, wire):
        with anyio.fail_after(TIMEOUT), pytest.raises(RequestTimeout):
            await endpoint.request("slow")
        request = await wire.receive()
        await wire.receive()  # the cancellation
        await wire.send({"jsonrpc": "2.0", "id": request["id"], "result": "late"})
        assert (await wire.call("p", "ping"))["result"] == "pong"
    assert f"unknown or already answered id {request['id']}" in caplog.text


async def test_a_response_matched_in_the_instant_the_deadline_passes_is_not_lost() -> None:
    # regression: the response was taken from the peer's table, then RequestTimeout was raised anyway
    # (the result was lost and the peer, who did answer, was never told to cancel either)
    class AnswersDuringSend:
        """A peer so fast that its response is read while our send() is still yielding."""

        def __init__(self) -> None:
            self.send_queue, self.receive_queue = anyio.create_memory_object_stream[bytes](math.inf)

        async def receive(self) -> bytes:
            return await self.receive_queue.receive()

        async def send(self, message: bytes) -> None:
            request = orjson.loads(message)
            self.send_queue.send_nowait(orjson.dumps({"jsonrpc": "2.0", "id": request["id"], "result": "ok"}))
            for _ in range(5):
                await anyio.lowlevel.checkpoint()  # the endpoint's reader matches the response now

        async def aclose(self) -> None:
            self.send_queue.close()

    stream = AnswersDuringSend()
    endpoint = Endpoint(stream, Handlers())
    async with anyio.create_task_group() as tg:
        tg.start_soon(endpoint.run)
        await endpoint.wait_started()
        with anyio.fail_after(TIMEOUT):
            assert await endpoint.request("fast", timeout=0) == "ok"  # the deadline has passed, too
        await stream.aclose()


async def test_a_caller_giving_up_tells_the_peer_to_cancel() -> None:
    async with serve(Handlers(), request_timeout=None, cancel=CANCEL) as (endpoint, wire):
        async with anyio.create_task_group() as tg:
            tg.start_soon(endpoint.request, "never")
            request = await wire.receive()
            tg.cancel_scope.cancel()
        cancel = await wire.receive()
    assert cancel["method"] == "notifications/cancelled"
    assert cancel["params"]["requestId"] == request["id"]


async def test_closing_the_connection_fails_pending_requests_with_connection_closed() -> None:
    failures: list[BaseException] = []
    async with serve(Handlers(), request_timeout=None) as (endpoint, wire):

        async def ask() -> None:
            try:
                await endpoint.request("never")
            except ConnectionClosed as exc:
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            tg.start_soon(ask)
            await wire.receive()
            await wire.receive()
            await stop(endpoint, wire)
    assert len(failures) == 2


async def test_a_request_after_the_connection_closed_fails_at_once() -> None:
    async with serve(Handlers()) as (endpoint, wire):
        await stop(endpoint, wire)
        with anyio.fail_after(TIMEOUT), pytest.raises(ConnectionClosed):
            await endpoint.request("late")


async def test_a_handler_can_call_back_the_peer_while_serving_a_request() -> None:
    async def ask_back(request: Request, context: RequestContext) -> Any:
        answer = await context.send_request("roots/list", {})
        await context.notify("progress", {"done": True})
        return {"peer said": answer}

    async with serve(Handlers(ask=ask_back)) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "id": "outer", "method": "ask"})
        inner = await wire.receive()
        assert inner["method"] == "roots/list" and "id" in inner
        await wire.send({"jsonrpc": "2.0", "id": inner["id"], "result": ["r"]})
        assert await wire.receive() == {"jsonrpc": "2.0", "method": "progress", "params": {"done": True}}
        assert await wire.receive() == {"jsonrpc": "2.0", "id": "outer", "result": {"peer said": ["r"]}}


# -- batches ----------------------------------------------------------------------------------------------


async def test_a_batch_is_answered_with_one_array() -> None:
    table = MethodTable()
    table.add("add", lambda a, b: a + b)
    async with serve(table) as (_, wire):
        await wire.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "add", "params": [1, 2]},
                {"jsonrpc": "2.0", "id": 2, "method": "add", "params": [3, 4]},
            ]
        )
        answer = await wire.receive()
    assert sorted(answer, key=lambda a: a["id"]) == [
        {"jsonrpc": "2.0", "id": 1, "result": 3},
        {"jsonrpc": "2.0", "id": 2, "result": 7},
    ]


async def test_batch_requests_run_concurrently() -> None:
    started = {"a": anyio.Event(), "b": anyio.Event()}

    async def meet(request: Request, context: RequestContext) -> Any:
        assert isinstance(request.params, list)
        name = request.params[0]
        started[name].set()
        await started["b" if name == "a" else "a"].wait()
        return name

    async with serve(Handlers(meet=meet)) as (_, wire):
        await wire.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "meet", "params": ["a"]},
                {"jsonrpc": "2.0", "id": 2, "method": "meet", "params": ["b"]},
            ]
        )
        answer = await wire.receive()
    assert sorted(a["result"] for a in answer) == ["a", "b"]


async def test_a_duplicate_id_inside_a_batch_is_refused_once() -> None:
    table = MethodTable()
    table.add("one", lambda: 1)
    async with serve(table) as (_, wire):
        await wire.send(
            [
                {"jsonrpc": "2.0", "id": 5, "method": "one"},
                {"jsonrpc": "2.0", "id": 5, "method": "one"},
            ]
        )
        answer = await wire.receive()
    assert sorted(("error" in a, a["id"]) for a in answer) == [(False, 5), (True, 5)]


async def test_a_dispatcher_that_refuses_batches_answers_one_invalid_request() -> None:
    class NoBatches(Handlers):
        accepts_batches = False

    async with serve(NoBatches(ping=_ping)) as (endpoint, wire):
        await wire.send([{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
        answer = await wire.receive()
        frames = await stop(endpoint, wire)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert frames == []
