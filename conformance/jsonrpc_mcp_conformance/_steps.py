"""The steps of a fixture (send, expect, http, paginate, ...) and the captures between them.

Each step either passes silently or raises :class:`~jsonrpc_mcp_conformance._channel.Abort` with the
fixture's verdict (FAIL, SKIP with the reason it does not apply, ERROR for a fixture that cannot be
run). Every wait is bounded by the step's ``timeout`` (default: ``Options.timeout``).
"""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import anyio

from jsonrpc_mcp import wire

from ._channel import (
    _NOTHING,
    _OMIT,
    ERROR,
    FAIL,
    SKIP,
    Abort,
    Channel,
    Seen,
    _dump,
    _is_response,
)
from ._frames import _well_formed
from ._variables import base_variables, initialize_request, substitute
from .fixtures import MODERN_REVISIONS, Fixture, expand_revisions
from .match import _short, json_equal, match, select


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
                await channel.send(_dump({"jsonrpc": "2.0", "method": wire.INITIALIZED}))
        elif "expect" in step:
            pattern = substitute(step["expect"], variables)
            preceding: list[Any] = []
            answer = await channel.next_response(timeout, preceding)
            if answer is _OMIT and step.get("optional"):  # "no answer, or one matching": either will do
                continue
            if answer is _OMIT:
                raise Abort(FAIL, [channel.no_answer()], _short(pattern, 400), "nothing")
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
            channel.use(await channel.reconnect())
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
            await channel.close_input()
        elif "expect_exit" in step:
            within = float(step["expect_exit"].get("within", options.exit_timeout))
            if not await channel.conn.wait_exit(within):
                raise Abort(
                    FAIL, [f"still running {within:g} s after its input was closed"], "exit", "running"
                )
        elif "paginate" in step:  # walks every page; ``capture`` reads ``{"result": {items: all}}``
            items = await _paginate(step["paginate"], channel, variables, timeout)
            _capture({"result": {step["paginate"]["items"]: items}}, step.get("capture", {}), variables)
        elif "http" in step:
            await _http_step(step["http"], channel, variables, timeout)
        elif "poll" in step:
            await _poll(step["poll"], channel, variables, timeout)
            last_reply = getattr(channel.conn, "last_reply", None)
        else:
            raise Abort(ERROR, [f"unknown step {sorted(step)}"])


async def _poll(spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float) -> None:
    """``poll``: send ``send`` (its id suffixed ``-1``, ``-2``...) every ``interval`` seconds until an
    answer matches ``until`` (then ``expect`` must match it too, and ``capture`` reads it), at most
    ``within`` seconds; how a task's status is waited for."""
    request = substitute(spec["send"], variables)
    until = substitute(spec["until"], variables)
    within = float(spec.get("within", 10.0))
    interval = float(spec.get("interval", 0.1))
    answer: Any = _OMIT
    attempt = 0
    with anyio.move_on_after(within):
        while True:
            attempt += 1
            await channel.send(_dump({**request, "id": f"{request.get('id')}-{attempt}"}))
            answer = await channel.next_response(timeout, [])
            if answer is _OMIT:
                raise Abort(FAIL, [channel.no_answer()], _short(request, 400), "nothing")
            if not match(answer, until, variables):
                break
            await anyio.sleep(interval)
    if answer is _OMIT or match(answer, until, variables):
        raise Abort(FAIL, [f"not reached within {within:g} s"], _short(until, 400), _short(answer, 400))
    pattern = substitute(spec.get("expect", {}), variables)
    problems = match(answer, pattern, variables)
    if problems:
        raise Abort(FAIL, problems, _short(pattern, 400), _short(answer, 400))
    _capture(answer, spec.get("capture", {}), variables)


