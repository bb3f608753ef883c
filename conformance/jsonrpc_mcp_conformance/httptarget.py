"""The HTTP target: a server reached over Streamable HTTP at a URL.

Each frame is POSTed on a connection of its own with the headers a handshake client sends:
``Accept`` (JSON and SSE), the ``Mcp-Session-Id`` the ``initialize`` response issued,
``MCP-Protocol-Version`` (the negotiated revision, 2025-06-18 and later) and, for 2026-07-28
messages, the request-metadata headers derived from the body (``Mcp-Method``, ``Mcp-Name``). Whatever
JSON-RPC messages come back (a JSON body, or the events of an SSE body, also on HTTP error statuses)
are queued as frames. ``http`` fixture steps use :meth:`HttpConnection.exchange` for exact control of
method, headers and body.
"""

from __future__ import annotations

import contextlib
import re
import ssl
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc
import h11
import orjson

from jsonrpc_mcp import wire
from jsonrpc_mcp.revisions import get_revision

from .targets import Connection

if TYPE_CHECKING:
    from jsonrpc_mcp.transports.http._authz import HttpAuth

__all__ = ["HttpConnection", "HttpReply", "HttpTarget", "parse_bearer_challenge"]

ACCEPT_BOTH = f"{wire.JSON_MEDIA}, {wire.EVENT_STREAM_MEDIA}"
_META_VERSION = wire.PROTOCOL_VERSION


def _sends_version_header(version: str) -> bool:
    """Whether a client of this revision sends MCP-Protocol-Version after the handshake: its
    revision's rule (2025-06-18 on); a revision we do not know is taken to be a later one."""
    revision = get_revision(version)
    return revision is None or revision.has_protocol_version_header


def _redacted(head: str) -> str:
    """Request head text for a report: credentials shown by kind only."""
    return re.sub(r"(?im)^(authorization:\s*\S+)\s.*$", r"\1 <redacted>", head)


@dataclass
class HttpReply:
    """One HTTP exchange's answer; ``messages`` are the JSON-RPC messages of its body."""

    status: int
    headers: dict[str, str]
    body: bytes
    messages: list[Any] = field(default_factory=list)
    complete: bool = True
    events: list[dict[str, Any]] | None = None  # the SSE events read (None: parse them from ``body``)
    challenge: dict[str, Any] | None = None  # the Bearer challenge of WWW-Authenticate, parsed

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def head_lines(self) -> list[str]:
        """The status line and headers, as a report shows them."""
        return [f"HTTP {self.status}", *(f"{name}: {value}" for name, value in self.headers.items())]

    def describe(self, limit: int = 300) -> str:
        """The answer as it was: status, content type and the start of the body."""
        text = self.body.decode("utf-8", "replace").strip()
        shown = text if len(text) <= limit else text[:limit] + "..."
        return f"HTTP {self.status} ({self.content_type or 'no content-type'}): {shown!r}"

    def as_pattern_subject(self) -> dict[str, Any]:
        """What an ``http`` step's ``expect`` pattern is matched against."""
        subject: dict[str, Any] = {
            "status": self.status,
            "headers": dict(self.headers),
            "content_type": self.content_type,
            "text": self.body.decode("utf-8", "replace"),
            "messages": list(self.messages),
        }
        if self.challenge is not None:
            subject["challenge"] = dict(self.challenge)
        subject["ended"] = self.complete
        subject["responses"] = [m for m in self.messages if isinstance(m, dict) and "method" not in m]
        events = self.events
        if events is None:
            sse = self.content_type == wire.EVENT_STREAM_MEDIA
            events = sse_events(self.body + b"\n\n") if sse else []
        subject["events"] = events
        subject["event_ids"] = [e["id"] for e in events if "id" in e]
        if self.content_type == wire.EVENT_STREAM_MEDIA:
            answers = [m for m in self.messages if isinstance(m, dict) and "method" not in m]
            if answers:
                subject["body"] = answers[-1]
        elif self.body.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                subject["body"] = orjson.loads(self.body)
        return subject


