"""The fresh-connection fixtures of a revision, with as few new server processes as the fixtures allow.

Theory of operation (see ``_reuse`` for the shared first frames and the spare connections):

- *shared across revisions*: a first frame that no revision changes (``initialize`` with
  ``protocolVersion`` "2099-01-01", say) asks the same question of the same starting state in every
  revision, so it is sent once in the run: :class:`Shared` keeps its record for every revision. A
  revision that finds the frame being recorded by another puts the fixture off until the end of its
  fresh fixtures and then waits for that record (holding no slot of the pace). A record made in
  another revision is an observation new to this one: its frames are logged, and its request ids
  counted, in this revision too (its invariants judge every frame its fixtures saw).
- *left-over connections*: a fixture that only sends the probe request (``stdio:shutdown:exit-on-eof``:
  a ping, then stdin closed) needs a server process, not one nothing has happened on. It runs after
  the other fresh fixtures, on the connection of the last one that passed and left nothing in flight
  (every request answered, nothing unreadable sent, its input open, and in the stateless revisions
  no ``initialize`` sent on it: a server may keep a connection to the era of its first message),
  instead of a new process.

The verdicts come back in the order of the fixtures, whatever order they ran in.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from ._channel import PASS, SKIP, Channel, LateAnswers, Seen
from ._resume import Prefixed, Resumed, handshake_prefix
from ._reuse import Recording, Replay, Spare, first_frame, handshake_id, untouched
from ._variables import base_variables, target_variables
from .fixtures import MODERN_REVISIONS, Fixture
from .targets import Connection, Target

if TYPE_CHECKING:
    from .runner import Options, Verdict

__all__ = ["Shared", "probe_only", "run_fresh_fixtures", "shared_frames"]

Record = tuple[bytes, list[Any], str]
RunFixture = Callable[[Fixture, Channel, dict[str, Any], str, str, bool], Awaitable["Verdict"]]


@dataclass
class Shared:
    """What the revisions of one run share: the records of shared first frames, the revision each
    was made in, the recordings under way (set once each has ended, record or not), and whether a
    missing answer is still confirmed by a follow-up (see ``Channel.next_response``)."""

    records: dict[bytes, Record] = field(default_factory=dict)
    late: LateAnswers = field(default_factory=LateAnswers)
    origin: dict[bytes, str] = field(default_factory=dict)
    underway: dict[bytes, anyio.Event] = field(default_factory=dict)

    def keep(self, frame: bytes, record: Record, revision: str) -> None:
        self.records.setdefault(frame, record)
        self.origin.setdefault(frame, revision)


def shared_frames(
    target: Target, fixtures: Sequence[Fixture], revisions: Sequence[str]
) -> dict[str, dict[str, bytes]]:
    """Per revision, fixture id -> first frame, for the fresh fixtures of the shape "send F, expect
    P" whose F another such fixture sends too (in any revision), or is the revision's handshake."""
    if target.transport == "http":
        return {revision: {} for revision in revisions}
    frames: dict[str, dict[str, bytes]] = {}
    sent_by: dict[bytes, int] = {}
    for revision in revisions:
        variables = base_variables(revision)
        variables.update(target_variables(target))
        ours: dict[str, bytes] = {}
        for fixture in fixtures:
            if (
                fixture.connection != "fresh"
                or fixture.invariant
                or not fixture.applies(revision, target.transport)
            ):
                continue
            frame = first_frame(fixture, revision, target.transport, variables)
            if frame is not None:
                ours[fixture.id] = frame
                sent_by[frame] = sent_by.get(frame, 0) + 1
        frames[revision] = ours
    return {
        revision: {
            fid: frame
            for fid, frame in ours.items()
            if sent_by[frame] > 1 or handshake_id(frame, revision) is not None
        }
        for revision, ours in frames.items()
    }


def probe_only(fixture: Fixture, revision: str, transport: str) -> bool:
    """Whether every request ``fixture`` sends (for ``revision`` and ``transport``) is the probe
    request, a harmless one any live connection answers (legacy ``ping``, modern ``server/discover``)."""
    from ._steps import _step_applies

    steps = [step for step in fixture.steps if _step_applies(step, revision, transport)]
    allowed = {"send", "expect", "close_input", "expect_exit", "revisions", "transports"}
    return bool(steps) and all(
        set(step) <= allowed
        and (
            "send" not in step
            or (isinstance(step["send"], dict) and step["send"].get("method") == "${probe_method}")
        )
        for step in steps
    )