async def advertised_versions(channel: Channel) -> list[Any]:
    """The ``supportedVersions`` the server lists in its ``server/discover`` answer ([] when it has
    none). Asked in a legacy session whose ``initialize`` was answered with another version than the
    one requested: a revision the server lists is one it supports, so answering it with another
    version fails version negotiation (it is not "not supported"). The answer is no fixture's: no
    invariant judges it."""
    request = {
        "jsonrpc": "2.0",
        "id": "conformance-discover-versions",
        "method": wire.DISCOVER,
        "params": {"_meta": base_variables(MODERN_REVISIONS[-1])["meta"]},
    }
    await channel.send(_dump(request))
    answer = await channel.next_response(channel.options.timeout)
    channel.log[:] = [seen for seen in channel.log if seen.value is not answer]
    result = answer.get("result") if isinstance(answer, dict) else None
    versions = result.get("supportedVersions") if isinstance(result, dict) else None
    return list(versions) if isinstance(versions, list) else []


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
    timeout = channel.first_wait(timeout)  # a new process may still be starting
    deadline = anyio.current_time() + timeout
    passed: list[Seen] = []
    try:
        await _find_message(channel, pattern, where, step, variables, timeout, deadline, passed)
    except Abort as abort:
        if "setup" in step and abort.status == FAIL and abort.actual:  # (not a closed connection)
            raise Abort(SKIP, [f"not applicable: {step['setup']} ({abort.problems[0]})"]) from None
        raise
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
            if channel.starting:
                raise channel.not_started(timeout)
            waited = timeout if getattr(channel.conn, "transport", "") != "http" else 0
            said = f"no such message within {waited:g} s" if waited else "no such message in the answer"
            raise Abort(FAIL, [said], _short(where, 400), _NOTHING)
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
    timeout = channel.first_wait(channel.options.timeout)  # a new process may still be starting
    deadline = anyio.current_time() + timeout
    answered = False
    while True:
        try:
            seen = await channel.next(max(deadline - anyio.current_time(), 0))
        except EOFError:
            seen = None
        if seen is None:
            if not answered and channel.starting:
                raise channel.not_started(timeout)
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
) -> list[Any]:
    """Follow ``nextCursor`` from the first page to the last (at most ``max_pages``); the items of
    every page, in order."""
    seen: list[Any] = []
    same: dict[str, Any] = {}  # "same": result members every page must carry with one value
    cursor: Any = _OMIT
    for page in range(int(spec.get("max_pages", 100))):
        params: dict[str, Any] = dict(substitute(spec.get("params", {}), variables))  # e.g. a uri
        if variables["meta"] is not _OMIT:  # "meta": another 2026-07-28 envelope (declaring an extension)
            params["_meta"] = substitute(spec["meta"], variables) if "meta" in spec else variables["meta"]
        if cursor is not _OMIT:
            params["cursor"] = cursor
        rid = f"conformance-page-{page}"
        await channel.send(_dump({"jsonrpc": "2.0", "id": rid, "method": spec["method"], "params": params}))
        answer = await channel.next_response(timeout)
        result = answer.get("result") if isinstance(answer, dict) else None
        if answer is _OMIT:
            raise Abort(FAIL, [f"page {page}: {channel.no_answer()}"], spec["items"], _NOTHING)
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
    return seen


async def _http_step(
    spec: dict[str, Any], channel: Channel, variables: dict[str, Any], timeout: float
) -> None:
    """One HTTP exchange with exact method, headers and body; ``expect`` is matched against
    ``{"status", "headers", "content_type", "text", "messages", "body", "responses", "events",
    "event_ids", "ended"}`` (``body``: the JSON body, or the JSON-RPC response of an SSE body; absent
    when empty). Streams are read with bounds (:func:`_stream_step`). With ``setup: reason`` a 2xx
    answer that does not match ``expect`` skips the fixture with that reason (its setup did not
    happen, e.g. a server request sent on another stream) instead of failing it."""
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
            channel.note_exchange(getattr(channel.conn, "last_request_head", ""), body)
            raise Abort(FAIL, [f"{method} {url or ''} failed: {exc}".replace("  ", " ")]) from None
        channel.note_exchange(getattr(channel.conn, "last_request_head", ""), body, reply)
        if 200 <= reply.status < 300:
            break
    assert reply is not None
    channel.conn.learn(message, reply)  # type: ignore[attr-defined]
    if "url" not in spec:  # other URLs (metadata documents) answer no JSON-RPC the invariants judge
        unreadable = body is not None and not _well_formed(body)
        for item in reply.messages:
            channel.log.append(Seen(_dump(item), channel.fixture, item, after_unreadable=unreadable))
    subject = reply.as_pattern_subject()
    if "skip_if" in spec and not match(subject, substitute(spec["skip_if"], variables), variables):
        reason = spec.get("skip_reason", f"the server answered {reply.status}")
        raise Abort(SKIP, [f"not applicable: {reason}"])
    try:
        _expect_http_subject(subject, substitute(spec.get("expect", {}), variables), variables)
    except Abort as abort:
        if "setup" in spec and 200 <= reply.status < 300:  # answered, but not with what the fixture needs
            raise Abort(SKIP, [f"not applicable: {spec['setup']} ({'; '.join(abort.problems)})"]) from None
        raise
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
            channel.note_exchange(getattr(channel.conn, "last_request_head", ""), body)
            raise Abort(FAIL, [f"{method} failed: {exc}"]) from None
        channel.streams[name] = stream  # closed at the end of the fixture at the latest
    until = bounds.get("until")
    read_on = str(spec["read"]) if "read" in spec else ""
    head = "" if read_on else getattr(channel.conn, "last_request_head", "")
    try:
        reply = await stream.read(
            events=bounds.get("events"),
            until=None if until is None else (lambda event: not match(event, until, variables)),
            within=float(bounds.get("within", timeout)),
        )
    except (OSError, EOFError) as exc:
        channel.note_exchange(head, body, read_on=read_on)
        raise Abort(FAIL, [f"{method} failed: {exc}"]) from None
    channel.note_exchange(head, body, reply, read_on=read_on)
    if "keep" not in spec and "read" not in spec:
        await channel.streams.pop(name).aclose()
    return reply