_CHALLENGE_TOKEN = re.compile(r"""\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)(\s*=\s*)?""")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PARAM_TOKEN = re.compile(r"[^\s,]*")


def parse_bearer_challenge(values: list[str]) -> dict[str, Any] | None:
    """The ``Bearer`` challenge among ``WWW-Authenticate`` field values (RFC 9110 §11.6.1), as
    ``{"scheme": "Bearer", <param>: <value>, ..., "scopes": [...]}`` with parameter names in lower
    case and ``scopes`` the ``scope`` value split on spaces; None when no Bearer challenge is there."""
    challenges: list[tuple[str, dict[str, str]]] = []
    for value in values:
        pos = 0
        while pos < len(value):
            if value[pos] in ", \t":
                pos += 1
                continue
            token = _CHALLENGE_TOKEN.match(value, pos)
            if token is None:
                break  # not a token: the rest cannot be read
            pos = token.end()
            if token.group(2) is None or not challenges:  # a scheme (a token68 is not used by Bearer)
                challenges.append((token.group(1), {}))
                continue
            quoted = _QUOTED.match(value, pos)
            if quoted is not None:
                param = re.sub(r"\\(.)", r"\1", quoted.group(1))
                pos = quoted.end()
            else:
                plain = _PARAM_TOKEN.match(value, pos)
                param = plain.group(0) if plain else ""
                pos += len(param)
            challenges[-1][1].setdefault(token.group(1).lower(), param)
    for scheme, params in challenges:
        if scheme.lower() == "bearer":
            parsed: dict[str, Any] = {"scheme": scheme, **params}
            if "scope" in params:
                parsed["scopes"] = params["scope"].split()
            return parsed
    return None


def _parse_sse(body: bytes) -> list[Any]:
    from jsonrpc_mcp.transports.sse import SseParser

    messages: list[Any] = []
    for event in SseParser().feed(body + b"\n\n"):
        if event.data.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                messages.append(orjson.loads(event.data))
    return messages


