"""A fixture whose setup never happens (the server request it waits for never comes on its stream)
is a SKIP with the reason, not a FAIL."""

from __future__ import annotations

from typing import Any

import pytest

from jsonrpc_mcp_conformance import load_spec
from jsonrpc_mcp_conformance._steps import _http_step
from jsonrpc_mcp_conformance.runner import Abort, Channel, Options, _expect_message, base_variables

from .test_behaviour import ScriptedConnection

pytestmark = pytest.mark.anyio

SPEC = load_spec()
LEGACY = "2025-06-18"


def _steps(transport: str) -> list[dict[str, Any]]:
    fixture = SPEC.by_id()["behaviour:cancel:legacy-in-flight"]
    return [s for s in fixture.steps if transport in s.get("transports", (transport,))]


async def test_no_sampling_request_skips_the_in_process_cancellation() -> None:
    step = next(s for s in _steps("inprocess") if "expect_message" in s)
    answer = {"jsonrpc": "2.0", "id": "b07", "result": {"content": []}}
    channel = Channel(ScriptedConnection([answer]), [], Options())  # type: ignore[arg-type]
    variables = base_variables(LEGACY)
    with pytest.raises(Abort) as caught:
        await _expect_message(step, channel, variables, 0.2)
    assert caught.value.status == "skip"
    assert "sampling/createMessage" in caught.value.problems[0]
    channel = Channel(ScriptedConnection([]), [], Options())  # type: ignore[arg-type]
    with pytest.raises(Abort) as caught:  # nothing at all
        await _expect_message(step, channel, variables, 0.2)
    assert caught.value.status == "skip"
    request = {"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage"}
    channel = Channel(ScriptedConnection([request]), [], Options())  # type: ignore[arg-type]
    await _expect_message(step, channel, variables, 0.2)  # the setup happened: nothing raised


class _Reply:
    def __init__(self, status: int, messages: list[Any]) -> None:
        self.status = status
        self.messages = messages
        self.body = b""  # (an SSE body read as messages)

    def as_pattern_subject(self) -> dict[str, Any]:
        return {"status": self.status, "messages": self.messages, "content_type": "text/event-stream"}

    def head_lines(self) -> list[str]:  # (what the channel's transcript shows of an answer)
        return [f"HTTP {self.status}", "content-type: text/event-stream"]


class _Stream:
    def __init__(self, reply: _Reply) -> None:
        self.reply = reply

    async def read(self, **bounds: Any) -> _Reply:
        return self.reply

    async def aclose(self) -> None:
        return None


class _HttpConnection:
    """Answers the call's POST with ``reply`` (what the server put on the call's own stream)."""

    transport = "http"
    session_id = "s"

    def __init__(self, reply: _Reply) -> None:
        self.reply = reply

    async def exchange(self, *args: Any, **kwargs: Any) -> _Reply:
        return self.reply

    async def open_exchange(self, *args: Any) -> _Stream:
        return _Stream(self.reply)

    def default_headers(self, message: Any) -> dict[str, str]:
        return {"content-type": "application/json"}

    def learn(self, message: Any, reply: Any) -> None:
        return None


async def _call_step(reply: _Reply) -> None:
    step = next(s for s in _steps("http") if "http" in s and s["http"].get("keep") == "call")
    channel = Channel(_HttpConnection(reply), [], Options())  # type: ignore[arg-type]
    variables = {**base_variables(LEGACY), "tool": "test_sampling"}
    try:
        await _http_step(step["http"], channel, variables, 0.2)
    finally:
        for stream in channel.streams.values():
            await stream.aclose()


async def test_a_sampling_request_on_another_stream_skips_the_http_cancellation() -> None:
    with pytest.raises(Abort) as caught:  # the call's stream ended with its result only
        await _call_step(_Reply(200, [{"jsonrpc": "2.0", "id": "b07", "result": {"content": []}}]))
    assert caught.value.status == "skip"
    assert "on this stream" in caught.value.problems[0]
    with pytest.raises(Abort) as caught:  # an HTTP error is no missing setup: still a failure
        await _call_step(_Reply(500, []))
    assert caught.value.status == "fail"
    await _call_step(_Reply(200, [{"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage"}]))
