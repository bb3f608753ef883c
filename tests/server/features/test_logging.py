"""Logging: logging/setLevel, notifications/message from ctx.log and ctx.logger, filtering, ordering."""

from __future__ import annotations

import asyncio
import itertools
import logging
import threading
from typing import Any

import anyio
import pytest

from jsonrpc_mcp import Client, Context, Server
from jsonrpc_mcp.jsonrpc import JsonRpcError
from jsonrpc_mcp.testing import connect

from .feature_server import LEVELS, build_server
from .support import SERVE, TIMEOUT, VERSIONS, Inbox, check_schema, frames

pytestmark = pytest.mark.anyio


def _levels(inbox: Inbox) -> list[str]:
    return [p["level"] for p in inbox.of("notifications/message")]


async def test_logging_capability_is_advertised_when_enabled() -> None:
    async with connect(build_server()) as client:
        assert client.server_capabilities["logging"] == {}


async def test_logging_capability_is_auto_on_when_a_handler_takes_a_context() -> None:
    server = Server("auto")

    @server.tool()
    async def uses_context(ctx: Context) -> str:
        return "x"

    async with connect(server) as client:
        assert "logging" in client.server_capabilities


async def test_logging_capability_is_off_when_no_handler_takes_a_context() -> None:
    server = Server("quiet")
    server.add_tool("plain", lambda: "x")
    async with connect(server) as client:
        assert "logging" not in client.server_capabilities
        with pytest.raises(JsonRpcError) as raised:
            await client.set_logging_level("info")
    assert raised.value.code == -32601


async def test_logging_disabled_explicitly_sends_nothing() -> None:
    server = Server("off", logging_enabled=False)

    @server.tool()
    async def talk(ctx: Context) -> str:
        await ctx.log("emergency", "unheard")
        ctx.logger.critical("unheard too")
        return "done"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        assert "logging" not in client.server_capabilities
        await client.call_tool("talk")
        await client.ping()
    assert inbox.of("notifications/message") == []


async def test_before_any_set_level_every_level_is_sent() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.call_tool("log_every_level")
    assert _levels(inbox) == LEVELS


@pytest.mark.parametrize("threshold", ["debug", "notice", "error", "emergency"])
async def test_set_level_filters_out_less_severe_messages(threshold: str) -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.set_logging_level(threshold)
        await client.call_tool("log_every_level")
    assert _levels(inbox) == LEVELS[LEVELS.index(threshold) :]


async def test_the_server_default_level_applies_until_set_level() -> None:
    server = build_server()
    server.default_log_level = "warning"
    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.call_tool("log_every_level")
        assert _levels(inbox) == LEVELS[3:]
        await client.set_logging_level("debug")
        await client.call_tool("log_every_level")
    assert _levels(inbox)[5:] == LEVELS


@pytest.mark.parametrize("level", ["banana", "DEBUG", "warn", "", None, 3])
async def test_set_level_with_an_unknown_level_is_invalid_params(level: Any) -> None:
    async with connect(build_server()) as client:
        with pytest.raises(JsonRpcError) as raised:
            await client.request("logging/setLevel", {"level": level})
    assert raised.value.code == -32602
    assert "unknown logging level" in raised.value.message


async def test_the_level_is_per_session() -> None:
    server = build_server()
    quiet, loud = Inbox(), Inbox()
    async with (
        connect(server, on_notification=quiet) as first,
        connect(server, on_notification=loud) as second,
    ):
        await first.set_logging_level("emergency")
        await first.call_tool("log_every_level")
        await second.call_tool("log_every_level")
    assert _levels(quiet) == ["emergency"]
    assert _levels(loud) == LEVELS


async def test_ctx_log_sends_level_logger_and_data() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.call_tool("log_every_level")
    assert inbox.of("notifications/message")[0] == {
        "level": "debug",
        "logger": "levels",
        "data": {"level": "debug"},
    }


async def test_ctx_log_with_an_unknown_level_is_a_developer_error() -> None:
    server = Server("t", mask_errors=False)

    @server.tool()
    async def bad(ctx: Context) -> str:
        await ctx.log("verbose", "x")
        return "unreachable"

    async with connect(server) as client:
        result = await client.call_tool("bad")
    assert result["isError"] is True
    assert "unknown log level 'verbose'" in result["content"][0]["text"]


async def test_ctx_logger_in_a_sync_tool_sends_records_in_order() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.call_tool("log_from_thread")
    assert inbox.of("notifications/message") == [
        {"level": "info", "logger": "features", "data": "first"},
        {"level": "warning", "logger": "features.db", "data": "second 2"},
        {"level": "error", "logger": "features", "data": {"third": 3}},
    ]


async def test_ctx_logger_on_the_event_loop_sends_records_in_order() -> None:
    inbox = Inbox()
    async with connect(build_server(), on_notification=inbox) as client:
        await client.call_tool("log_from_loop")
    assert [p["data"] for p in inbox.of("notifications/message")] == [f"record {n}" for n in range(5)]


