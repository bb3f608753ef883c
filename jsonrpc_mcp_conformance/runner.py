"""Running fixtures against a target, revision by revision, and judging each requirement."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import orjson

from .fixtures import (
    LEGACY_REVISIONS,
    MODERN_REVISIONS,
    TRANSPORT_REVISIONS,
    Fixture,
    Spec,
    expand_revisions,
)
from .match import _short, json_equal, match, select
from .targets import Connection, Target

__all__ = ["Options", "RevisionRun", "Run", "Verdict", "run_conformance"]

PASS, FAIL, SKIP, ERROR = "pass", "fail", "skip", "error"
_OMIT = object()
CLIENT_INFO = {"name": "jsonrpc-mcp-conformance", "version": "1"}


@dataclass
class Verdict:
    id: str
    revision: str
    transport: str
    status: str
    fixture: Fixture
    problems: list[str] = field(default_factory=list)
    expected: str = ""
    actual: str = ""
    note: str = ""
    seconds: float = 0.0
    expected_failure: bool = False  # set by the baseline

    @property
    def key(self) -> str:
        return f"{self.id}@{self.revision}/{self.transport}"


@dataclass
class Options:
    revisions: Sequence[str] | None = None  # None: detect
    timeout: float = 5.0
    quiet_period: float = 0.3  # how long "nothing within T" waits unless the fixture says otherwise
    schema_dir: Path | None = None
    exit_timeout: float = 3.0


@dataclass
class RevisionRun:
    revision: str
    supported: bool
    detail: str = ""


@dataclass
class Run:
    target: str
    transport: str
    verdicts: list[Verdict]
    revisions: list[RevisionRun]
    seconds: float
    stderr_tail: list[str] = field(default_factory=list)

    def failures(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.status in (FAIL, ERROR) and not v.expected_failure]


class Abort(Exception):
    """The fixture cannot go on (its verdict is already decided)."""

    def __init__(self, status: str, problems: list[str], expected: str = "", actual: str = "") -> None:
        super().__init__(problems[0] if problems else status)
        self.status = status
        self.problems = problems
        self.expected = expected
        self.actual = actual


# --------------------------------------------------------------------------------------- frames


@dataclass
class Seen:
    """One frame the server sent, parsed."""

    raw: bytes
    fixture: str
    value: Any = None
    parsed: bool = True


def _is_response(value: Any) -> bool:
    if isinstance(value, list):
        return True
    return isinstance(value, dict) and "method" not in value and ("result" in value or "error" in value)


def _dump(value: Any) -> bytes:
    return orjson.dumps(value)


_LOOSE_ID = re.compile(rb"""["']id["']\s*:\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|"(?:[^"\\]|\\.)*"|'[^']*')""")


def sent_request_ids(line: bytes) -> list[Any]:
    """The ids of the requests in one frame the harness sent: strict JSON first, then Python's
    lenient parser (NaN, Infinity), then, for text that is no JSON at all, every ``"id": <number or
    string>`` in it."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            value = json.loads(line)
        except ValueError:
            ids: list[Any] = []
            for match_ in _LOOSE_ID.finditer(line):
                token = match_.group(1).decode("utf-8", "replace")
                if token.startswith("'"):
                    ids.append(token[1:-1])
                else:
                    with contextlib.suppress(ValueError):
                        ids.append(json.loads(token))
            return ids
    items = value if isinstance(value, list) else [value]
    return [item["id"] for item in items if isinstance(item, dict) and "id" in item and "method" in item]


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
        try:
            await self.conn.send(frame)
        except EOFError as exc:
            raise Abort(FAIL, [f"could not send: {exc}"]) from None

    async def write_raw(self, data: bytes) -> None:
        write = getattr(self.conn, "write_raw", None)
        if write is None:
            raise Abort(SKIP, ["not applicable: this transport carries whole frames only"])
        self._note_sent(data)
        try:
            await write(data)
        except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            raise Abort(FAIL, [f"could not send: {exc}"]) from None

    async def next(self, timeout: float) -> Seen | None:
        if self.pending:  # already in the log
            return self.pending.pop(0)
        frame = await self.conn.receive(timeout)
        if frame is None:
            return None
        seen = Seen(frame, self.fixture)
        try:
            seen.value = orjson.loads(frame)
        except orjson.JSONDecodeError:
            seen.parsed = False
        self.log.append(seen)
        return seen

    async def next_response(self, timeout: float, preceding: list[Any] | None = None) -> Any:
        """The next response (or batch answer), skipping notifications, server requests and junk
        (the messages skipped are appended to ``preceding`` when given)."""
        deadline = anyio.current_time() + timeout
        while True:
            remaining = deadline - anyio.current_time()
            try:
                seen = await self.next(max(remaining, 0))
            except EOFError as exc:
                raise Abort(FAIL, [f"connection closed while waiting for a response: {exc}"]) from None
            if seen is None:
                return _OMIT
            if seen.parsed and _is_response(seen.value):
                return seen.value
            if seen.parsed and preceding is not None:
                preceding.append(seen.value)

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


# ------------------------------------------------------------------------------------- templating

WHY_UNKNOWN = "why_unknown"  # variables[WHY_UNKNOWN]: variable name -> why the target cannot give it


def target_variables(target: Target) -> dict[str, Any]:
    """What the target tells fixtures (an HTTP target: its URL, the tokens it was given, and in
    ``why_unknown`` the reason for each token it was not given)."""
    return dict(getattr(target, "variables", {}))


def why_unknown(variables: dict[str, Any], name: str) -> str:
    reasons = variables.get(WHY_UNKNOWN)
    if isinstance(reasons, dict) and name in reasons:
        return str(reasons[name])
    return f"${{{name}}} is not known for this server"


def substitute(value: Any, variables: dict[str, Any]) -> Any:
    if isinstance(value, str):
        if value.startswith("${") and value.endswith("}") and value.count("${") == 1:
            name = value[2:-1]
            if name not in variables:
                raise Abort(SKIP, [f"not applicable: {why_unknown(variables, name)}"])
            return variables[name]
        if "${" in value:
            for name, sub in variables.items():
                if isinstance(sub, (str, int)) and not isinstance(sub, bool):
                    value = value.replace("${" + name + "}", str(sub))
        return value
    if isinstance(value, list):
        return [v for v in (substitute(v, variables) for v in value) if v is not _OMIT]
    if isinstance(value, dict):
        out = {}
        for key, sub in value.items():
            new = substitute(sub, variables)
            if new is not _OMIT:
                out[str(substitute(key, variables)) if "${" in key else key] = new
        return out
    return value


def base_variables(revision: str) -> dict[str, Any]:
    modern = revision in MODERN_REVISIONS
    meta = (
        {
            "io.modelcontextprotocol/protocolVersion": revision,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
        if modern
        else _OMIT
    )
    return {
        "revision": revision,
        "latest_legacy": LEGACY_REVISIONS[-1],
        "client_info": CLIENT_INFO,
        "meta": meta,
        "probe_method": "server/discover" if modern else "ping",
        "probe_params": {"_meta": meta} if modern else _OMIT,
    }


def initialize_request(revision: str, rid: Any = "conformance-init") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": rid,
        "method": "initialize",
        "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": CLIENT_INFO},
    }