def _event_record(event: Any) -> dict[str, Any]:
    """An SSE event as fixtures see it: ``event`` (name), ``data`` (parsed when it is JSON, else
    the text), and ``id`` / ``retry`` when the event set them."""
    record: dict[str, Any] = {"event": event.event, "data": event.data}
    if event.data.strip():
        with contextlib.suppress(orjson.JSONDecodeError):
            record["data"] = orjson.loads(event.data)
    if event.id is not None:
        record["id"] = event.id
    if event.retry is not None:
        record["retry"] = event.retry
    return record


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The events of a whole SSE body, as :func:`_event_record` shows them."""
    from jsonrpc_mcp.transports.sse import SseParser

    return [_event_record(event) for event in SseParser().feed(body)]


def _event_messages(events: list[dict[str, Any]]) -> list[Any]:
    """The JSON-RPC messages (objects, or batch arrays) the events carry."""
    return [e["data"] for e in events if isinstance(e["data"], (dict, list))]


class HttpStream:
    """An exchange whose body is read a piece at a time: an SSE stream that need not end.

    :meth:`read` takes events until a bound (a number of events, an event a predicate accepts, a
    time) or the end of the body, and returns what it read as an :class:`HttpReply` (the status and
    headers of the response, the events and messages read this time). Events parsed beyond a bound
    wait for the next :meth:`read`. :meth:`aclose` closes the connection, ending the stream.
    """

    def __init__(self, conn: h11.Connection, stream: anyio.abc.ByteStream, head: h11.Response) -> None:
        from jsonrpc_mcp.transports.sse import SseParser

        self._conn = conn
        self._stream = stream
        self.status = head.status_code
        self.headers = {n.decode("latin-1").lower(): v.decode("latin-1") for n, v in head.headers}
        media = self.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        self._sse = media == wire.EVENT_STREAM_MEDIA
        self._parser = SseParser()
        self._backlog: deque[dict[str, Any]] = deque()
        self.ended = False

    async def read(
        self,
        *,
        events: int | None = None,
        until: Callable[[dict[str, Any]], bool] | None = None,
        within: float = 5.0,
    ) -> HttpReply:
        """Read until ``events`` more events, one ``until`` accepts, ``within`` seconds or the end of
        the body; raises EOFError when the response breaks off (not valid HTTP any more)."""
        got: list[dict[str, Any]] = []
        parts: list[bytes] = []

        def bound_reached() -> bool:
            while self._backlog and (events is None or len(got) < events):
                got.append(self._backlog.popleft())
                if until is not None and until(got[-1]):
                    return True
            return events is not None and len(got) >= events

        with anyio.move_on_after(within):
            while not bound_reached() and not self.ended:
                try:
                    event = self._conn.next_event()
                except h11.ProtocolError as exc:
                    raise EOFError(f"the response broke off: {exc}") from None
                if event is h11.NEED_DATA:
                    try:
                        chunk = await self._stream.receive()
                    except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                        chunk = b""
                    self._conn.receive_data(chunk)
                elif isinstance(event, h11.Data):
                    parts.append(bytes(event.data))
                    if self._sse:
                        self._backlog.extend(_event_record(e) for e in self._parser.feed(bytes(event.data)))
                else:  # EndOfMessage, ConnectionClosed
                    self.ended = True
                    if self._sse:
                        self._backlog.extend(_event_record(e) for e in self._parser.feed(b"\n\n"))
        bound_reached()
        body = b"".join(parts)
        reply = HttpReply(self.status, dict(self.headers), body, complete=self.ended, events=got)
        if self._sse:
            reply.messages = _event_messages(got)
        elif self.ended and body.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                reply.messages = [orjson.loads(body)]
        return reply

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._stream.aclose()


def _request(
    where: Endpoint, method: str, headers: Mapping[str, str], body: bytes | None
) -> tuple[h11.Connection, bytes]:
    """A client connection for one request to ``where`` (closed after it), and the request's bytes."""
    host = headers.get("host", where.host_header)  # a fixture may send another Host (DNS rebinding)
    request_headers = [
        ("host", host),
        ("connection", "close"),
        *(i for i in headers.items() if i[0] != "host"),
    ]
    if body is not None:
        request_headers.append(("content-length", str(len(body))))
    conn = h11.Connection(h11.CLIENT)
    data = conn.send(h11.Request(method=method, target=where.path, headers=request_headers))
    if body:
        data += conn.send(h11.Data(data=body))
    data += conn.send(h11.EndOfMessage())
    return conn, data


