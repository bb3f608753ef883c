"""MethodTable: a plain JSON-RPC 2.0 server, driven over the wire through a real Endpoint."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.jsonrpc import InvalidParams, MethodTable

from .wire import serve, stop

pytestmark = pytest.mark.anyio


def _table(calls: list[Any]) -> MethodTable:
    table = MethodTable()

    @table.method()
    def subtract(minuend: int, subtrahend: int) -> int:
        calls.append(("subtract", minuend, subtrahend))
        return minuend - subtrahend

    @table.method("greet")
    async def greet_async(name: str, greeting: str = "hello") -> str:
        await anyio.lowlevel.checkpoint()
        calls.append(("greet", name))
        return f"{greeting} {name}"

    @table.method()
    def only_positional(a: int, /) -> int:
        calls.append(("only_positional", a))
        return a

    @table.method()
    def strict(value: int) -> int:
        if value < 0:
            raise InvalidParams("Invalid params: value must not be negative", {"value": value})
        return value

    @table.method()
    def crash() -> None:
        raise ZeroDivisionError("division by zero in crash()")

    return table


async def test_params_by_position_become_positional_arguments() -> None:
    calls: list[Any] = []
    async with serve(_table(calls)) as (_, wire):
        assert (await wire.call(1, "subtract", [42, 23]))["result"] == 19
        assert (await wire.call(2, "subtract", [23, 42]))["result"] == -19


async def test_params_by_name_become_keyword_arguments_in_any_order() -> None:
    calls: list[Any] = []
    async with serve(_table(calls)) as (_, wire):
        assert (await wire.call(3, "subtract", {"subtrahend": 23, "minuend": 42}))["result"] == 19
        assert (await wire.call(4, "subtract", {"minuend": 42, "subtrahend": 23}))["result"] == 19


async def test_async_methods_and_defaults_work_by_name_and_by_position() -> None:
    calls: list[Any] = []
    async with serve(_table(calls)) as (_, wire):
        assert (await wire.call(1, "greet", {"name": "Ada"}))["result"] == "hello Ada"
        assert (await wire.call(2, "greet", ["Ada", "hi"]))["result"] == "hi Ada"


async def test_a_method_without_params_member_is_called_with_no_arguments() -> None:
    table = MethodTable()
    table.add("nothing", lambda: "called")
    async with serve(table) as (_, wire):
        assert await wire.call(1, "nothing") == {"jsonrpc": "2.0", "id": 1, "result": "called"}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("subtract", [1]),
        ("subtract", [1, 2, 3]),
        ("subtract", {"minuend": 1}),
        ("subtract", {"minuend": 1, "subtrahend": 2, "extra": 3}),
        ("subtract", {"a": 1, "b": 2}),
        ("subtract", None),
        ("only_positional", {"a": 1}),
        ("greet", []),
    ],
    ids=[
        "too-few",
        "too-many",
        "missing-name",
        "unknown-name",
        "wrong-names",
        "none",
        "positional-only",
        "empty",
    ],
)
async def test_params_that_do_not_fit_the_signature_are_refused_before_the_function_runs(
    method: str, params: Any
) -> None:
    calls: list[Any] = []
    async with serve(_table(calls)) as (_, wire):
        answer = await wire.call(1, method, params)
    assert answer["id"] == 1 and answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith("Invalid params")
    assert calls == []


async def test_a_method_may_raise_invalid_params_itself_with_data() -> None:
    async with serve(_table([])) as (_, wire):
        answer = await wire.call(1, "strict", [-1])
    assert answer["error"] == {
        "code": -32602,
        "message": "Invalid params: value must not be negative",
        "data": {"value": -1},
    }


async def test_an_unknown_method_is_method_not_found() -> None:
    async with serve(_table([])) as (_, wire):
        answer = await wire.call("x", "nope")
    assert answer["id"] == "x" and answer["error"]["code"] == -32601
    assert answer["error"]["message"].startswith("Method not found")


async def test_a_failing_method_is_internal_error_without_traceback() -> None:
    async with serve(_table([])) as (_, wire):
        answer = await wire.call(1, "crash", [])
    assert answer["error"] == {"code": -32603, "message": "Internal error"}


async def test_notifications_call_the_function_and_are_never_answered() -> None:
    calls: list[Any] = []
    async with serve(_table(calls)) as (endpoint, wire):
        await wire.send({"jsonrpc": "2.0", "method": "subtract", "params": [5, 3]})
        await wire.send({"jsonrpc": "2.0", "method": "nope"})
        await wire.send({"jsonrpc": "2.0", "method": "subtract", "params": [1]})  # bad params: ignored
        await wire.send({"jsonrpc": "2.0", "method": "crash"})  # fails: logged, not answered
        assert (await wire.call(9, "greet", ["x"]))["id"] == 9
        frames = await stop(endpoint, wire)
    assert frames == []
    assert calls[0] == ("subtract", 5, 3)


async def test_a_notification_with_bad_params_is_logged_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, "jsonrpc_mcp.jsonrpc")
    async with serve(_table([])) as (_, wire):
        await wire.send({"jsonrpc": "2.0", "method": "subtract", "params": [1]})
        await wire.call(1, "greet", ["x"])
    assert "notification 'subtract' ignored" in caplog.text


async def test_a_batch_of_calls_is_answered_in_one_array() -> None:
    async with serve(_table([])) as (_, wire):
        await wire.send(
            [
                {"jsonrpc": "2.0", "id": 1, "method": "subtract", "params": [3, 1]},
                {"jsonrpc": "2.0", "method": "subtract", "params": [3, 1]},
                {"jsonrpc": "2.0", "id": 2, "method": "subtract", "params": [1]},
                {"jsonrpc": "2.0", "id": 3, "method": "nope"},
            ]
        )
        answer = await wire.receive()
    by_id = {a["id"]: a for a in answer}
    assert set(by_id) == {1, 2, 3}
    assert by_id[1]["result"] == 2
    assert by_id[2]["error"]["code"] == -32602
    assert by_id[3]["error"]["code"] == -32601


def test_registering_a_name_twice_is_refused() -> None:
    table = MethodTable()
    table.add("m", lambda: 1)
    with pytest.raises(ValueError, match="already registered"):
        table.add("m", lambda: 2)
