"""The connection to a target as fixtures use it: frames seen, request ids sent, the verdict plumbing.

A :class:`Channel` wraps one :class:`~jsonrpc_mcp_conformance.targets.Connection`: every frame the
server sends is parsed once into a :class:`Seen` and appended to the revision's log (the invariants
judge that log at the end), and every frame the harness writes has its request ids noted, so that
``solicited-responses`` can tell an answer to a request we sent from one to no request at all.
:class:`Abort` ends a fixture with its verdict already decided.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from ._frames import _NO_BATCHES, _well_formed, _well_formed_item, sent_request_ids
from .targets import Connection

if TYPE_CHECKING:
    from .runner import Options

__all__ = [
    "ERROR",
    "FAIL",
    "PASS",
    "SKIP",
    "Abort",
    "Channel",
    "LateAnswers",
    "Seen",
    "sent_request_ids",
]

PASS, FAIL, SKIP, ERROR = "pass", "fail", "skip", "error"


class _Absent:
    """The type of ``_OMIT``: shown as a word in reports, never as ``<object object at 0x...>``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "absent"


_log = logging.getLogger(__name__)
_OMIT = _Absent()  # an absent value (a variable that omits its key, no answer at all)
_TRANSCRIPT = 120  # transcript lines a channel keeps of a fixture's exchange (the latest), for its verdict
_NOTHING = "nothing"  # Abort.actual when the server did not answer at all


class Abort(Exception):
    """The fixture cannot go on (its verdict is already decided)."""

    def __init__(self, status: str, problems: list[str], expected: str = "", actual: str = "") -> None:
        super().__init__(problems[0] if problems else status)
        self.status = status
        self.problems = problems
        self.expected = expected
        self.actual = actual
        self.frames: list[str] = []  # the transcript, when the fixture's channel is gone


@dataclass
class Seen:
    """One frame the server sent, parsed."""

    raw: bytes
    fixture: str
    value: Any = None
    parsed: bool = True
    # the fixture it came in sent a frame the server cannot read (so an error answer may have id null)
    after_unreadable: bool = False


@dataclass
class LateAnswers:
    """Whether a wait that ended with nothing is still confirmed by a follow-up (see
    ``Channel.next_response``); a run's channels share one, so a server that left a follow-up
    unanswered (wedged) costs one such wait in the run, not one more per wait."""

    wedged: bool = False
    sent: int = 0  # confirmation follow-ups sent


def _is_response(value: Any) -> bool:
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value)


def _is_message(value: Any) -> bool:
    """A JSON-RPC message or a batch of them (judged loosely: the invariants judge the details)."""
    if isinstance(value, list):
        return bool(value) and all(isinstance(item, dict) and "jsonrpc" in item for item in value)
    return isinstance(value, dict) and "jsonrpc" in value


def _show(frame: bytes, limit: int = 200) -> str:
    """A frame as text for a report: decoded, cut at ``limit`` characters, quoted."""
    text = frame.decode("utf-8", "replace")
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _text(frame: bytes, limit: int = 600) -> str:
    """A frame as a transcript shows it: decoded, cut at ``limit`` characters."""
    text = frame.decode("utf-8", "replace")
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


def _dump(value: Any) -> bytes:
    return orjson.dumps(value)