# ------------------------------------------------------------------------------------------ steps


_NOTHING = "nothing"  # Abort.actual when the server did not answer at all


def _actual(answer: Any) -> str:
    return _NOTHING if answer is _OMIT else _short(answer)


def _describe_answer(answer: Any, timeout: float) -> str:
    return _short(answer) if answer is not _OMIT else f"{_NOTHING} within {timeout:g} s"


async def _open_session(channel: Channel, revision: str, variables: dict[str, Any]) -> tuple[bool, str]:
    """Legacy: initialize + initialized. Modern: server/discover. Returns (supported, detail): the
    session is open, and the server does or does not speak ``revision``. Raises :class:`Abort` when
    no session could be opened (no answer in time, an error, a broken connection): the caller must
    then close the connection, whatever it may still send being no answer to any fixture."""
    timeout = channel.options.timeout
    if revision in MODERN_REVISIONS:
        request = {
            "jsonrpc": "2.0",
            "id": "conformance-discover",
            "method": "server/discover",
            "params": {"_meta": variables["meta"]},
        }
        await channel.send(_dump(request))
        answer = await channel.next_response(timeout)
        if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
            raise Abort(
                ERROR,
                [f"server/discover answered {_describe_answer(answer, timeout)}"],
                actual=_actual(answer),
            )
        result = answer["result"]
        variables["capabilities"] = result.get("capabilities", {})
        versions = result.get("supportedVersions", [])
        return revision in versions, f"supportedVersions {versions}"
    await channel.send(_dump(initialize_request(revision)))
    answer = await channel.next_response(timeout)
    if not isinstance(answer, dict) or not isinstance(answer.get("result"), dict):
        raise Abort(
            ERROR, [f"initialize answered {_describe_answer(answer, timeout)}"], actual=_actual(answer)
        )
    result = answer["result"]
    variables["capabilities"] = result.get("capabilities", {})
    variables["server_info"] = result.get("serverInfo", {})
    await channel.send(_dump({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    await channel.probe(variables)  # anything stray the handshake caused is drained (invariants judge it)
    negotiated = result.get("protocolVersion")
    return negotiated == revision, f"initialize answered protocolVersion {negotiated!r}"


def _step_applies(step: dict[str, Any], revision: str, transport: str) -> bool:
    """A step's own ``revisions`` / ``transports`` (when given) name where it is taken."""
    if "revisions" in step and revision not in expand_revisions(step["revisions"]):
        return False
    return "transports" not in step or transport in step["transports"]


async def _run_steps(fixture: Fixture, channel: Channel, variables: dict[str, Any], revision: str) -> None:
    options = channel.options
    transport = getattr(channel.conn, "transport", "")
    last_reply: Any = None  # over HTTP: the answer to the latest send / send_raw step (an HttpReply)
    for step in fixture.steps:
        if not _step_applies(step, revision, transport):
            continue
        timeout = float(step.get("timeout", options.timeout))
        if "send" in step:
            await channel.send(_dump(substitute(step["send"], variables)))
            last_reply = getattr(channel.conn, "last_reply", None)
        elif "send_raw" in step:
            data = str(substitute(step["send_raw"], variables)).encode("utf-8")
            if step.get("newline", True):
                await channel.send(data)
                last_reply = getattr(channel.conn, "last_reply", None)
            else:  # part of a line: only byte-stream transports can say this
                await channel.write_raw(data)
        elif "expect_http" in step:
            if transport != "http":
                continue  # how the answer travelled is checked over HTTP only
            if last_reply is None:
                raise Abort(ERROR, ["expect_http needs an earlier send or send_raw step"])
            pattern = substitute(step["expect_http"], variables)
            _expect_http_subject(last_reply.as_pattern_subject(), pattern, variables)
        elif "handshake" in step:
            request = initialize_request(revision)
            if "capabilities" in step["handshake"]:  # declare client capabilities (fresh fixtures)
                request["params"]["capabilities"] = substitute(step["handshake"]["capabilities"], variables)
            await channel.send(_dump(request))
            answer = await channel.next_response(timeout)
            if not isinstance(answer, dict) or "result" not in answer:
                raise Abort(FAIL, ["the handshake failed"], "an initialize result", _short(answer))
            if step["handshake"].get("initialized", True):
                await channel.send(_dump({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        elif "expect" in step:
            pattern = substitute(step["expect"], variables)
            preceding: list[Any] = []
            answer = await channel.next_response(timeout, preceding)
            if answer is _OMIT:
                raise Abort(FAIL, [f"no response within {timeout:g} s"], _short(pattern, 400), "nothing")
            problems = match(answer, pattern, variables)
            if problems:
                raise Abort(FAIL, problems, _short(pattern, 400), _short(answer, 400))
            if step.get("unjudged"):  # e.g. a legacy answer in a modern run: no invariant judges it
                channel.log[:] = [seen for seen in channel.log if seen.value is not answer]
            if "preceding" in step:
                _expect_preceding(preceding, substitute(step["preceding"], variables), variables)
            _capture(answer, step.get("capture", {}), variables)
        elif "check" in step:  # {"check": "${name}", "match": pattern}: a captured value
            value = substitute(step["check"], variables)
            pattern = substitute(step["match"], variables)
            problems = match(value, pattern, variables)
            if problems:
                raise Abort(FAIL, problems, _short(pattern, 400), _short(value, 400))
        elif "expect_message" in step:
            await _expect_message(step, channel, variables, timeout)
        elif "expect_no_message" in step:
            await _expect_no_message(step["expect_no_message"], channel, variables)
        elif "reconnect" in step:
            if channel.reconnect is None:
                raise Abort(ERROR, ["reconnect is for fresh fixtures only"])
            channel.conn = await channel.reconnect()
        elif "expect_no_response" in step:
            answer, before = await channel.probe(variables)
            if before:
                raise Abort(
                    FAIL,
                    [f"a response arrived where none may: {_short(before[0])}"],
                    "no response (the follow-up request is answered first)",
                    _short(before[0], 400),
                )
        elif "expect_nothing" in step:
            within = float(step["expect_nothing"].get("within", options.quiet_period))
            try:
                seen = await channel.next(within)
            except EOFError:
                seen = None
            if seen is not None:
                raise Abort(
                    FAIL, [f"the server sent something within {within:g} s"], "nothing", _short(seen.raw)
                )
        elif "close_input" in step:
            await channel.conn.close_input()
        elif "expect_exit" in step:
            within = float(step["expect_exit"].get("within", options.exit_timeout))
            if not await channel.conn.wait_exit(within):
                raise Abort(
                    FAIL, [f"still running {within:g} s after its input was closed"], "exit", "running"
                )
        elif "paginate" in step:
            await _paginate(step["paginate"], channel, variables, timeout)
        elif "http" in step:
            await _http_step(step["http"], channel, variables, timeout)
        else:
            raise Abort(ERROR, [f"unknown step {sorted(step)}"])


def _items(seen: Seen) -> list[Any]:
    """The messages of one frame (a batch's elements, or the frame itself)."""
    if not seen.parsed:
        return []
    return list(seen.value) if isinstance(seen.value, list) else [seen.value]


def _expect_preceding(preceding: list[Any], spec: dict[str, Any], variables: dict[str, Any]) -> None:
    """``preceding: {"where": p, "match": q}``: the messages that came before an ``expect`` step's
    response (notifications, server requests), those matching ``where`` (default all), match ``q``."""
    items = [i for frame in preceding for i in (frame if isinstance(frame, list) else [frame])]
    if "where" in spec:
        items = [i for i in items if not match(i, spec["where"], variables)]
    problems = match(items, spec.get("match", {"$any": True}), variables)
    if problems:
        raise Abort(FAIL, problems, _short(spec.get("match"), 400), _short(items, 400))


async def _expect_message(
    step: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    """``expect_message: p`` (with optional ``where`` and ``capture``): the next message of any kind
    that matches ``where`` (default: the next message) must match ``p``; the others are passed over,
    responses among them kept for the steps after (so a response and a notification of one call can
    be awaited in either order)."""
    pattern = substitute(step["expect_message"], variables)
    where = substitute(step.get("where", {"$any": True}), variables)
    deadline = anyio.current_time() + timeout
    passed: list[Seen] = []
    try:
        await _find_message(channel, pattern, where, step, variables, timeout, deadline, passed)
    finally:
        channel.pending[:0] = passed


async def _find_message(
    channel: Channel,
    pattern: Any,
    where: Any,
    step: dict[str, Any],
    variables: dict[str, Any],
    timeout: float,
    deadline: float,
    passed: list[Seen],
) -> None:
    while True:
        try:
            seen = await channel.next(max(deadline - anyio.current_time(), 0))
        except EOFError as exc:
            raise Abort(FAIL, [f"connection closed while waiting for a message: {exc}"]) from None
        if seen is None:
            raise Abort(FAIL, [f"no such message within {timeout:g} s"], _short(where, 400), _NOTHING)
        if seen.parsed and _is_response(seen.value) and match(seen.value, where, variables):
            passed.append(seen)
            continue
        for item in _items(seen):
            if match(item, where, variables):
                continue
            problems = match(item, pattern, variables)
            if problems:
                raise Abort(FAIL, problems, _short(pattern, 400), _short(item, 400))
            _capture(item, step.get("capture", {}), variables)
            return


async def _expect_no_message(spec: dict[str, Any], channel: Channel, variables: dict[str, Any]) -> None:
    """``expect_no_message: {"pattern": p, "within": T}``: no message matching ``p`` arrives before
    the answer to a follow-up request (so none the server wrote before reading it), nor during the
    ``T`` seconds after (default 0); nor does any other response arrive before that answer."""
    pattern = substitute(spec["pattern"], variables)
    channel.probe_counter += 1
    pid = f"conformance-probe-{channel.probe_counter}"
    request: dict[str, Any] = {"jsonrpc": "2.0", "id": pid, "method": variables["probe_method"]}
    if variables["probe_params"] is not _OMIT:
        request["params"] = variables["probe_params"]
    await channel.send(_dump(request))
    timeout = channel.options.timeout
    deadline = anyio.current_time() + timeout
    answered = False
    while True:
        try:
            seen = await channel.next(max(deadline - anyio.current_time(), 0))
        except EOFError:
            seen = None
        if seen is None:
            if not answered:
                raise Abort(FAIL, [f"no answer to the follow-up {request['method']} ({pid})"])
            return
        for item in _items(seen):
            if not match(item, pattern, variables):
                when = "after" if answered else "before the answer to"
                raise Abort(
                    FAIL,
                    [f"a message arrived {when} the follow-up request: {_short(item)}"],
                    f"nothing matching {_short(pattern)}",
                    _short(item, 400),
                )
            if not answered and isinstance(item, dict) and item.get("id") == pid and _is_response(item):
                answered = True
                deadline = anyio.current_time() + float(spec.get("within", 0))
            elif not answered and _is_response(item):  # as after every fixture: no stray response
                problem = f"an extra response arrived: {_short(item)}"
                raise Abort(FAIL, [problem], "nothing", _short(item, 400))


def _expect_http_subject(subject: dict[str, Any], pattern: Any, variables: dict[str, Any]) -> None:
    """An HTTP answer (``HttpReply.as_pattern_subject()``) must match ``pattern``."""
    problems = match(subject, pattern, variables)
    if problems:
        shown = {k: v for k, v in subject.items() if k in ("status", "content_type", "body", "text")}
        if "body" in shown:
            shown.pop("text")
        raise Abort(FAIL, problems, _short(pattern, 400), _short(shown, 400))


async def _paginate(
    spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    seen: list[Any] = []
    same: dict[str, Any] = {}  # "same": result members every page must carry with one value
    cursor: Any = _OMIT
    for page in range(int(spec.get("max_pages", 100))):
        params: dict[str, Any] = {}
        if variables["meta"] is not _OMIT:
            params["_meta"] = variables["meta"]
        if cursor is not _OMIT:
            params["cursor"] = cursor
        rid = f"conformance-page-{page}"
        await channel.send(_dump({"jsonrpc": "2.0", "id": rid, "method": spec["method"], "params": params}))
        answer = await channel.next_response(timeout)
        result = answer.get("result") if isinstance(answer, dict) else None
        if not isinstance(result, dict) or not isinstance(result.get(spec["items"]), list):
            raise Abort(
                FAIL, [f"page {page} is not a {spec['method']} result"], spec["items"], _short(answer)
            )
        seen.extend(result[spec["items"]])
        for member in spec.get("same", ()):
            value = result.get(member, _OMIT)
            if page == 0:
                same[member] = value
            elif not (
                value is same[member]
                or (value is not _OMIT and same[member] is not _OMIT and json_equal(value, same[member]))
            ):
                raise Abort(
                    FAIL,
                    [f"page {page} has another {member} than page 0"],
                    _short(same[member]) if same[member] is not _OMIT else "absent",
                    _short(value) if value is not _OMIT else "absent",
                )
        if "nextCursor" not in result:
            break
        cursor = result["nextCursor"]
    else:
        raise Abort(FAIL, [f"still a nextCursor after {spec.get('max_pages', 100)} pages"])
    key = spec.get("unique")
    if key:
        names = [item.get(key) for item in seen if isinstance(item, dict)]
        duplicates = sorted({str(n) for n in names if names.count(n) > 1})
        if duplicates:
            raise Abort(FAIL, [f"items listed more than once across pages: {duplicates}"])
    if "each" in spec:
        problems = match(seen, {"$each": spec["each"]}, variables)
        if problems:
            raise Abort(FAIL, problems, _short(spec["each"], 400), _short(seen, 400))


async def _http_step(
    spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    """One HTTP exchange with exact method, headers and body; ``expect`` is matched against
    ``{"status", "headers", "content_type", "text", "messages", "body", "responses", "events",
    "event_ids", "ended"}`` (``body``: the JSON body, or the JSON-RPC response of an SSE body; absent
    when empty). Streams are read with bounds (:func:`_stream_step`)."""
    exchange = getattr(channel.conn, "exchange", None)
    if exchange is None:
        raise Abort(SKIP, ["not applicable: an HTTP exchange needs the http transport"])
    if spec.get("requires_session") and getattr(channel.conn, "session_id", None) is None:
        raise Abort(SKIP, ["not applicable: the server issued no session id"])
    method = str(spec.get("method", "POST"))
    message: Any = None
    body: bytes | None = None
    if "body" in spec:
        message = substitute(spec["body"], variables)
        body = _dump(message)
    elif "body_raw" in spec:
        body = str(substitute(spec["body_raw"], variables)).encode("utf-8")
    headers: dict[str, str] = channel.conn.default_headers(message)  # type: ignore[attr-defined]
    if body is None:
        headers.pop("content-type", None)
    for name, value in substitute(spec.get("headers", {}), variables).items():
        headers.pop(name.lower(), None)
        if value is not None:
            headers[name.lower()] = _header_value(value)
    if body is not None:
        channel._note_sent(body + b"\n")
    reply = await _stream_step(spec, channel, method, headers, body, timeout, variables)
    for url in _step_urls(spec, variables) if reply is None else []:
        try:
            reply = await exchange(method, headers, body, timeout, **({"url": url} if url else {}))
        except (OSError, TimeoutError, EOFError) as exc:
            raise Abort(FAIL, [f"{method} {url or ''} failed: {exc}".replace("  ", " ")]) from None
        if 200 <= reply.status < 300:
            break
    assert reply is not None
    channel.conn.learn(message, reply)  # type: ignore[attr-defined]
    if "url" not in spec:  # other URLs (metadata documents) answer no JSON-RPC the invariants judge
        for item in reply.messages:
            channel.log.append(Seen(_dump(item), channel.fixture, item))
    subject = reply.as_pattern_subject()
    if "skip_if" in spec and not match(subject, substitute(spec["skip_if"], variables), variables):
        reason = spec.get("skip_reason", f"the server answered {reply.status}")
        raise Abort(SKIP, [f"not applicable: {reason}"])
    _expect_http_subject(subject, substitute(spec.get("expect", {}), variables), variables)
    _capture(subject, spec.get("capture", {}), variables)
    for name, path in spec.get("capture_optional", {}).items():
        with contextlib.suppress(KeyError):
            variables[name] = select(subject, path)


def _header_value(value: Any) -> str:
    """An ``http`` step's header value: text, or ``{"$base64": text}`` sent as
    ``=?base64?<base64 of its UTF-8>?=`` (the 2026-07-28 header value encoding)."""
    if isinstance(value, dict) and set(value) == {"$base64"}:
        encoded = base64.b64encode(str(value["$base64"]).encode("utf-8")).decode("ascii")
        return f"=?base64?{encoded}?="
    return str(value)


async def _stream_step(
    spec: dict[str, Any],
    channel: Channel,
    method: str,
    headers: dict[str, str],
    body: bytes | None,
    timeout: float,
    variables: dict[str, Any],
) -> Any:
    """The answer of an ``http`` step that reads a stream (``stream``, ``keep`` or ``read``), or None.

    ``stream: {"events": N, "until": pattern, "within": T}`` reads the body until N events, an event
    matching the pattern, T seconds (default: the step's timeout) or its end, whichever comes first;
    ``keep: name`` leaves the response open under that name and ``read: name`` reads on from it
    instead of sending a request. The answer holds what was read by this step."""
    if "stream" not in spec and "keep" not in spec and "read" not in spec:
        return None
    bounds = substitute(spec.get("stream", {}), variables)
    if "read" in spec:
        name = str(spec["read"])
        if name not in channel.streams:
            raise Abort(ERROR, [f"no response was kept as {name!r}"])
        stream = channel.streams[name]
    else:
        name = str(spec.get("keep", f"#{len(channel.streams)}"))
        try:
            stream = await channel.conn.open_exchange(method, headers, body, timeout)  # type: ignore[attr-defined]
        except (OSError, TimeoutError, EOFError) as exc:
            raise Abort(FAIL, [f"{method} failed: {exc}"]) from None
        channel.streams[name] = stream  # closed at the end of the fixture at the latest
    until = bounds.get("until")
    try:
        reply = await stream.read(
            events=bounds.get("events"),
            until=None if until is None else (lambda event: not match(event, until, variables)),
            within=float(bounds.get("within", timeout)),
        )
    except (OSError, EOFError) as exc:
        raise Abort(FAIL, [f"{method} failed: {exc}"]) from None
    if "keep" not in spec and "read" not in spec:
        await channel.streams.pop(name).aclose()
    return reply


def _capture(subject: Any, captures: dict[str, Any], variables: dict[str, Any]) -> None:
    """Store values of an answer for later steps, in order. A capture is a dotted path (``*`` takes
    every element), or ``{"path", "from", "where", "take", "reason"}``: the value at ``path`` (default
    the whole) of the answer or of the variable ``from``; with ``where``, the first element of that
    array (or entry ``{"key", "value"}`` of that object) matching the pattern; then ``take`` of it.
    When nothing is found the fixture is skipped, with ``reason`` when given."""
    for name, how in captures.items():
        spec = {"path": how} if isinstance(how, str) else dict(how)
        path = str(spec.get("path", ""))
        found: Any = _OMIT
        with contextlib.suppress(KeyError):
            found = select(variables[spec["from"]] if "from" in spec else subject, path)
            if "where" in spec:
                items = found if isinstance(found, list) else []
                if isinstance(found, dict):
                    items = [{"key": key, "value": value} for key, value in found.items()]
                pattern = substitute(spec["where"], variables)
                chosen = [item for item in items if not match(item, pattern, variables)]
                found = chosen[0] if chosen else _OMIT
            if found is not _OMIT and "take" in spec:
                found = select(found, str(spec["take"]))
        if found is not _OMIT and spec.get("tamper"):
            found = _tamper(found)
        if found is _OMIT:
            reason = spec.get("reason") or f"the server's answer has no {path}"
            raise Abort(SKIP, [f"not applicable: {reason}"])
        variables[name] = found


_NEXT = {"0": "1", "9": "0", "z": "a", "Z": "A"}


def _tamper(value: Any) -> Any:
    """A string changed in one character near its middle (a digit or letter becomes the next one, so
    an encoded value stays well-formed); the value itself when no character can be changed."""
    if not isinstance(value, str):
        return value
    for index in sorted(range(len(value)), key=lambda i: abs(i - len(value) // 2)):
        char = value[index]
        if char.isascii() and char.isalnum():
            new = _NEXT.get(char, chr(ord(char) + 1))
            return value[:index] + new + value[index + 1 :]
    return value


def _known(value: str, variables: dict[str, Any]) -> str | None:
    """``value`` with its variables substituted, or None when one of them is not known."""
    try:
        text = str(substitute(value, variables))
    except Abort:
        return None
    return None if "${" in text else text


def _step_urls(spec: dict[str, Any], variables: dict[str, Any]) -> list[str | None]:
    """The URLs an ``http`` step requests, in order, until one answers 2xx (``[None]``: the endpoint).

    ``url`` is a URL (absolute, or relative to the endpoint) or a list of alternatives: the first
    whose variables are all known is taken; an alternative that is itself a list is a chain of URLs
    tried in turn until one answers 2xx (unknown ones left out), as clients look for well-known
    documents."""
    chosen = spec.get("url")
    if chosen is None:
        return [None]
    for alternative in chosen if isinstance(chosen, list) else [chosen]:
        if isinstance(alternative, list):
            urls = [u for u in (_known(str(a), variables) for a in alternative) if u is not None]
            if urls:
                return list(urls)
        else:
            url = _known(str(alternative), variables)
            if url is not None:
                return [url]
    raise Abort(SKIP, [f"not applicable: no URL of {chosen} is known"])


# ------------------------------------------------------------------------------------- invariants


def _messages(log: list[Seen]) -> list[tuple[Seen, Any]]:
    out = []
    for seen in log:
        if seen.parsed:
            for item in seen.value if isinstance(seen.value, list) else [seen.value]:
                out.append((seen, item))
    return out


def judge_invariant(
    name: str,
    log: list[Seen],
    sent_ids: list[Any],
    capabilities: dict[str, Any],
    schema: Any,
    sent_methods: dict[str, set[str]] | None = None,
) -> list[str]:
    problems: list[str] = []
    if name == "stdout-json-lines":
        for seen in log:
            if not seen.parsed:
                problems.append(f"not JSON (during {seen.fixture or 'setup'}): {seen.raw[:120]!r}")
    elif name == "jsonrpc-version":
        for seen, item in _messages(log):
            if not isinstance(item, dict) or item.get("jsonrpc") != "2.0":
                problems.append(f"not a JSON-RPC 2.0 message (during {seen.fixture}): {_short(item)}")
    elif name == "error-shape":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "error" in item:
                error = item["error"]
                ok = isinstance(error, dict)
                ok = ok and type(error.get("code")) is int and isinstance(error.get("message"), str)
                if not ok:
                    problems.append(f"malformed error object (during {seen.fixture}): {_short(item)}")
    elif name == "solicited-responses":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" not in item and "result" in item:
                rid = item.get("id", _OMIT)
                if rid is _OMIT or rid is None or rid not in sent_ids:
                    problems.append(
                        f"a result for no request we sent (during {seen.fixture}): {_short(item)}"
                    )
    elif name == "no-server-requests":
        for seen, item in _messages(log):
            if isinstance(item, dict) and "method" in item and "id" in item:
                problems.append(f"the server sent a request (during {seen.fixture}): {_short(item)}")
    elif name == "list-changed-declared":
        for seen, item in _messages(log):
            method = item.get("method", "") if isinstance(item, dict) else ""
            for cap in ("tools", "prompts", "resources"):
                declared = capabilities.get(cap)
                if method == f"notifications/{cap}/list_changed" and not (
                    isinstance(declared, dict) and declared.get("listChanged") is True
                ):
                    problems.append(f"{method} without {cap}.listChanged declared (during {seen.fixture})")
    elif name == "logging-declared":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and item.get("method") == "notifications/message"
                and "logging" not in capabilities
            ):
                problems.append(
                    f"notifications/message without the logging capability (during {seen.fixture})"
                )
    elif name == "no-notifications-message":
        for seen, item in _messages(log):
            if isinstance(item, dict) and item.get("method") == "notifications/message":
                problems.append(
                    f"notifications/message for a request without logLevel (during {seen.fixture})"
                )
    elif name == "result-type":
        for seen, item in _messages(log):
            if (
                isinstance(item, dict)
                and isinstance(item.get("result"), dict)
                and "resultType" not in item["result"]
            ):
                problems.append(f"a result without resultType (during {seen.fixture}): {_short(item)}")
    elif name == "input-required-methods":
        allowed = {"tools/call", "prompts/get", "resources/read"}
        for seen, item in _messages(log):
            result = item.get("result") if isinstance(item, dict) else None
            if isinstance(result, dict) and result.get("resultType") == "input_required":
                methods = (sent_methods or {}).get(_dump(item.get("id")).decode(), set())
                if not methods or not methods <= allowed:
                    problems.append(
                        f"input_required answers {'/'.join(sorted(methods)) or 'no request we sent'}"
                        f" (during {seen.fixture}): {_short(item)}"
                    )
    elif name == "no-task-results":
        for seen, item in _messages(log):
            result = item.get("result") if isinstance(item, dict) else None
            if isinstance(result, dict) and result.get("resultType") == "task":
                problems.append(f"a task result, the tasks extension never declared (during {seen.fixture})")
    elif name == "schema-valid":
        if schema is None:
            return ["skip"]
        from .match import _schema_errors

        for seen, item in _messages(log):
            errors = _schema_errors(item, schema)
            if errors:
                problems.append(f"{_short(item)} (during {seen.fixture}): {errors[0]}")
    else:
        problems.append(f"unknown invariant {name}")
    return problems[:5]


def load_message_schema(schema_dir: Path, revision: str) -> Any:
    import json

    path = schema_dir / revision / "schema.json"
    if not path.exists():
        return None
    document = json.loads(path.read_text(encoding="utf-8"))
    defs_key = "$defs" if "$defs" in document else "definitions"
    schema = dict(document)
    schema["$ref"] = f"#/{defs_key}/JSONRPCMessage"
    error = document[defs_key].get("JSONRPCError")
    if isinstance(error, dict) and "id" in error.get("required", ()):
        # up to 2025-06-18 an error response must have a string or integer id, so an unreadable
        # request has no schema-valid answer: NOTES §2 accepts a null or missing id there
        lenient = dict(error)
        lenient["required"] = [name for name in error["required"] if name != "id"]
        lenient["properties"] = {
            **error["properties"],
            "id": {"anyOf": [error["properties"]["id"], {"type": "null"}]},
        }
        schema[defs_key] = {**document[defs_key], "JSONRPCError": lenient}
    return schema


# ------------------------------------------------------------------------------------------ runner


async def _run_fixture(
    fixture: Fixture,
    channel: Channel,
    variables: dict[str, Any],
    revision: str,
    transport: str,
    session: bool,
) -> Verdict:
    started = time.perf_counter()
    verdict = Verdict(fixture.id, revision, transport, PASS, fixture)
    unknown = [c[1:] for c in fixture.requires if c.startswith("$") and c[1:] not in variables]
    if unknown:
        verdict.status = SKIP
        verdict.note = f"not applicable: {why_unknown(variables, unknown[0])}"
        return verdict
    missing = [
        c
        for c in fixture.requires
        if not c.startswith(("!", "$")) and c not in variables.get("capabilities", {})
    ]
    present = [
        c[1:] for c in fixture.requires if c.startswith("!") and c[1:] in variables.get("capabilities", {})
    ]
    if missing or present:
        verdict.status = SKIP
        verdict.note = (
            f"not applicable: the server does not declare {', '.join(missing)}"
            if missing
            else f"not applicable: the server declares {', '.join(present)}"
        )
        return verdict
    channel.fixture = fixture.id
    local = dict(variables)
    try:
        try:
            await _run_steps(fixture, channel, local, revision)
        finally:
            await channel.close_streams()
        if session:  # nothing else may be pending for this fixture
            _, before = await channel.probe(local)
            if before:
                raise Abort(
                    FAIL, [f"an extra response arrived: {_short(before[0])}"], "nothing", _short(before[0])
                )
    except Abort as abort:
        verdict.status = abort.status
        verdict.problems = abort.problems
        verdict.expected = abort.expected
        verdict.actual = abort.actual
        if abort.status == SKIP:
            verdict.note = abort.problems[0] if abort.problems else ""
            verdict.problems = []
    verdict.seconds = time.perf_counter() - started
    return verdict


async def _run_revision(
    target: Target,
    fixtures: list[Fixture],
    revision: str,
    options: Options,
    explicit: bool,
) -> tuple[RevisionRun, list[Verdict]]:
    """Theory of operation: the session fixtures share one session (connection + handshake). A
    fixture that fails or errs may leave requests in flight, so its session is closed and the next
    fixture opens a new one. A session that cannot be opened (the handshake timed out, was refused,
    the connection broke) is closed at once and never used: a late answer to its handshake must not
    be taken for a fixture's response. The fixture that needed it is an ERROR with the reason; after
    two failed openings in a row the remaining session fixtures are ERRORs without further attempts
    (a server that never answers would otherwise cost a timeout per fixture). Fresh fixtures each get
    a connection of their own; invariants are judged last over every frame of the revision."""
    transport = target.transport
    log: list[Seen] = []
    sent: list[Any] = []
    methods: dict[str, set[str]] = {}
    verdicts: list[Verdict] = []
    applicable = [f for f in fixtures if f.applies(revision, transport)]
    session_fixtures = [f for f in applicable if f.connection == "session" and not f.invariant]
    fresh_fixtures = [f for f in applicable if f.connection == "fresh" and not f.invariant]
    invariants = [f for f in applicable if f.invariant]
    info = RevisionRun(revision, False)
    variables = base_variables(revision)
    variables.update(target_variables(target))
    channel: Channel | None = None
    session_stack: contextlib.AsyncExitStack | None = None
    open_failures: list[str] = []

    async def close_session() -> None:
        nonlocal channel, session_stack
        if channel is not None:
            sent.extend(channel.sent_ids)
            for rid, names in channel.sent_methods.items():
                methods.setdefault(rid, set()).update(names)
            channel = None
        if session_stack is not None:
            stack, session_stack = session_stack, None
            await stack.aclose()

    async def open_session() -> Channel:
        """A new session, or :class:`Abort` (ERROR) once its connection is closed again."""
        nonlocal channel, session_stack
        session_stack = contextlib.AsyncExitStack()
        conn = await session_stack.enter_async_context(target.connect())
        channel = Channel(conn, log, options)
        channel.fixture = "(session setup)"
        try:
            supported, detail = await _open_session(channel, revision, variables)
        except Abort as abort:
            reason = "; ".join(abort.problems) or abort.status
            if not info.detail:
                info.detail = reason
            open_failures.append(reason)
            await close_session()
            raise Abort(ERROR, [f"the session could not be opened: {reason}"], actual=abort.actual) from None
        open_failures.clear()
        if not info.detail or (supported and not info.supported):
            info.detail = detail
        info.supported = info.supported or supported
        return channel

    try:
        try:
            await open_session()
        except Abort as abort:
            if abort.actual == _NOTHING:  # a handshake lost to load says nothing of the revision: again
                with contextlib.suppress(Abort):
                    await open_session()
        if not info.supported and not explicit:
            return info, []
        for fixture in session_fixtures:
            if channel is None:
                if len(open_failures) >= 2:
                    problem = f"no session could be opened (last reason: {open_failures[-1]})"
                    verdicts.append(Verdict(fixture.id, revision, transport, ERROR, fixture, [problem]))
                    continue
                try:
                    await open_session()
                except Abort as abort:
                    verdicts.append(Verdict(fixture.id, revision, transport, ERROR, fixture, abort.problems))
                    continue
            assert channel is not None
            verdict = await _run_fixture(fixture, channel, variables, revision, transport, True)
            verdicts.append(verdict)
            if verdict.status in (FAIL, ERROR):
                # whatever the failure left in flight must not leak into the next fixture: new session
                await close_session()
    finally:
        await close_session()
    for fixture in fresh_fixtures:
        async with contextlib.AsyncExitStack() as stack:
            conn = await stack.enter_async_context(target.connect())
            fresh = Channel(conn, log, options)

            async def reconnect(stack: contextlib.AsyncExitStack = stack) -> Connection:
                return await stack.enter_async_context(target.connect())

            fresh.reconnect = reconnect  # a ``reconnect`` step: a new connection (stdio: a new process)
            variables_fresh = base_variables(revision)
            variables_fresh.update(target_variables(target))
            variables_fresh["capabilities"] = variables.get("capabilities", {})
            verdicts.append(await _run_fixture(fixture, fresh, variables_fresh, revision, transport, False))
            sent.extend(fresh.sent_ids)
            for rid, names in fresh.sent_methods.items():
                methods.setdefault(rid, set()).update(names)
    schema = load_message_schema(options.schema_dir, revision) if options.schema_dir else None
    for fixture in invariants:
        problems = judge_invariant(
            fixture.invariant or "", log, sent, variables.get("capabilities", {}), schema, methods
        )
        if problems == ["skip"]:
            verdicts.append(
                Verdict(fixture.id, revision, transport, SKIP, fixture, note="needs --schema-dir")
            )
        elif problems:
            verdicts.append(
                Verdict(fixture.id, revision, transport, FAIL, fixture, problems, fixture.title, problems[0])
            )
        else:
            verdicts.append(Verdict(fixture.id, revision, transport, PASS, fixture))
    return info, verdicts


async def run_conformance(target: Target, spec: Spec, fixtures: list[Fixture], options: Options) -> Run:
    """Run ``fixtures`` against ``target`` for each revision (given or detected)."""
    started = time.perf_counter()
    explicit = options.revisions is not None
    every = LEGACY_REVISIONS + MODERN_REVISIONS
    revisions = list(options.revisions) if options.revisions is not None else list(every)
    results: dict[str, tuple[RevisionRun, list[Verdict]]] = {}

    async def one(revision: str) -> None:
        if revision not in TRANSPORT_REVISIONS.get(target.transport, every):
            first = TRANSPORT_REVISIONS[target.transport][0]
            detail = f"not checked: {target.transport} is a transport of {first} and later"
            results[revision] = (RevisionRun(revision, False, detail), [])
            return
        results[revision] = await _run_revision(target, fixtures, revision, options, explicit)

    async with anyio.create_task_group() as tg:
        for revision in revisions:
            tg.start_soon(one, revision)
    verdicts: list[Verdict] = []
    infos: list[RevisionRun] = []
    for revision in revisions:
        info, vs = results[revision]
        infos.append(info)
        verdicts.extend(vs)
    return Run(
        target=target.description,
        transport=target.transport,
        verdicts=verdicts,
        revisions=infos,
        seconds=time.perf_counter() - started,
        stderr_tail=list(getattr(target, "stderr_tail", [])),
    )