def _capture(subject: Any, captures: dict[str, Any], variables: dict[str, Any]) -> None:
    """Store values of an answer for later steps, in order. A capture is a dotted path (``*`` takes
    every element), or ``{"path", "from", "where", "prefer", "take", "arguments", "trim", "reason"}``:
    the value at ``path`` (default the whole) of the answer or of the variable ``from``; with
    ``where``, the first element of that array (or entry ``{"key", "value"}`` of that object) matching
    the pattern (or, first, one matching a ``prefer`` pattern, tried in order); then ``take`` of it;
    with ``arguments`` (an object), that value is an ``inputSchema`` and the capture is a call's
    arguments: those given, and the simplest valid value of every other required property (see
    :func:`valid_arguments`); then, with ``trim``, that string without that ending. When nothing is
    found the fixture is skipped, with ``reason`` when given."""
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
                chosen: list[Any] = []
                for pattern in [*spec.get("prefer", ()), spec["where"]]:  # the first that finds one
                    pattern = substitute(pattern, variables)
                    chosen = chosen or [item for item in items if not match(item, pattern, variables)]
                found = chosen[0] if chosen else _OMIT
            if found is not _OMIT and "take" in spec:
                found = select(found, str(spec["take"]))
            if found is not _OMIT and "arguments" in spec:  # a call of the tool whose inputSchema it is
                found = valid_arguments(found, substitute(spec["arguments"], variables))
        if "trim" in spec:  # the value without that ending (not found when it lacks it)
            ending = str(spec["trim"])
            found = found[: -len(ending)] if isinstance(found, str) and found.endswith(ending) else _OMIT
        if found is not _OMIT and spec.get("tamper"):
            found = _tamper(found)
        if found is _OMIT:
            reason = spec.get("reason") or f"the server's answer has no {path}"
            raise Abort(SKIP, [f"not applicable: {reason}"])
        variables[name] = found


def valid_arguments(schema: Any, given: dict[str, Any]) -> Any:
    """Arguments for a tool whose ``inputSchema`` is ``schema``: ``given`` (a value under test, say
    one out of its bounds), and for every other required property the simplest value its schema
    allows (so only the value under test can make the call invalid); ``_OMIT`` when one cannot be
    made up with certainty (a pattern, a format, a nested object with required members...)."""
    if not isinstance(schema, dict) or not isinstance(given, dict):
        return _OMIT
    found = schema.get("properties")
    properties: dict[str, Any] = found if isinstance(found, dict) else {}
    arguments = dict(given)
    for name in schema.get("required", []) if isinstance(schema.get("required"), list) else []:
        if name in arguments:
            continue
        value = _simplest(properties.get(name))
        if value is _OMIT:
            return _OMIT
        arguments[name] = value
    return arguments


def _simplest(schema: Any) -> Any:
    """The simplest value ``schema`` (one property's) certainly accepts, or ``_OMIT``."""
    if not isinstance(schema, dict) or any(k in schema for k in ("$ref", "pattern", "format", "not")):
        return _OMIT
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    kind = schema.get("type")
    if kind == "string":
        low, high = schema.get("minLength", 0), schema.get("maxLength", 1)
        return "a" * low if isinstance(low, int) and isinstance(high, int) and low <= high else _OMIT
    if kind in ("integer", "number"):
        return _number(schema, kind == "integer")
    if kind == "boolean":
        return False
    if kind == "array" and not schema.get("minItems"):
        return []
    if kind == "object" and not schema.get("required") and not schema.get("minProperties"):
        return {}
    return _OMIT


def _number(schema: dict[str, Any], integer: bool) -> Any:
    """A number within a property's bounds (the lowest allowed, else 0 moved into range)."""
    bounds = [schema.get(k) for k in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum")]
    if any(b is not None and (isinstance(b, bool) or not isinstance(b, (int, float))) for b in bounds):
        return _OMIT
    low, low_open, high, high_open = bounds
    value: float = 0
    if low is not None or low_open is not None:
        value = max(x for x in (low, None if low_open is None else low_open + 1) if x is not None)
    elif high is not None or high_open is not None:  # only an upper bound: 0, or below the bound
        value = min(x for x in (0, high, None if high_open is None else high_open - 1) if x is not None)
    if (high is not None and value > high) or (high_open is not None and value >= high_open):
        return _OMIT
    if "multipleOf" in schema or (integer and not float(value).is_integer()):
        return _OMIT
    return int(value) if integer else value


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