class HttpConnection:
    """A client session with the endpoint (the session id and revision it learnt)."""

    transport = "http"

    def __init__(self, target: HttpTarget) -> None:
        self._target = target
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.modern_version: str | None = None  # the stateless revision a server/discover result confirmed
        self.last_reply: HttpReply | None = None  # the answer to the latest frame sent
        self._frames: deque[bytes] = deque()
        self._closed = False
        self.send_timeout: float | None = None  # set during the handshake (Options.startup_timeout)
        self.last_request_head = ""  # the request line and headers of the latest exchange, as sent

    def default_headers(self, message: Any) -> dict[str, str]:
        """The headers a conforming client sends with ``message`` on this connection (``message``: the
        JSON value sent, the bytes of a frame that is no JSON, or None for a request without a body)."""
        from jsonrpc_mcp.transports.http._mcp_headers import modern_headers

        headers = {"accept": ACCEPT_BOTH, "content-type": wire.JSON_MEDIA, **self._target.headers}
        if self.session_id is not None:
            headers[wire.SESSION_HEADER] = self.session_id
        is_initialize = isinstance(message, dict) and message.get("method") == "initialize"
        if self.protocol_version and not is_initialize and _sends_version_header(self.protocol_version):
            headers[wire.VERSION_HEADER] = self.protocol_version
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(_META_VERSION) if isinstance(meta, dict) else None
        if isinstance(version, str) and isinstance(message.get("method"), str):
            headers[wire.VERSION_HEADER] = version
            headers[wire.METHOD_HEADER] = message["method"]
        elif self.modern_version and self.session_id is None and message is not None:
            # a stateless-revision client sends its revision's headers even with a body lacking _meta
            headers[wire.VERSION_HEADER] = self.modern_version
            if isinstance(message, dict) and isinstance(message.get("method"), str):
                headers[wire.METHOD_HEADER] = message["method"]
        for name, value in modern_headers(message) or []:
            headers[name.decode("ascii")] = value.decode("ascii")
        return headers

    async def exchange(
        self,
        method: str,
        headers: Mapping[str, str],
        body: bytes | None,
        timeout: float,
        *,
        url: str | None = None,
    ) -> HttpReply:
        """One request on a new TCP (or TLS) connection; an unfinished body is cut off after
        ``timeout``. ``url``: another URL than the endpoint's (absolute, or relative to it)."""
        target = self._target
        where = target.endpoint(url)
        conn, data = _request(where, method, headers, body)
        self.last_request_head = _redacted(data.split(b"\r\n\r\n", 1)[0].decode("latin-1"))
        parts: list[bytes] = []
        head: h11.Response | None = None
        complete = False
        with anyio.fail_after(timeout):
            stream = await target.open_stream(where)
        async with stream:
            with anyio.move_on_after(timeout):
                await stream.send(data)
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        try:
                            chunk = await stream.receive()
                        except (anyio.EndOfStream, anyio.BrokenResourceError):
                            chunk = b""
                        conn.receive_data(chunk)
                        continue
                    if isinstance(event, h11.Response):
                        head = event
                    elif isinstance(event, h11.Data):
                        parts.append(bytes(event.data))
                    elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                        complete = True
                        break
        if head is None:
            raise EOFError(f"no HTTP response to {method} {where.url} within {timeout:g} s")
        reply = HttpReply(
            status=head.status_code,
            headers={n.decode("latin-1").lower(): v.decode("latin-1") for n, v in head.headers},
            body=b"".join(parts),
            complete=complete,
            challenge=parse_bearer_challenge(
                [v.decode("latin-1") for n, v in head.headers if n.lower() == b"www-authenticate"]
            ),
        )
        if reply.content_type == wire.EVENT_STREAM_MEDIA:
            reply.messages = _parse_sse(reply.body)
        elif reply.body.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                reply.messages = [orjson.loads(reply.body)]
        return reply

    async def open_exchange(
        self, method: str, headers: Mapping[str, str], body: bytes | None, timeout: float
    ) -> HttpStream:
        """Send one request on a new connection and read its response head; the body is left to
        :meth:`HttpStream.read` (for streams that do not end)."""
        target = self._target
        where = target.endpoint()
        conn, data = _request(where, method, headers, body)
        self.last_request_head = _redacted(data.split(b"\r\n\r\n", 1)[0].decode("latin-1"))
        with anyio.fail_after(timeout):
            stream = await target.open_stream(where)
        try:
            with anyio.fail_after(timeout):
                await stream.send(data)
                while True:
                    event = conn.next_event()
                    if event is h11.NEED_DATA:
                        conn.receive_data(await stream.receive())
                    elif isinstance(event, h11.Response):
                        return HttpStream(conn, stream, event)
        except h11.ProtocolError as exc:
            await stream.aclose()
            raise EOFError(f"no valid HTTP response: {exc}") from None
        except BaseException:
            await stream.aclose()
            raise

    def learn(self, message: Any, reply: HttpReply) -> None:
        """From the answer to ``initialize``: the session id and the negotiated revision; from a
        ``server/discover`` result: the stateless revision its ``_meta`` asked for."""
        if isinstance(message, dict) and message.get("method") == "server/discover":
            params = message.get("params")
            meta = params.get("_meta") if isinstance(params, dict) else None
            version = meta.get(_META_VERSION) if isinstance(meta, dict) else None
            answered = any(isinstance(a, dict) and isinstance(a.get("result"), dict) for a in reply.messages)
            if isinstance(version, str) and answered:
                self.modern_version = version
        if not (isinstance(message, dict) and message.get("method") == "initialize"):
            return
        for answer in reply.messages:
            if isinstance(answer, dict) and answer.get("id") == message.get("id"):
                result = answer.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self.protocol_version = result["protocolVersion"]
                    self.session_id = reply.headers.get(wire.SESSION_HEADER)

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise EOFError("input already closed")
        try:
            message = orjson.loads(frame)
        except orjson.JSONDecodeError:
            message = None
        try:
            # an unreadable frame still travels with the headers the connection sends on everything
            headers = self.default_headers(frame if message is None else message)
            timeout = self.send_timeout if self.send_timeout is not None else self._target.timeout
            reply = await self.exchange("POST", headers, frame, timeout)
        except (OSError, TimeoutError, h11.ProtocolError) as exc:
            raise EOFError(f"POST failed: {exc}") from None
        self.learn(message, reply)
        self.last_reply = reply
        messages = list(reply.messages)
        if isinstance(message, list) and reply.content_type == wire.EVENT_STREAM_MEDIA:
            # the answers to a batch (2025-03-26) may come as one SSE event each: together they are the
            # batch's answer, read as one frame as a JSON array body would be
            answers = [m for m in messages if isinstance(m, dict) and "method" not in m]
            messages = [m for m in messages if m not in answers] + ([answers] if answers else [])
        for item in messages:
            self._frames.append(orjson.dumps(item))

    def diagnosis(self) -> str:
        """The answer to the latest POST when it was no MCP answer (an error status, or a body that
        is neither JSON nor an event stream, carrying no message)."""
        reply = self.last_reply
        if reply is None or reply.messages or reply.status == 202:
            return ""
        mcp = reply.content_type in (wire.JSON_MEDIA, wire.EVENT_STREAM_MEDIA)
        if reply.status < 300 and mcp:
            return ""
        return f"the last POST was answered {reply.describe()}"

    async def receive(self, timeout: float) -> bytes | None:
        if self._frames:
            return self._frames.popleft()
        if self._closed:
            raise EOFError("the session is closed")
        return None  # every answer arrives with its POST: nothing more can come

    async def close_input(self) -> None:
        self._closed = True

    async def wait_exit(self, timeout: float) -> bool:
        return True