async def test_ctx_logger_in_a_thread_the_handler_started_is_sent_before_the_result() -> None:
    server = Server("threads", logging_enabled=True)

    @server.tool()
    def fan_out(ctx: Context) -> str:
        workers = [threading.Thread(target=ctx.logger.info, args=("from worker %d", n)) for n in range(3)]
        for worker in workers:
            worker.start()
            worker.join()
        return "joined"

    async with connect(server, recorder=True) as client:
        await client.call_tool("fan_out")
        _, received = frames(client)
    methods = [f.get("method", "answer") for f in received[1:]]
    assert methods == ["notifications/message"] * 3 + ["answer"]
    assert [f["params"]["data"] for f in received[1:4]] == [f"from worker {n}" for n in range(3)]


async def test_ctx_logger_maps_python_levels_to_rfc5424() -> None:
    server = Server("t")

    @server.tool()
    def levels(ctx: Context) -> str:
        for number in (
            5,
            logging.DEBUG,
            logging.INFO,
            25,
            logging.WARNING,
            logging.ERROR,
            logging.CRITICAL,
            55,
            60,
        ):
            ctx.logger.log(number, "x")
        return "ok"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.call_tool("levels")
    assert _levels(inbox) == ["debug", *LEVELS]


async def test_ctx_logger_records_reach_no_other_handler(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    async with connect(build_server()) as client:
        await client.call_tool("log_from_thread")
    assert not [r for r in caplog.records if r.getMessage() in ("first", "second 2")]


async def test_ctx_logger_exception_sends_the_traceback() -> None:
    server = Server("t")

    @server.tool()
    def oops(ctx: Context) -> str:
        try:
            raise KeyError("missing")
        except KeyError:
            ctx.logger.exception("lookup failed")
        return "handled"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.call_tool("oops")
    (message,) = inbox.of("notifications/message")
    assert message["level"] == "error"
    assert message["data"].startswith("lookup failed\nTraceback")
    assert "KeyError: 'missing'" in message["data"]


async def test_log_messages_come_before_the_result_on_the_wire() -> None:
    async with connect(build_server(), recorder=True) as client:
        await client.call_tool("log_from_thread")
        await client.call_tool("log_from_loop")
        await client.call_tool("log_every_level")
        _, received = frames(client)
    answers = [i for i, f in enumerate(received) if "id" in f and "result" in f]
    logs = [i for i, f in enumerate(received) if f.get("method") == "notifications/message"]
    # answers: initialize, then the three tools; each tool's messages sit between the answer
    # before it and its own, and none comes after the last answer
    per_call = [[i for i in logs if lo < i < hi] for lo, hi in itertools.pairwise(answers)]
    assert [len(group) for group in per_call] == [3, 5, 8]
    assert max(logs) < answers[-1]


async def test_nothing_is_logged_for_a_request_after_its_result() -> None:
    server = Server("late", logging_enabled=True)
    release = anyio.Event()
    finished = anyio.Event()
    tasks: list[Any] = []

    @server.tool()
    async def leave_a_task(ctx: Context) -> str:
        async def later() -> None:
            await release.wait()
            await ctx.log("error", "too late")
            ctx.logger.error("too late as well")
            await ctx.report_progress(1)
            finished.set()

        tasks.append(asyncio.get_running_loop().create_task(later()))
        return "returned"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.request("tools/call", {"name": "leave_a_task", "_meta": {"progressToken": 1}})
        release.set()
        with anyio.fail_after(TIMEOUT):
            await finished.wait()
        await client.ping()  # a round trip after the late attempts
    assert inbox.items == []


async def test_a_sync_tool_logging_after_its_result_sends_nothing() -> None:
    server = Server("late-thread", logging_enabled=True)
    kept: list[Context] = []

    @server.tool()
    def keep(ctx: Context) -> str:
        kept.append(ctx)
        return "kept"

    inbox = Inbox()
    async with connect(server, on_notification=inbox) as client:
        await client.call_tool("keep")
        await anyio.to_thread.run_sync(kept[0].logger.error, "after the result")
        await client.ping()
    assert inbox.items == []


@pytest.mark.parametrize("version", VERSIONS)
async def test_message_notifications_and_set_level_validate_against_the_official_schema(version: str) -> None:
    async with connect(build_server(), protocol_version=version, recorder=True) as client:
        await client.set_logging_level("debug")
        await client.call_tool("log_every_level")
        await client.call_tool("log_from_thread")
        sent, received = frames(client)
    check_schema(version, "SetLevelRequest", next(f for f in sent if f.get("method") == "logging/setLevel"))
    messages = [f for f in received if f.get("method") == "notifications/message"]
    assert len(messages) == 11
    for frame in messages:
        check_schema(version, "LoggingMessageNotification", frame)
    set_level_answer = next(f for f in received if f.get("id") == sent[2]["id"])
    check_schema(version, "EmptyResult", set_level_answer["result"])


async def test_logging_over_stdio_with_a_subprocess() -> None:
    inbox = Inbox()
    with anyio.fail_after(TIMEOUT * 2):
        async with Client.stdio(SERVE, on_notification=inbox) as client:
            await client.set_logging_level("warning")
            await client.call_tool("log_from_thread")
            await client.call_tool("log_every_level")
    assert [(p["level"], p["logger"]) for p in inbox.of("notifications/message")] == [
        ("warning", "features.db"),
        ("error", "features"),
        *[(level, "levels") for level in LEVELS[3:]],
    ]