def _sends_probe(frame: Any) -> bool:
    return isinstance(frame, dict) and frame.get("method") == "${probe_method}"


def _closes_input(fixture: Fixture) -> bool:
    return any("close_input" in step or "expect_exit" in step for step in fixture.steps)


def _settled(channel: Channel) -> bool:
    """Whether nothing is left in flight on the channel's connection and nothing unreadable was sent."""
    return not (channel.pending or channel.outstanding or channel.streams or channel.unreadable_in)


def _same_era(channel: Channel, revision: str) -> bool:
    """Whether the connection still serves the revision's era: in the stateless revisions, no
    ``initialize`` was sent on it (a server may keep a connection to the era of its first message)."""
    methods = {name for names in channel.sent_methods.values() for name in names}
    return revision not in MODERN_REVISIONS or "initialize" not in methods


@dataclass
class _Held:
    """The connections kept for later fixtures: one nothing happened on (``spare``), and one of a
    passing fixture with nothing in flight (``leftover``), for the probe-only fixtures."""

    spare: Spare | None = None
    leftover: Spare | None = None
    # connections some fixture made a handshake on and then only read, by that handshake (``_resume``)
    resumable: dict[tuple[bytes, bytes], tuple[Spare, list[bytes]]] = field(default_factory=dict)

    async def aclose(self) -> None:
        resumable = [spare for spare, _ in self.resumable.values()]
        for held in (self.spare, self.leftover, *resumable):
            if held is not None:
                await held[0].aclose()
        self.spare = self.leftover = None
        self.resumable = {}


async def run_fresh_fixtures(
    target: Target,
    fixtures: list[Fixture],
    revision: str,
    options: Options,
    variables: dict[str, Any],
    log: list[Seen],
    frames: dict[str, bytes],
    shared: Shared,
    slot: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
    on_latency: Callable[[float], None] | None,
    run_fixture: RunFixture,
) -> tuple[list[Verdict], list[Any], dict[str, set[str]]]:
    """Every fresh fixture of the revision: their verdicts (in the fixtures' order), the request ids
    sent and the methods sent with them."""
    transport = target.transport
    last = {i for i, f in enumerate(fixtures) if transport != "http" and probe_only(f, revision, transport)}
    order = sorted(range(len(fixtures)), key=lambda i: (i in last, i))
    variables_of = base_variables(revision)
    variables_of.update(target_variables(target))
    prefixes = {i: handshake_prefix(f, revision, transport, variables_of) for i, f in enumerate(fixtures)}
    verdicts: dict[int, Verdict] = {}
    sent: list[Any] = []
    methods: dict[str, set[str]] = {}
    held = _Held()

    async def one(i: int) -> None:
        fixture = fixtures[i]
        frame = frames.get(fixture.id)
        claimed = frame is not None and frame not in shared.records and frame not in shared.underway
        if claimed:
            assert frame is not None
            shared.underway[frame] = anyio.Event()
        try:
            to_come = [j for j in order if j not in verdicts and j != i]
            wants_leftover = any(j in last for j in to_come)
            prefix = prefixes[i]
            resume = prefix is not None and any(prefixes[j] == prefix for j in to_come)
            verdicts[i] = await _run_fresh(
                target,
                fixture,
                revision,
                options,
                variables,
                log,
                frame,
                shared,
                held,
                on_latency,
                run_fixture,
                sent,
                methods,
                i in last,
                wants_leftover,
                (prefix, resume),
                slot,
            )
        finally:
            if claimed:
                assert frame is not None
                shared.underway[frame].set()

    try:
        later: list[int] = []
        for i in order:
            frame = frames.get(fixtures[i].id)
            if frame is not None and frame not in shared.records and frame in shared.underway:
                later.append(i)  # being recorded in another revision: its record, once there
                continue
            await one(i)
        for i in later:
            frame = frames[fixtures[i].id]
            await shared.underway[frame].wait()
            await one(i)
    finally:
        await held.aclose()
    return [verdicts[i] for i in range(len(fixtures))], sent, methods


