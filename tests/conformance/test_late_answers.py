"""A missing answer over an ordered stream (stdio, in-process) is confirmed by a follow-up, not by a delay
alone (issue 26): a late answer that comes before the follow-up's is an answer; one the server never
gives fails as before, saying the follow-up was answered first; a wedged server costs one follow-up in
the run, not one per wait.

The servers here model a starved server deterministically, without sleeps: one holds its answer to the
request with id 7 until the next request arrives (a server late by more than the harness's timeout),
one never answers it, one stops answering anything once it has read a fixture's request."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import orjson
import pytest

from jsonrpc_mcp_conformance import InProcessTarget, Run, StdioTarget, check, load_spec
from jsonrpc_mcp_conformance._channel import _OMIT, Abort, Channel
from jsonrpc_mcp_conformance._reuse import Recording, Replay
from jsonrpc_mcp_conformance._variables import base_variables
from jsonrpc_mcp_conformance.runner import Options
from tests import timeouts

pytestmark = pytest.mark.anyio

SPEC = load_spec(check=False)
REVISION = "2025-11-25"
INTEGER = "jsonrpc:id:integer"  # sends the probe request (a legacy ping) with id 7
PINGS = ["lifecycle:ping:after-initialize", INTEGER, "jsonrpc:id:string"]
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
PICKY = Path(__file__).resolve().parent / "servers" / "picky.py"
FOLLOW_UP = "conformance-follow-up-"


class Scripted:
    """An in-process server answering ``initialize``, ``server/discover`` and ``ping`` in order, with
    one quirk: ``hold`` (the answer to id 7 waits for the next request and goes out just before its
    answer), ``drop`` (id 7 is never answered) or ``wedge`` (nothing is answered from a fixture's
    first request on: one whose id is not the harness's own). ``received``: every frame it read, on
    every connection."""

    def __init__(self, quirk: str) -> None:
        self.quirk = quirk
        self.received: list[Any] = []

    async def serve(self, stream: Any) -> None:
        held: dict[str, Any] | None = None
        wedged = False
        while True:
            try:
                frame = await stream.receive()
            except anyio.EndOfStream:
                return
            message = orjson.loads(frame)
            self.received.append(message)
            if not isinstance(message, dict) or "id" not in message:
                continue  # (a notification)
            own = isinstance(message["id"], str) and message["id"].startswith("conformance-")
            wedged = wedged or (self.quirk == "wedge" and not own)
            if wedged:
                continue
            if held is not None:
                await stream.send(orjson.dumps(held))
                held = None
            answer = _answer(message)
            if message["id"] == 7 and self.quirk == "hold":
                held = answer
            elif not (message["id"] == 7 and self.quirk == "drop"):
                await stream.send(orjson.dumps(answer))

    def follow_ups(self) -> list[Any]:
        """The ids of the confirmation follow-ups the server read."""
        return [
            m["id"] for m in self.received if isinstance(m.get("id"), str) and m["id"].startswith(FOLLOW_UP)
        ]


def _answer(message: dict[str, Any]) -> dict[str, Any]:
    method, rid = message.get("method"), message["id"]
    info = {"name": "scripted", "version": "1.0"}
    if method == "initialize":
        asked = (message.get("params") or {}).get("protocolVersion")
        version = asked if asked in VERSIONS else VERSIONS[-1]
        result = {"protocolVersion": version, "capabilities": {}, "serverInfo": info}
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    if method == "server/discover":
        result = {"supportedVersions": list(VERSIONS), "capabilities": {}, "serverInfo": info}
        return {"jsonrpc": "2.0", "id": rid, "result": result}
    if method == "ping":
        return {"jsonrpc": "2.0", "id": rid, "result": {}}
    return {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}}


async def _run(server: Scripted, timeout: float = 1.0) -> Run:
    target = InProcessTarget(server.serve, f"scripted ({server.quirk})")
    with anyio.fail_after(timeouts.RUN):
        return await check(target, revisions=[REVISION], only=PINGS, spec=SPEC, timeout=timeout)


def _by_id(run: Run) -> dict[str, Any]:
    return {v.id: v for v in run.verdicts}


def _sent_before(frames: list[str], first: str, then: str) -> bool:
    """Whether a transcript line containing ``first`` comes before one containing ``then``."""
    before = [i for i, line in enumerate(frames) if first in line]
    after = [i for i, line in enumerate(frames) if then in line]
    return bool(before and after) and before[0] < after[0]


async def test_an_answer_later_than_the_timeout_but_before_the_follow_ups_is_an_answer() -> None:
    # before: FAIL "no answer in 1 s" (the server answers id 7 only once it reads the next request)
    server = Scripted("hold")
    run = await _run(server)
    verdicts = _by_id(run)
    assert {rid: v.status for rid, v in verdicts.items()} == dict.fromkeys(PINGS, "pass"), [
        (v.id, v.problems) for v in run.verdicts
    ]
    [pid] = server.follow_ups()  # one follow-up, on the wire
    frames = verdicts[INTEGER].frames
    # sent after the timeout, then the late answer, then the follow-up's (left for nobody)
    assert _sent_before(frames, '> {"jsonrpc":"2.0","id":7', f'> {{"jsonrpc":"2.0","id":"{pid}"')
    assert _sent_before(frames, f'"id":"{pid}","method"', '< {"jsonrpc":"2.0","id":7,')


async def test_an_answer_never_given_fails_and_says_the_follow_up_was_answered_first() -> None:
    server = Scripted("drop")
    run = await _run(server)
    verdicts = _by_id(run)
    assert {rid: v.status for rid, v in verdicts.items()} == {**dict.fromkeys(PINGS, "pass"), INTEGER: "fail"}
    problems = verdicts[INTEGER].problems
    assert problems[0] == "no answer in 1 s, nor before the answer to a follow-up sent then", problems
    [pid] = server.follow_ups()
    assert f"the follow-up ping ({pid}) was answered first" in problems, problems
    # the unanswered request stays in flight: the next fixture got a new session (a new connection)
    assert sum(m.get("method") == "initialize" for m in server.received) == 2


async def test_a_wedged_server_costs_one_follow_up_in_the_run_not_one_per_wait(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Scripted("wedge")
    with caplog.at_level(logging.INFO, logger="jsonrpc_mcp_conformance._channel"):
        run = await _run(server)
    verdicts = _by_id(run)
    assert {rid: v.status for rid, v in verdicts.items()} == dict.fromkeys(PINGS, "fail")
    # each fixture ran on a new session (resync found nothing answered) and waited for an answer
    # that never came: the first wait was confirmed by a follow-up, which went unanswered too, so
    # none of the later waits sent one
    assert sum(m.get("method") == "initialize" for m in server.received) == 3
    assert len(server.follow_ups()) == 1
    problems = [v.problems[0] for v in run.verdicts]
    assert sum("nor to the follow-up sent after 1 s" in problem for problem in problems) == 1, problems
    assert sum(problem == "no answer in 1 s" for problem in problems) == 2, problems
    said = [r.getMessage() for r in caplog.records if r.name == "jsonrpc_mcp_conformance._channel"]
    assert len(said) == 1 and "was not answered either: no more in this run" in said[0], said


async def test_a_late_answer_over_stdio_is_an_answer() -> None:
    # the same as the in-process hold, over a server process's stdin and stdout
    target = StdioTarget([sys.executable, str(PICKY), "--hold", "7"])
    with anyio.fail_after(timeouts.RUN):
        run = await check(
            target, revisions=[REVISION], only=PINGS, spec=SPEC, timeout=1.0, startup_timeout=timeouts.STARTUP
        )
    verdicts = _by_id(run)
    assert {rid: v.status for rid, v in verdicts.items()} == dict.fromkeys(PINGS, "pass"), [
        (v.id, v.problems) for v in run.verdicts
    ]
    assert any(f'"id":"{FOLLOW_UP}' in line for line in verdicts[INTEGER].frames if line.startswith(">"))


# The guards, on a channel over a scripted connection: no follow-up where it could decide nothing.


class Quiet:
    """A connection that never answers; ``sent`` keeps what was written (or ``refuse`` raises)."""

    def __init__(self, transport: str = "inprocess", refuse: bool = False) -> None:
        self.transport = transport
        self.refuse = refuse
        self.sent: list[Any] = []

    async def send(self, frame: bytes) -> None:
        if self.refuse and self.sent:
            raise EOFError("the server's stdin is closed")
        self.sent.append(orjson.loads(frame))

    async def receive(self, timeout: float) -> bytes | None:
        await anyio.lowlevel.checkpoint()
        return None

    async def close_input(self) -> None:
        pass


PING = b'{"jsonrpc":"2.0","id":7,"method":"ping"}'


def _channel(conn: Any, *, variables: bool = True) -> Channel:
    channel = Channel(conn, [], Options(timeout=0.05, startup_timeout=0.1))
    if variables:
        channel.probe_variables = base_variables(REVISION)
    return channel


async def _sent_after_a_quiet_wait(channel: Channel) -> list[Any]:
    with anyio.fail_after(timeouts.STEP):
        await channel.send(PING)
        assert await channel.next_response(0.05) is _OMIT
    return [m["id"] for m in channel.conn.sent]  # type: ignore[attr-defined]


async def test_a_quiet_wait_is_confirmed_once_and_marks_the_server_wedged() -> None:
    channel = _channel(Quiet())
    assert await _sent_after_a_quiet_wait(channel) == [7, f"{FOLLOW_UP}1"]  # (the channel's first)
    assert channel.late.wedged and channel.confirmed_at is not None
    assert (
        channel.no_answer().startswith("no answer in")
        and "nor to the follow-up sent after" in channel.no_answer()
    )
    # a later wait (the follow-up went unanswered): no follow-up
    assert await _sent_after_a_quiet_wait(channel) == [7, f"{FOLLOW_UP}1", 7]
    assert channel.late.sent == 1
    assert channel.no_answer().startswith("no answer in") and "follow-up" not in channel.no_answer()


@pytest.mark.parametrize("case", ["no variables", "input closed", "http", "cannot send"])
async def test_no_follow_up_where_it_could_decide_nothing(case: str) -> None:
    conn = Quiet("http" if case == "http" else "inprocess", refuse=case == "cannot send")
    channel = _channel(conn, variables=case != "no variables")
    if case == "input closed":
        await channel.close_input()
        assert channel.input_closed
    assert await _sent_after_a_quiet_wait(channel) == [7]  # (a follow-up that could not go: none)
    assert channel.confirmed_at is None and not channel.late.wedged
    assert channel.no_answer().startswith("no answer in") and "follow-up" not in channel.no_answer()


async def test_a_replayed_connection_takes_no_follow_up() -> None:
    # (a replay answers its one recorded frame: here, with nothing; sending it more would be refused)
    channel = _channel(Replay("inprocess", (PING, [], "")))
    with anyio.fail_after(timeouts.STEP):
        await channel.send(PING)
        assert await channel.next_response(0.05) is _OMIT
    assert channel.confirmed_at is None and not channel.late.wedged


async def test_a_new_process_still_starting_gets_the_startup_timeout_and_no_follow_up() -> None:
    conn = Quiet("stdio")
    channel = _channel(conn)
    with anyio.fail_after(timeouts.STEP), pytest.raises(Abort) as caught:
        await channel.send(PING)
        await channel.next_response(0.05)
    assert caught.value.status == "error" and "did not start" in caught.value.problems[0]
    assert [m["id"] for m in conn.sent] == [7]


async def test_a_recording_leaves_out_the_answers_to_follow_ups() -> None:
    # a shared first frame's record is what answers that frame: a follow-up's answer is no part of it
    class Inner:
        transport = "stdio"

        def __init__(self) -> None:
            self.queue: list[bytes] = []

        async def send(self, frame: bytes) -> None:
            rid = json.loads(frame)["id"]
            self.queue.append(orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}))

        async def receive(self, timeout: float) -> bytes | None:
            return self.queue.pop(0) if self.queue else None

    recording = Recording(Inner(), PING)  # type: ignore[arg-type]
    await recording.send(PING)
    await recording.send(b'{"jsonrpc":"2.0","id":"conformance-follow-up-1","method":"ping"}')
    assert [json.loads(await recording.receive(1) or b"")["id"] for _ in range(2)] == [7, f"{FOLLOW_UP}1"]
    recording.stop()
    assert recording.record is not None
    assert [json.loads(frame)["id"] for frame in recording.record[1]] == [7]