@dataclass(frozen=True)
class Endpoint:
    """Where one exchange goes: ``url`` split into what the connection and the request line need."""

    url: str
    tls: bool
    host: str
    port: int
    host_header: str
    path: str


def _endpoint(url: str) -> Endpoint:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http:// or https:// URL: {url!r}")
    tls = parts.scheme == "https"
    return Endpoint(
        url=url,
        tls=tls,
        host=parts.hostname,
        port=parts.port or (443 if tls else 80),
        host_header=parts.netloc,
        path=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
    )


# Token variables the ``auth`` fixtures use, with the option that gives each (the reason they skip).
TOKEN_OPTIONS = {
    "auth_token": "--auth-token",
    "auth_token_wrong_audience": "--auth-token-wrong-audience",
    "auth_token_insufficient_scope": "--auth-token-insufficient-scope",
}


class HttpTarget:
    """A Streamable HTTP endpoint; each connection is a client session of its own.

    ``https://`` URLs are reached over TLS (SNI, certificate and host name checked against the
    system's CAs, or ``ca_file``'s; ``insecure`` checks nothing). ``auth_token``: the server is
    protected and this token is valid (sent as ``Authorization: Bearer`` on every request; a
    ``Bearer`` Authorization in ``headers`` counts as given); ``wrong_audience_token`` and
    ``insufficient_scope_token``: tokens the server must refuse (401) or answer 403, for the
    ``auth`` fixtures. :attr:`variables` is what fixtures see of all this.

    ``auth``: an OAuth client (``--auth oauth``); :meth:`authorize`, before the run, gets the token
    that then counts as ``auth_token``. Fixtures send their requests exactly as they say (one
    without a token must meet a 401), so nothing is retried: that token serves the whole run.
    """

    transport = "http"

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = 5.0,
        auth_token: str | None = None,
        wrong_audience_token: str | None = None,
        insufficient_scope_token: str | None = None,
        insecure: bool = False,
        ca_file: str | None = None,
        auth: HttpAuth | None = None,
    ) -> None:
        from urllib.parse import urlsplit

        where = _endpoint(url)
        self.url = url
        self.host = where.host
        self.port = where.port
        self.host_header = where.host_header
        self.path = where.path
        self.tls = where.tls
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        if auth_token is not None:
            self.headers["authorization"] = f"Bearer {auth_token}"
        else:
            scheme, _, credentials = self.headers.get("authorization", "").strip().partition(" ")
            if scheme.lower() == "bearer" and credentials.strip():
                auth_token = credentials.strip()
        self.timeout = timeout
        self.auth = auth
        self.description = url
        self.ssl_context: ssl.SSLContext | None = None
        if self.tls:
            self.ssl_context = ssl.create_default_context(cafile=ca_file)
            if insecure:
                self.ssl_context.check_hostname = False
                self.ssl_context.verify_mode = ssl.CERT_NONE
        parts = urlsplit(url)
        tokens = {
            "auth_token": auth_token,
            "auth_token_wrong_audience": wrong_audience_token,
            "auth_token_insufficient_scope": insufficient_scope_token,
        }
        why = {
            name: f"no {option} token was given"
            for name, option in TOKEN_OPTIONS.items()
            if tokens[name] is None
        }
        if auth_token is None:
            why["auth_token"] = "server not declared protected (no --auth-token)"
        self.variables: dict[str, Any] = {
            "http_url": url,
            "http_origin": f"{parts.scheme}://{parts.netloc}",
            "http_path": parts.path.rstrip("/"),
            "why_unknown": why,
            **{name: token for name, token in tokens.items() if token is not None},
        }

    async def authorize(self) -> None:
        """With :attr:`auth`, for a server that answers a ``ping`` without a token with a challenge:
        get a token (stored, or by the flow), send it on every request from now on, and declare the
        server protected with it (``auth_token``). ``AuthorizationError`` when none can be had; an
        unreachable server is left for the run to find."""
        if self.auth is None:
            return
        from jsonrpc_mcp._client_options import authorize_upfront
        from jsonrpc_mcp.transports.http._authz import is_challenge

        connection = HttpConnection(self)
        ping = {"jsonrpc": "2.0", "id": "jsonrpc-mcp-authorization-probe", "method": "ping"}

        async def probe(authorization: str | None) -> tuple[int, str | None]:
            headers = {k: v for k, v in connection.default_headers(ping).items() if k != "authorization"}
            if authorization is not None:
                headers["authorization"] = authorization
            reply = await connection.exchange("POST", headers, orjson.dumps(ping), self.timeout)
            return reply.status, reply.headers.get("www-authenticate")

        try:
            if not is_challenge(*await probe(None)):
                return  # not protected: no token is sent, and the auth fixtures skip
            value = await authorize_upfront(self.auth, self.url, probe) or ""
        except (OSError, TimeoutError, EOFError, h11.ProtocolError):
            return
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "bearer" and token.strip():
            self.headers["authorization"] = value
            self.variables["auth_token"] = token.strip()
            self.variables["why_unknown"].pop("auth_token", None)

    def endpoint(self, url: str | None = None) -> Endpoint:
        """The endpoint itself, or ``url`` resolved against it."""
        from urllib.parse import urljoin

        return _endpoint(self.url if url is None else urljoin(self.url, url))

    async def open_stream(self, where: Endpoint) -> anyio.abc.ByteStream:
        """A connection to ``where``: TCP, wrapped in TLS (with SNI) for https."""
        if not where.tls:
            return await anyio.connect_tcp(where.host, where.port)
        context = self.ssl_context or ssl.create_default_context()
        return await anyio.connect_tcp(
            where.host,
            where.port,
            ssl_context=context,
            tls_hostname=where.host,
            tls_standard_compatible=False,
        )

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        """A new HTTP connection (no request sent yet); on exit its session, if any, is DELETEd."""
        connection = HttpConnection(self)
        try:
            yield connection
        finally:
            if connection.session_id is not None:  # end the session, as a client SHOULD
                with anyio.move_on_after(self.timeout), contextlib.suppress(Exception):
                    await connection.exchange("DELETE", connection.default_headers(None), None, self.timeout)
