"""Fewer server processes: one observation judged by every fixture that asks for it, and a process
left untouched by a fixture handed on to the next one.

Theory of operation. A fresh-connection fixture needs a connection nothing has happened on yet (over
stdio: a new process), because what it checks (the first ``initialize``, say) can only happen once per
connection. Spawning a process per fixture is what made stdio runs slow on a busy machine, so:

- *shared first frames*: fresh fixtures of the shape "send frame F, expect pattern P" whose F is the
  same, byte for byte, ask the same question of the same starting state. F is sent once, on a new
  connection (:class:`Recording` keeps what the server sent up to the answer), and each fixture's P is
  then judged against that record (:class:`Replay`, a connection that gives the recorded frames again).
  When F is the revision's own handshake (legacy ``initialize`` with this revision and no
  capabilities) the session's handshake sends F itself, so those fixtures cost no process at all.
- *spare connections*: a fresh fixture that passed having sent only requests that change no state (a
  legacy ``ping``; any request but ``initialize`` in the stateless revisions) leaves its connection as
  it found it, so the next fresh fixture may take it instead of a new one (:func:`untouched`).

A replay is no new observation: its frames are not logged again (the invariants judge each frame
once) and its request ids are not counted again.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import orjson

from ._channel import ERROR, SKIP, Abort, _dump
from ._frames import sent_request_ids
from ._variables import initialize_request, substitute
from .fixtures import LEGACY_REVISIONS, MODERN_REVISIONS, Fixture
from .targets import Connection

if TYPE_CHECKING:
    from ._channel import Channel

__all__ = ["Recording", "Replay", "Spare", "first_frame", "handshake_id", "untouched"]

_EOF = object()  # a recorded end of the connection


class Recording:
    """A connection that keeps what the server sends from the moment ``frame`` is sent until
    :meth:`stop` (each frame, and an end of the connection), but the answers to requests sent after
    ``frame`` (follow-ups, see ``Channel.next_response``): a replay answers ``frame`` alone."""

    def __init__(self, inner: Connection, frame: bytes) -> None:
        self.inner = inner
        self.transport = inner.transport
        self.frame = frame
        self.frames: list[Any] = []
        self.recording = False
        self.record: tuple[bytes, list[Any], str] | None = None  # set by :meth:`stop`
        self._later: set[str] = set()  # the ids (JSON text) of requests sent after ``frame``

    def __getattr__(self, name: str) -> Any:  # diagnosis, stderr_tail, write_raw, last_reply...
        return getattr(self.inner, name)

    def stop(self) -> None:
        """End the recording: ``record`` is the frame, what came back and the connection's diagnosis."""
        if self.recording:
            describe = getattr(self.inner, "diagnosis", None)
            self.record = (self.frame, self.frames, describe() if describe is not None else "")
        self.recording = False

    async def send(self, frame: bytes) -> None:
        if frame == self.frame and self.record is None and not self.recording:
            self.recording = True
        elif self.recording:
            self._later.update(_dump(rid).decode() for rid in sent_request_ids(frame))
        await self.inner.send(frame)

    async def receive(self, timeout: float) -> bytes | None:
        try:
            frame = await self.inner.receive(timeout)
        except EOFError as exc:
            if self.recording:
                self.frames.append((_EOF, str(exc)))
            raise
        if frame is not None and self.recording and not self._answers_later(frame):
            self.frames.append(frame)
        return frame

    def _answers_later(self, frame: bytes) -> bool:
        try:
            value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            return False
        if not (isinstance(value, dict) and "method" not in value and "id" in value):
            return False
        with contextlib.suppress(orjson.JSONEncodeError):
            return _dump(value["id"]).decode() in self._later
        return False

    async def close_input(self) -> None:
        await self.inner.close_input()

    async def wait_exit(self, timeout: float) -> bool:
        return await self.inner.wait_exit(timeout)


class Replay:
    """A connection that answers the one recorded frame with what the server sent after it then."""

    follow_ups = False  # (it takes no follow-up: see ``Channel.next_response``)

    def __init__(self, transport: str, record: tuple[bytes, list[Any], str]) -> None:
        self.transport = transport
        self._sent, recorded, self._said = record
        self._frames = list(recorded)
        self._asked = False

    def diagnosis(self) -> str:
        return self._said

    async def send(self, frame: bytes) -> None:
        if frame != self._sent or self._asked:  # (cannot happen: only that one frame is replayed)
            raise EOFError("a replayed connection takes only its recorded frame")
        self._asked = True

    async def receive(self, timeout: float) -> bytes | None:
        if not self._asked or not self._frames:
            return None
        frame = self._frames.pop(0)
        if isinstance(frame, tuple) and frame[0] is _EOF:
            raise EOFError(frame[1])
        return bytes(frame)

    async def close_input(self) -> None:
        raise Abort(ERROR, ["a replayed connection cannot be closed"])

    async def wait_exit(self, timeout: float) -> bool:
        return False


def first_frame(fixture: Fixture, revision: str, transport: str, variables: dict[str, Any]) -> bytes | None:
    """The frame a fresh fixture of the shape "send F, expect P" (its steps for ``revision`` and
    ``transport``) sends, or None when it has another shape (or a variable it needs is unknown)."""
    from ._steps import _step_applies

    steps = [step for step in fixture.steps if _step_applies(step, revision, transport)]
    kinds = [sorted(set(step) - {"revisions", "transports"}) for step in steps]
    if kinds != [["send"], ["expect"]]:
        return None
    try:
        return _dump(substitute(steps[0]["send"], variables))
    except Abort as abort:
        if abort.status == SKIP:
            return None
        raise


def untouched(channel: Channel, revision: str) -> bool:
    """Whether a fresh fixture left its connection as it found it: every frame it sent was a
    well-formed request that changes no state (a legacy ``ping``; in the stateless revisions any
    request but ``initialize``), every one was answered, and nothing is waiting to be read."""
    if channel.pending or channel.outstanding or channel.streams or channel.touched:
        return False
    methods = {name for names in channel.sent_methods.values() for name in names}
    if revision in MODERN_REVISIONS:
        return "initialize" not in methods
    return methods <= {"ping"}


def handshake_id(frame: bytes, revision: str) -> Any:
    """The id of ``frame`` when it is the session's own handshake request for ``revision`` (a legacy
    ``initialize`` of that revision with no client capabilities) sent with that id; else None."""
    if revision not in LEGACY_REVISIONS:
        return None
    value = orjson.loads(frame)
    rid = value.get("id") if isinstance(value, dict) else None
    if not isinstance(rid, (str, int)) or isinstance(rid, bool):
        return None
    return rid if frame == _dump(initialize_request(revision, rid)) else None


Spare = tuple[contextlib.AsyncExitStack, Connection]