async def _run_fresh(
    target: Target,
    fixture: Fixture,
    revision: str,
    options: Options,
    variables: dict[str, Any],
    log: list[Seen],
    frame: bytes | None,
    shared: Shared,
    held: _Held,
    on_latency: Callable[[float], None] | None,
    run_fixture: RunFixture,
    sent: list[Any],
    methods: dict[str, set[str]],
    probe: bool,
    wants_leftover: bool,
    handshake: tuple[tuple[bytes, bytes] | None, bool],
    slot: Callable[[], contextlib.AbstractAsyncContextManager[Any]],
) -> Verdict:
    """A fresh fixture: on the record of its shared frame when there is one, else on the spare
    connection (or the left-over one, for a probe-only fixture) or a new one. It holds a slot of the
    pace (``slot``) while it runs, not while its process starts."""
    transport = target.transport
    fresh_variables = base_variables(revision)
    fresh_variables.update(target_variables(target))
    fresh_variables["capabilities"] = variables.get("capabilities", {})

    def count(channel: Channel) -> None:
        sent.extend(channel.sent_ids)
        for rid, names in channel.sent_methods.items():
            methods.setdefault(rid, set()).update(names)

    if frame is not None and frame in shared.records:  # judged on the answer already seen
        elsewhere = shared.origin.get(frame) != revision  # (then a new observation in this revision)
        replayed = Channel(Replay(transport, shared.records[frame]), log if elsewhere else [], options)
        async with slot():
            verdict = await run_fixture(fixture, replayed, fresh_variables, revision, transport, False)
        if elsewhere:
            count(replayed)
        return verdict
    stacks: list[contextlib.AsyncExitStack] = []
    prefix, resume = handshake
    answer: list[bytes] = []
    resumed = held.resumable.pop(prefix, None) if prefix is not None else None
    taken = resumed[0] if resumed is not None else held.spare or (held.leftover if probe else None)
    if taken is not None:
        stack, conn = taken
        if taken is held.spare:
            held.spare = None
        elif taken is held.leftover:
            held.leftover = None
    else:
        stack = contextlib.AsyncExitStack()
        conn = await stack.enter_async_context(target.connect())
    stacks.append(stack)
    if resumed is not None and prefix is not None:
        answer = resumed[1]
        conn = Resumed(conn, prefix, answer)
    elif prefix is not None and resume:
        conn = Prefixed(conn, prefix)
    if frame is not None:
        conn = Recording(conn, frame)
    fresh = Channel(conn, log, options)
    fresh.on_latency = on_latency
    fresh.late = shared.late

    async def reconnect() -> Connection:
        stacks.append(contextlib.AsyncExitStack())
        return await stacks[-1].enter_async_context(target.connect())

    fresh.reconnect = reconnect  # a ``reconnect`` step: a new connection (stdio: a new process)
    try:
        async with slot():  # (taken once the process is there: starting one is no answer, see ``Pace``)
            verdict = await run_fixture(fixture, fresh, fresh_variables, revision, transport, False)
        if isinstance(conn, Recording):
            conn.stop()
            if frame is not None and conn.record is not None:
                shared.keep(frame, conn.record, revision)
        count(fresh)
        if isinstance(conn, Resumed):
            conn.forget(log)
        if isinstance(conn, Prefixed) and conn.complete:
            answer = conn.answer
        current = fresh.conn
        while isinstance(current, (Recording, Prefixed, Resumed)):
            current = current.inner
        if (
            verdict.status in (PASS, SKIP)
            and transport != "http"
            and len(stacks) == 1  # (connections are closed in the order they were opened)
            and not await current.wait_exit(0)
        ):
            if resume and prefix is not None and answer and _settled(fresh):
                held.resumable[prefix] = ((stacks.pop(), current), answer)
            elif untouched(fresh, revision) and held.spare is None:
                held.spare = (stacks.pop(), current)
            elif (
                wants_leftover
                and _settled(fresh)
                and _same_era(fresh, revision)
                and not _closes_input(fixture)
            ):
                if held.leftover is not None:
                    await held.leftover[0].aclose()
                held.leftover = (stacks.pop(), current)
    finally:
        for each in reversed(stacks):
            await each.aclose()
    return verdict