class Channel:
    """A connection plus what the harness knows about it: the frames seen and the ids it sent."""

    def __init__(self, conn: Connection, log: list[Seen], options: Options) -> None:
        self.conn = conn
        self.log = log
        self.options = options
        self.fixture = ""
        self.sent_ids: list[Any] = []
        self.sent_methods: dict[str, set[str]] = {}  # request id (as JSON text) -> methods sent with it
        self.reconnect: Any = None  # fresh fixtures: an async callable giving a new connection
        self.probe_counter = 0
        self._partial = b""
        self.streams: dict[str, Any] = {}  # HTTP responses still being read (``http`` steps' ``keep``)
        self.pending: list[Seen] = []  # responses ``expect_message`` passed over, read again first
        self.junk: list[bytes] = []  # the latest frames that were no JSON-RPC message (last 3)
        self.transcript: list[str] = []  # "> sent" and "< received" lines, for the fixture's verdict
        self.dropped = 0  # the transcript lines let go (the earliest), said in :meth:`frames`
        self._explained: Any = None  # the HTTP answer :meth:`no_answer` described
        # "no answer" after an invalid frame ends with a follow-up's answer (see ``next_response``)
        self.probe_variables: dict[str, Any] | None = None  # probe_method/probe_params, set per fixture
        self._invalid_sent = False  # the latest frame sent was one a server rejects as it reads it
        self.unreadable_in: str | None = None  # the latest fixture that sent such a frame
        self._swallow: set[str] = set()  # ids of follow-ups sent that no step waits for any more
        self.ended_by: str = ""  # the follow-up whose answer ended the latest wait, if one did
        # a wait for an answer to a well-formed request that ended with nothing is confirmed by a
        # follow-up (see ``next_response``): when it was sent in the latest wait (s), and whether
        # the run still sends them (the runner shares one ``LateAnswers`` among its channels)
        self.confirmed_at: float | None = None
        self.late = LateAnswers()
        self.input_closed = False  # the connection's input was closed (nothing more can be sent)
        # a new connection (a new stdio process) that has sent nothing yet may still be starting: its
        # first answer is waited for ``Options.handshake_timeout`` (see :meth:`first_wait`)
        self.heard = False
        self.waited = 0.0  # how long the latest ``next_response`` waited
        # well-formed requests sent and not answered yet (id as JSON text -> method): a session is
        # only kept after a failure when none is left (see :meth:`resync`)
        self.outstanding: dict[str, str] = {}
        # how long answers took (a request sent to an answer read, on a connection already heard
        # from); the run's pace reads them (see ``runner.Pace``)
        self.on_latency: Any = None
        self._sent_at: float | None = None
        # something was sent that may change the connection's state (an invalid frame, a notification,
        # bytes written as they are, its input closed): no later fixture may take it as new
        self.touched = False

    def use(self, conn: Connection) -> None:
        """Go on over ``conn``, a new connection (a ``reconnect`` step): it may still be starting."""
        self.conn = conn
        self.heard = False
        self.input_closed = False

    async def close_input(self) -> None:
        """Close the connection's input (stdio: the server's stdin); nothing is sent on it after."""
        self.touched = True
        self.input_closed = True
        await self.conn.close_input()

    @property
    def starting(self) -> bool:
        """Whether the connection is a process that has sent nothing yet (stdio: it may be starting)."""
        return not self.heard and getattr(self.conn, "transport", "") == "stdio"

    def first_wait(self, timeout: float) -> float:
        """How long to wait for an answer: ``timeout``, or the start-up timeout while the process
        has sent nothing yet (a server still starting is no fault of the requirement under test)."""
        return max(timeout, self.options.handshake_timeout) if self.starting else timeout

    def not_started(self, waited: float) -> Abort:
        """The ERROR of a fixture whose new process sent nothing at all within the start-up timeout."""
        return Abort(
            ERROR,
            [f"the server did not start within {waited:g} s (the new process sent nothing at all)"],
            actual=_NOTHING,
        )

    def no_answer(self) -> str:
        """What happened instead of the response the latest ``next_response`` waited for: the HTTP
        status that carried none, the follow-up answered first, or how long the wait was."""
        reply = getattr(self.conn, "last_reply", None)
        if reply is not None and not any(_is_response(m) for m in reply.messages):
            self._explained = reply  # (``diagnosis`` need not describe it again)
            kind = f", {reply.content_type}" if reply.content_type else ""
            body = reply.body.decode("utf-8", "replace").strip()
            shown = f": {_show(reply.body, 200)}" if body and not reply.messages else ""
            return (
                f"no response: the POST was answered {reply.status}{kind}{shown} (no JSON-RPC response in it)"
            )
        if self.confirmed_at is not None:  # (a follow-up was sent once the timeout had passed)
            then = self.confirmed_at
            if self.ended_by:
                return f"no answer in {then:.3g} s, nor before the answer to a follow-up sent then"
            return f"no answer in {self.waited:.3g} s, nor to the follow-up sent after {then:.3g} s"
        if self.ended_by:
            return f"no response before the follow-up's answer ({self.waited:.1f} s)"
        return f"no answer in {self.waited:.3g} s"

    def note(self, direction: str, text: str) -> None:
        """One line of the transcript (``>`` sent, ``<`` received), the latest kept."""
        for line in text.splitlines() or [""]:
            self.transcript.append(f"{direction} {line}")
        overflow = len(self.transcript) - _TRANSCRIPT
        if overflow > 0:
            del self.transcript[:overflow]
            self.dropped += overflow

    def start_transcript(self) -> None:
        """A new fixture's exchange begins: the transcript starts empty."""
        self.transcript = []
        self.dropped = 0

    def frames(self) -> list[str]:
        """The transcript as a verdict keeps it (``> sent``, ``< received``, each frame cut at 600
        characters), after a line saying how many earlier lines were let go, if any were."""
        if not self.dropped:
            return list(self.transcript)
        return [f"... ({self.dropped} earlier lines not kept)", *self.transcript]

    def conn_timeout(self, timeout: float | None) -> None:
        """Let a connection whose sends wait for their answers (HTTP) wait ``timeout`` s (the
        handshake's), or again its own once ``None``."""
        if hasattr(self.conn, "send_timeout"):
            self.conn.send_timeout = timeout

    async def close_streams(self) -> None:
        """Close the responses ``http`` steps kept open (a fixture's streams end with it)."""
        streams, self.streams = self.streams, {}
        for stream in streams.values():
            await stream.aclose()

    def _note_sent(self, data: bytes) -> None:
        """Remember the ids of requests in what was written (lines may be split across writes).

        Fixtures send broken frames on purpose (NaN, truncated or invalid JSON): their ids are
        recorded too, read leniently, so ``solicited-responses`` judges a server the same whichever
        fixtures ran (a server that recovers the id of a broken request answers a request we sent).
        """
        *lines, self._partial = (self._partial + data).split(b"\n")
        for line in lines:
            self.sent_ids.extend(sent_request_ids(line))
            with contextlib.suppress(orjson.JSONDecodeError):
                value = orjson.loads(line)
                for item in value if isinstance(value, list) else [value]:
                    if isinstance(item, dict) and "id" in item and isinstance(item.get("method"), str):
                        self.sent_methods.setdefault(_dump(item["id"]).decode(), set()).add(item["method"])

    async def send(self, frame: bytes) -> None:
        self._note_sent(frame + b"\n")
        revision = str((self.probe_variables or {}).get("revision", ""))
        self._invalid_sent = not _well_formed(frame, batches=revision < _NO_BATCHES)
        if self._invalid_sent:
            self.unreadable_in = self.fixture
        self.touched = self.touched or self._invalid_sent
        self._note_outstanding(frame)
        self._sent_at = anyio.current_time()
        try:
            await self.conn.send(frame)
        except EOFError as exc:
            self._note_http()
            self.note(">", _text(frame))
            raise Abort(FAIL, [f"could not send: {exc}"]) from None
        if not self._note_http(frame):
            self.note(">", _text(frame))

    def _note_outstanding(self, frame: bytes) -> None:
        """The requests in a frame, answered or not yet: every well-formed request, also one inside a
        batch with invalid members (a server may still answer it, late). An invalid request's answer,
        if any, is an error a server may as well never send: it is not waited for."""
        try:
            value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            return  # (an unreadable frame's answer, if any, has no id to wait for)
        for item in value if isinstance(value, list) else [value]:
            if _well_formed_item(item) and "id" in item:
                self.outstanding[_dump(item["id"]).decode()] = item["method"]
            else:
                self.touched = True

    def _note_answered(self, value: Any) -> None:
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, dict) and "method" not in item and "id" in item:
                with contextlib.suppress(orjson.JSONEncodeError):
                    self.outstanding.pop(_dump(item["id"]).decode(), None)

    def _note_http(self, frame: bytes | None = None) -> bool:
        """HTTP: the request line and headers sent, the frame, and the answer's status and headers
        (its messages are noted as they are read). Whether the connection is one over HTTP."""
        head = getattr(self.conn, "last_request_head", None)
        if not head:
            return False
        self.note(">", head)
        if frame is not None:
            self.note(">", _text(frame))
            reply = getattr(self.conn, "last_reply", None)
            if reply is not None:
                self.note("<", "\n".join(reply.head_lines()))
                if not reply.messages and reply.body.strip():
                    self.note("<", _text(reply.body))
        return True

    def note_exchange(self, head: str, body: bytes | None, reply: Any = None, *, read_on: str = "") -> None:
        """An exchange of an ``http`` step in the transcript: the request line and headers and the
        body sent (none when ``read_on`` names the kept response read on from), then the answer's
        status line and headers and its body (what was read of it), when one came."""
        if read_on:
            self.note("<", f"(reading on from the response kept as {read_on!r})")
        else:
            if head:
                self.note(">", head)
            if body:
                self.note(">", _text(body))
        if reply is not None:
            if not read_on:
                self.note("<", "\n".join(reply.head_lines()))
            if reply.body.strip():
                self.note("<", _text(reply.body))

    async def write_raw(self, data: bytes) -> None:
        write = getattr(self.conn, "write_raw", None)
        if write is None:
            raise Abort(SKIP, ["not applicable: this transport carries whole frames only"])
        self._note_sent(data)
        self._invalid_sent = False
        self.touched = True
        self.note(">", f"(written as is, no newline added) {_text(data)}")
        try:
            await write(data)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise Abort(FAIL, [f"could not send: {exc}"]) from None

    async def next(self, timeout: float) -> Seen | None:
        if self.pending:  # already in the log
            return self.pending.pop(0)
        deadline = anyio.current_time() + timeout
        while True:
            try:
                frame = await self.conn.receive(max(deadline - anyio.current_time(), 0))
            except EOFError:
                self.heard = True
                raise
            if frame is None:
                return None
            if self.heard and self.on_latency is not None and self._sent_at is not None:
                self.on_latency(anyio.current_time() - self._sent_at)
            self._sent_at = None
            self.heard = True
            seen = self._seen(frame)
            rid = seen.value.get("id") if seen.parsed and isinstance(seen.value, dict) else None
            if not (isinstance(rid, str) and rid in self._swallow):
                return seen
            self._swallow.discard(rid)  # a follow-up's answer nobody waits for (logged)

    def _seen(self, frame: bytes) -> Seen:
        seen = Seen(frame, self.fixture, after_unreadable=self.unreadable_in == self.fixture)
        self.note("<", _text(frame))
        try:
            seen.value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            seen.parsed = False
        if not seen.parsed or not _is_message(seen.value):
            self.junk = [*self.junk[-2:], frame]
        elif _is_response(seen.value):
            self._note_answered(seen.value)
        self.log.append(seen)
        return seen

    def diagnosis(self) -> str:
        """What the server did instead of answering: the lines it wrote that were no JSON-RPC, and
        what the connection knows (a stdio server's exit status and stderr, an HTTP answer that was
        no MCP answer); empty when there is nothing to say."""
        parts: list[str] = []
        if self.junk:
            shown = "; ".join(_show(frame) for frame in self.junk)
            parts.append(f"the server wrote what is no JSON-RPC message: {shown}")
        describe = getattr(self.conn, "diagnosis", None)
        explained = self._explained is not None and getattr(self.conn, "last_reply", None) is self._explained
        if describe is not None and not explained:
            said = describe()
            if said:
                parts.append(said)
        return "; ".join(parts)

    async def next_response(self, timeout: float, preceding: list[Any] | None = None) -> Any:
        """The next response (or batch answer), skipping notifications, server requests and junk
        (the messages skipped are appended to ``preceding`` when given).

        Theory of operation: after a frame a server rejects as it reads it (no JSON, no JSON-RPC
        request), waiting out ``timeout`` for an error that never comes is what made runs against
        servers that drop such frames slow. On an ordered stream (stdio, in-process) whatever the
        server answers to that frame comes before its answer to a request read after it, so once
        ``quiet_period`` has passed in silence a follow-up (``probe_method``, a fresh id) is sent,
        and its answer ends the wait: no response (``_OMIT``). An answer that arrives first is
        returned as usual, and the follow-up's answer is dropped (it stays in the log) when it
        comes, so no later step takes it for its own.

        A wait for the answer to a well-formed request ends on evidence too, not on the delay alone:
        a server starved of CPU can be later than ``timeout``. On an ordered stream, once ``timeout``
        has passed with nothing, one follow-up is sent (the same request, a fresh id) and the wait
        goes on, up to ``timeout`` more, for whichever comes first: the awaited answer (late, but an
        answer: returned as if in time), the follow-up's answer (the server is alive and answered a
        later request first: ``_OMIT``, with ``ended_by`` and ``confirmed_at`` saying so), or nothing
        again (``_OMIT``; the server is wedged, so ``late.wedged`` is set and no later wait of the
        run sends one: a wedged server does not double every wait). None is sent while a new process
        has sent nothing yet (that is the start-up timeout's business), without the probe variables,
        once the connection's input is closed, or on a replayed connection; one that cannot be sent
        leaves the verdict as it was. A late answer that comes after the verdict is still caught:
        its request stays ``outstanding``, so :meth:`resync` gives the next fixture a new session.

        On a new process that has sent nothing yet the wait is the start-up timeout (see
        :meth:`first_wait`); one that still sends nothing is :meth:`not_started` (an ERROR)."""
        began = anyio.current_time()
        timeout = self.first_wait(timeout)
        deadline = began + timeout
        self.junk = []
        self.ended_by = ""
        self.confirmed_at = None
        probe_at = anyio.current_time() + self.options.quiet_period if self._probe_ready() else None
        pid = ""
        while True:
            remaining = deadline - anyio.current_time()
            if probe_at is not None:
                remaining = min(remaining, max(probe_at - anyio.current_time(), 0))
            try:
                seen = await self.next(max(remaining, 0))
            except EOFError as exc:
                junk = self.diagnosis() if self.junk else ""
                problem = f"connection closed while waiting for a response: {exc}"
                raise Abort(FAIL, [f"{problem}; {junk}" if junk else problem]) from None
            if seen is None:
                if probe_at is not None and anyio.current_time() < deadline:
                    probe_at = None
                    pid = await self._send_follow_up()
                    continue
                if not pid and self._confirm_ready():
                    pid = await self._confirm()
                    if pid:  # (one that could not be sent changes nothing: no answer, as before)
                        self.confirmed_at = timeout  # (sent once the timeout had run out)
                        deadline = anyio.current_time() + timeout
                        continue
                elif self.confirmed_at is not None and not self.late.wedged:
                    self.late.wedged = True  # not even the follow-up was answered
                    said = "%s: the follow-up %s was not answered either: no more in this run"
                    _log.info(said, self.fixture, pid)
                if pid:
                    self._swallow.add(pid)
                # the wait ran out: say the timeouts it was given, not the clock (a starved machine
                # wakes a little late, and "no answer in 5.01 s" says nothing more than "in 5 s")
                self.waited = timeout if self.confirmed_at is None else self.confirmed_at + timeout
                if self.starting:
                    raise self.not_started(timeout)
                return _OMIT
            if seen.parsed and pid and isinstance(seen.value, dict) and seen.value.get("id") == pid:
                self.ended_by = f"{self._probe_method()} ({pid})"
                self.waited = anyio.current_time() - began
                return _OMIT  # the follow-up was answered first (see above)
            if seen.parsed and _is_response(seen.value):
                if pid:
                    self._swallow.add(pid)
                return seen.value
            if seen.parsed and preceding is not None:
                preceding.append(seen.value)

    def _ordered(self) -> bool:
        """Whether the connection is an ordered stream a follow-up can be sent on (no replay)."""
        ordered = getattr(self.conn, "transport", "") in ("stdio", "inprocess")
        return ordered and getattr(self.conn, "follow_ups", True)

    def _probe_ready(self) -> bool:
        return self._invalid_sent and self.probe_variables is not None and self._ordered()

    def _confirm_ready(self) -> bool:
        """Whether a wait that ended with nothing is confirmed by a follow-up (see :meth:`next_response`):
        a well-formed request is waiting for its answer on an ordered stream that is neither starting
        nor closed, and no follow-up of the run went unanswered."""
        return (
            bool(self.outstanding)
            and not self._invalid_sent
            and self.probe_variables is not None
            and not self.input_closed
            and not self.starting
            and not self.late.wedged
            and self._ordered()
        )

    async def _confirm(self) -> str:
        """Send the follow-up that confirms a missing answer: its id, or "" when it could not be sent.
        The awaited answer's latency is still counted from its own request (see ``on_latency``)."""
        sent_at = self._sent_at
        try:
            pid = await self._send_follow_up()
        except (Abort, EOFError, OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return ""
        finally:
            self._sent_at = sent_at
        self.late.sent += 1
        return pid

    def _probe_method(self) -> str:
        return str((self.probe_variables or {}).get("probe_method", "ping"))

    async def _send_follow_up(self) -> str:
        """Send a follow-up request with a fresh id (see :meth:`next_response`); its id."""
        variables = self.probe_variables or {}
        self.probe_counter += 1
        pid = f"conformance-follow-up-{self.probe_counter}"
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": pid, "method": self._probe_method()}
        if variables.get("probe_params", _OMIT) is not _OMIT:
            request["params"] = variables["probe_params"]
        await self.send(_dump(request))
        return pid

    async def resync(self, variables: dict[str, Any]) -> bool:
        """After a fixture failed on a session: whether the session may serve the next fixture.

        Theory of operation: a failure may leave answers in flight, which the next fixture must not
        take for its own; restarting the server after every failure is what made runs against
        servers with many failures slow (a new process and handshake each). So a follow-up request
        is sent and waited for (the start-up timeout: a late answer is no verdict here); what comes
        before its answer is logged (the invariants judge it) and dropped. The session is kept when
        the follow-up was answered and every well-formed request sent on it has been answered too
        (nothing is left that could still arrive); otherwise (no answer, a closed connection, a
        request still pending) it is closed and the next fixture gets a new one."""
        self.pending.clear()
        self._swallow.clear()
        if self.streams:
            return False
        self.probe_counter += 1
        pid = f"conformance-resync-{self.probe_counter}"
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": pid, "method": variables["probe_method"]}
        if variables["probe_params"] is not _OMIT:
            request["params"] = variables["probe_params"]
        deadline = anyio.current_time() + self.options.handshake_timeout
        try:
            await self.send(_dump(request))
            while True:
                seen = await self.next(max(deadline - anyio.current_time(), 0))
                if seen is None:
                    return False
                if seen.parsed and isinstance(seen.value, dict) and seen.value.get("id") == pid:
                    # (over HTTP every answer comes with its POST: nothing can still arrive)
                    http = getattr(self.conn, "transport", "") == "http"
                    return _is_response(seen.value) and (http or not self.outstanding)
        except (Abort, EOFError):
            return False

    async def probe(self, variables: dict[str, Any]) -> tuple[Any, list[Any]]:
        """Send a harmless request; return its response and every other response that came first."""
        self.probe_counter += 1
        pid = f"conformance-probe-{self.probe_counter}"
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": pid, "method": variables["probe_method"]}
        params = variables["probe_params"]
        if params is not _OMIT:
            request["params"] = params
        await self.send(_dump(request))
        before: list[Any] = []
        while True:
            answer = await self.next_response(self.options.timeout)
            if answer is _OMIT:
                raise Abort(FAIL, [f"no answer to the follow-up {request['method']} ({pid})"])
            if isinstance(answer, dict) and answer.get("id") == pid:
                return answer, before
            before.append(answer)
