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
from collections import deque
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
import h11
import orjson

from .targets import Connection

__all__ = ["HttpConnection", "HttpReply", "HttpTarget"]

ACCEPT_BOTH = "application/json, text/event-stream"
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_FIRST_VERSION_HEADER = "2025-06-18"  # the first revision whose clients send MCP-Protocol-Version


@dataclass
class HttpReply:
    """One HTTP exchange's answer; ``messages`` are the JSON-RPC messages of its body."""

    status: int
    headers: dict[str, str]
    body: bytes
    messages: list[Any] = field(default_factory=list)
    complete: bool = True

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()

    def as_pattern_subject(self) -> dict[str, Any]:
        """What an ``http`` step's ``expect`` pattern is matched against."""
        subject: dict[str, Any] = {
            "status": self.status,
            "headers": dict(self.headers),
            "content_type": self.content_type,
            "text": self.body.decode("utf-8", "replace"),
            "messages": list(self.messages),
        }
        if self.content_type == "text/event-stream":
            answers = [m for m in self.messages if isinstance(m, dict) and "method" not in m]
            if answers:
                subject["body"] = answers[-1]
        elif self.body.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                subject["body"] = orjson.loads(self.body)
        return subject


def _parse_sse(body: bytes) -> list[Any]:
    from jsonrpc_mcp.transports.sse import SseParser

    messages: list[Any] = []
    for event in SseParser().feed(body + b"\n\n"):
        if event.data.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                messages.append(orjson.loads(event.data))
    return messages


class HttpConnection:
    """A client session with the endpoint (the session id and revision it learnt)."""

    transport = "http"

    def __init__(self, target: HttpTarget) -> None:
        self._target = target
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._frames: deque[bytes] = deque()
        self._closed = False

    def default_headers(self, message: Any) -> dict[str, str]:
        """The headers a conforming client sends with ``message`` on this connection."""
        from jsonrpc_mcp.transports.http_client import modern_headers

        headers = {"accept": ACCEPT_BOTH, "content-type": "application/json", **self._target.headers}
        if self.session_id is not None:
            headers["mcp-session-id"] = self.session_id
        is_initialize = isinstance(message, dict) and message.get("method") == "initialize"
        if self.protocol_version and self.protocol_version >= _FIRST_VERSION_HEADER and not is_initialize:
            headers["mcp-protocol-version"] = self.protocol_version
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(_META_VERSION) if isinstance(meta, dict) else None
        if isinstance(version, str) and isinstance(message.get("method"), str):
            headers["mcp-protocol-version"] = version
            headers["mcp-method"] = message["method"]
        for name, value in modern_headers(message) or []:
            headers[name.decode("ascii")] = value.decode("ascii")
        return headers

    async def exchange(
        self, method: str, headers: Mapping[str, str], body: bytes | None, timeout: float
    ) -> HttpReply:
        """One request on a new TCP connection; an unfinished body is cut off after ``timeout``."""
        target = self._target
        request_headers = [("host", target.host_header), ("connection", "close"), *headers.items()]
        if body is not None:
            request_headers.append(("content-length", str(len(body))))
        conn = h11.Connection(h11.CLIENT)
        data = conn.send(h11.Request(method=method, target=target.path, headers=request_headers))
        if body:
            data += conn.send(h11.Data(data=body))
        data += conn.send(h11.EndOfMessage())
        parts: list[bytes] = []
        head: h11.Response | None = None
        complete = False
        with anyio.fail_after(timeout):
            stream = await anyio.connect_tcp(target.host, target.port)
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
            raise EOFError(f"no HTTP response to {method} {target.url} within {timeout:g} s")
        reply = HttpReply(
            status=head.status_code,
            headers={n.decode("latin-1").lower(): v.decode("latin-1") for n, v in head.headers},
            body=b"".join(parts),
            complete=complete,
        )
        if reply.content_type == "text/event-stream":
            reply.messages = _parse_sse(reply.body)
        elif reply.body.strip():
            with contextlib.suppress(orjson.JSONDecodeError):
                reply.messages = [orjson.loads(reply.body)]
        return reply

    def learn(self, message: Any, reply: HttpReply) -> None:
        """From the answer to ``initialize``: the session id and the negotiated revision."""
        if not (isinstance(message, dict) and message.get("method") == "initialize"):
            return
        for answer in reply.messages:
            if isinstance(answer, dict) and answer.get("id") == message.get("id"):
                result = answer.get("result")
                if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                    self.protocol_version = result["protocolVersion"]
                    self.session_id = reply.headers.get("mcp-session-id")

    async def send(self, frame: bytes) -> None:
        if self._closed:
            raise EOFError("input already closed")
        try:
            message = orjson.loads(frame)
        except orjson.JSONDecodeError:
            message = None
        try:
            reply = await self.exchange("POST", self.default_headers(message), frame, self._target.timeout)
        except (OSError, TimeoutError, h11.ProtocolError) as exc:
            raise EOFError(f"POST failed: {exc}") from None
        self.learn(message, reply)
        for item in reply.messages:
            self._frames.append(orjson.dumps(item))

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


class HttpTarget:
    """A Streamable HTTP endpoint; each connection is a client session of its own."""

    transport = "http"

    def __init__(self, url: str, *, headers: Mapping[str, str] | None = None, timeout: float = 5.0) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not an http:// URL: {url!r} (https is not supported by the harness)")
        self.url = url
        self.host = parts.hostname
        self.port = parts.port or 80
        self.host_header = parts.netloc
        self.path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self.headers = {k.lower(): v for k, v in (headers or {}).items()}
        self.timeout = timeout
        self.description = url

    @contextlib.asynccontextmanager
    async def connect(self) -> AsyncIterator[Connection]:
        connection = HttpConnection(self)
        try:
            yield connection
        finally:
            if connection.session_id is not None:  # end the session, as a client SHOULD
                with anyio.move_on_after(self.timeout), contextlib.suppress(Exception):
                    await connection.exchange("DELETE", connection.default_headers(None), None, self.timeout)
