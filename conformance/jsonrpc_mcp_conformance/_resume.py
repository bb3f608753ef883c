"""Fresh fixtures that begin with the same handshake, on one connection (legacy revisions, stdio).

Theory of operation. Some fresh fixtures need a connection of their own only for its handshake: they
``initialize`` with client capabilities of their own (the MCP Apps extension, say), then only read
(list tools, read resources). When several begin with the same two frames, byte for byte (that
``initialize`` and ``notifications/initialized``), the first runs on a new connection and keeps
what the server sent in answer to its ``initialize`` (:class:`Prefixed`); if it then left nothing
in flight and sent nothing but reads, the next one *resumes* that connection (:class:`Resumed`):
its two handshake frames are not sent again, its ``initialize`` is answered with the frames the
server sent then, and everything after goes to the server as usual. The server's state is what a
new connection's would be after the same handshake, since reads change nothing.

A resumed answer is no new observation: the frames given again are taken out of the revision's
log afterwards (:meth:`Resumed.forget`), so the invariants judge each frame once.
"""

from __future__ import annotations

from typing import Any

from ._channel import SKIP, Abort, Seen, _dump
from ._variables import substitute
from .fixtures import LEGACY_REVISIONS, Fixture
from .targets import Connection

__all__ = ["READS", "Prefixed", "Resumed", "handshake_prefix"]

# requests that change nothing on the server (its state is the same after them)
READS = frozenset(
    {
        "ping",
        "tools/list",
        "prompts/list",
        "prompts/get",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "completion/complete",
        "server/discover",
    }
)
# the keys of the steps that may follow the handshake (besides their requests, which must be reads)
_STEPS = {"send", "expect", "paginate", "check", "match", "capture", "unjudged", "setup", "where"}
_AFTER_RECONNECT = _STEPS | {"reconnect", "handshake"}
_WHERE = {"revisions", "transports"}


def _method(frame: Any) -> Any:
    return frame.get("method") if isinstance(frame, dict) else None


def handshake_prefix(
    fixture: Fixture, revision: str, transport: str, variables: dict[str, Any]
) -> tuple[bytes, bytes] | None:
    """The ``initialize`` and ``notifications/initialized`` frames a fresh legacy fixture begins with
    when everything it sends on that connection afterwards is a read (see :data:`READS`); else None."""
    from ._steps import _step_applies

    if revision not in LEGACY_REVISIONS or transport == "http":
        return None
    steps = [step for step in fixture.steps if _step_applies(step, revision, transport)]
    if len(steps) < 3:
        return None
    first, answer, second = (set(step) - _WHERE for step in steps[:3])
    if first != {"send"} or _method(steps[0]["send"]) != "initialize":
        return None
    if "expect" not in answer or not answer <= {"expect", "capture"}:
        return None
    if second != {"send"} or _method(steps[2]["send"]) != "notifications/initialized":
        return None
    allowed = _STEPS
    for step in steps[3:]:
        kinds = set(step) - _WHERE
        if "reconnect" in kinds:
            allowed = _AFTER_RECONNECT  # (what follows goes to another connection)
        if not kinds <= allowed:
            return None
        if allowed is _STEPS and "send" in kinds and _method(step["send"]) not in READS:
            return None
        if allowed is _STEPS and "paginate" in kinds and step["paginate"].get("method") not in READS:
            return None
    try:
        return _dump(substitute(steps[0]["send"], variables)), _dump(substitute(steps[2]["send"], variables))
    except Abort as abort:
        if abort.status == SKIP:
            return None
        raise


class Prefixed:
    """A new connection that keeps what the server sends after the fixture's ``initialize``
    (``prefix[0]``) until it sends ``notifications/initialized`` (``prefix[1]``)."""

    def __init__(self, inner: Connection, prefix: tuple[bytes, bytes]) -> None:
        self.inner = inner
        self.transport = inner.transport
        self.prefix = prefix
        self.answer: list[bytes] = []
        self._stage = 0  # 1: initialize sent, 2: initialized sent (the record is complete), -1: neither
        self.reads_only = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    @property
    def complete(self) -> bool:
        return self._stage == 2

    async def send(self, frame: bytes) -> None:
        if self._stage == 0:
            self._stage = 1 if frame == self.prefix[0] else -1
        elif self._stage == 1:
            self._stage = 2 if frame == self.prefix[1] else -1
        await self.inner.send(frame)

    async def receive(self, timeout: float) -> bytes | None:
        frame = await self.inner.receive(timeout)
        if frame is not None and self._stage == 1:
            self.answer.append(frame)
        return frame

    async def close_input(self) -> None:
        self._stage = -1
        await self.inner.close_input()

    async def wait_exit(self, timeout: float) -> bool:
        return await self.inner.wait_exit(timeout)


class Resumed:
    """A connection some fixture already made the handshake ``prefix`` on (the server answered
    ``answer``): the fixture's own handshake frames are not sent again, and are answered with
    ``answer``; everything else goes to the server."""

    def __init__(self, inner: Connection, prefix: tuple[bytes, bytes], answer: list[bytes]) -> None:
        self.inner = inner
        self.transport = inner.transport
        self._prefix = list(prefix)
        self._answer = [bytes(bytearray(frame)) for frame in answer]  # (copies: see :meth:`forget`)
        self._queue: list[bytes] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def send(self, frame: bytes) -> None:
        if self._prefix and frame == self._prefix[0]:
            if len(self._prefix) == 2:  # the fixture's initialize: the answer the server gave then
                self._queue.extend(self._answer)
            self._prefix.pop(0)
            return
        self._prefix = []
        await self.inner.send(frame)

    async def receive(self, timeout: float) -> bytes | None:
        if self._queue:
            return self._queue.pop(0)
        return await self.inner.receive(timeout)

    async def close_input(self) -> None:
        await self.inner.close_input()

    async def wait_exit(self, timeout: float) -> bool:
        return await self.inner.wait_exit(timeout)

    def forget(self, log: list[Seen]) -> None:
        """Take the frames given again out of ``log`` (they were logged when first seen)."""
        given = {id(frame) for frame in self._answer}
        log[:] = [seen for seen in log if id(seen.raw) not in given]
