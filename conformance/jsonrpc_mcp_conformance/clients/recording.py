"""The exchanges between the client under test and a scenario server, as the harness saw them.

Over HTTP :class:`HttpRecorder` wraps the scenario server's ASGI app and records every request
(method, headers, decoded body) and every message of every response (a JSON body, or each SSE
event's data). Over stdio the tap (``tap.py``) writes each line either side sent; :func:`read_tap`
turns its record into the same :class:`Event` s.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

__all__ = ["CLIENT", "SERVER", "Event", "HttpRecorder", "read_tap"]

CLIENT, SERVER = "client", "server"
Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass
class Event:
    """One thing one side sent: a JSON-RPC message (or batch), or over HTTP a request without one.

    ``source``: ``client`` or ``server``. ``message``: the decoded JSON (None when the bytes were
    no JSON; ``raw`` keeps them). ``headers`` (HTTP): the request's headers for a client event, the
    response's for a server event, names in lower case. ``http``: ``POST /mcp`` or ``200
    text/event-stream``; "" over stdio. ``exchange``: the number of the HTTP request it belongs to.
    ``closed`` (HTTP, a client event): when the client closed its request's connection before the
    response was complete (None: it did not)."""

    source: str
    message: Any
    raw: str
    headers: dict[str, str] = field(default_factory=dict)
    http: str = ""
    exchange: int = 0
    t: float = 0.0
    closed: float | None = None

    @property
    def method(self) -> str | None:
        return self.message.get("method") if isinstance(self.message, dict) else None

    @property
    def is_request(self) -> bool:
        return isinstance(self.message, dict) and "method" in self.message and "id" in self.message

    def messages(self) -> list[dict[str, Any]]:
        """The JSON-RPC messages the event holds (a batch's items; none when no JSON)."""
        if isinstance(self.message, dict):
            return [self.message]
        if isinstance(self.message, list):
            return [m for m in self.message if isinstance(m, dict)]
        return []

    def frame(self) -> str:
        """One transcript line: ``< `` what the client sent, ``> `` what the scenario server sent."""
        mark = "<" if self.source == CLIENT else ">"
        head = f"[{self.http}] " if self.http else ""
        text = self.raw if len(self.raw) <= 400 else self.raw[:400] + "..."
        return f"{mark} {head}{text}"


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        return None


class HttpRecorder:
    """An ASGI middleware recording what passes through to ``app`` (see :class:`Event`)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.events: list[Event] = []
        self._exchanges = 0
        self._start = time.monotonic()

    def _now(self) -> float:
        return round(time.monotonic() - self._start, 6)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        self._exchanges += 1
        number = self._exchanges
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        line = f"{scope.get('method', '')} {scope.get('path', '')}"
        # the whole body first (an app answering before reading it must not hide what was sent)
        body = bytearray()
        early: list[Message] = []
        while True:
            message = await receive()
            if message.get("type") != "http.request":
                early.append(message)  # a disconnect: handed on below
                break
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                break
        raw = bytes(body)
        text = raw.decode("utf-8", "replace")
        request = Event(CLIENT, _decode(raw) if raw else None, text, headers, line, number, self._now())
        self.events.append(request)
        replay: list[Message] = early or [{"type": "http.request", "body": raw, "more_body": False}]
        # after the body, only the disconnect is left to receive: the watcher waits for it (noting
        # when the client closed a request whose response was not complete) and hands it to the app
        disconnected = anyio.Event()
        complete = False

        async def watch() -> None:
            await receive()
            if not complete:
                request.closed = self._now()
            disconnected.set()

        async def recording_receive() -> Message:
            if replay:
                return replay.pop(0)
            await disconnected.wait()
            return {"type": "http.disconnect"}

        status = ""
        response_headers: dict[str, str] = {}
        buffer = bytearray()
        streaming = False

        def flush_sse(final: bool) -> None:
            while True:
                data = bytes(buffer).replace(b"\r\n", b"\n")
                end = data.find(b"\n\n")
                if end < 0:
                    if final and data.strip():
                        end = len(data)
                    else:
                        return
                block, rest = data[:end], data[end + 2 :]
                buffer[:] = rest
                lines = [ln[5:].lstrip(b" ") for ln in block.split(b"\n") if ln.startswith(b"data:")]
                if lines:
                    raw = b"\n".join(lines)
                    self.events.append(
                        Event(
                            SERVER,
                            _decode(raw),
                            raw.decode("utf-8", "replace"),
                            response_headers,
                            status,
                            number,
                            self._now(),
                        )
                    )
                if not rest:
                    return

        async def recording_send(message: Message) -> None:
            nonlocal status, streaming, complete
            if message.get("type") == "http.response.start":
                response_headers.update(
                    {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in message.get("headers", [])}
                )
                kind = response_headers.get("content-type", "").split(";")[0].strip()
                status = f"{message.get('status')} {kind}".strip()
                streaming = kind == "text/event-stream"
            elif message.get("type") == "http.response.body":
                buffer.extend(message.get("body", b""))
                final = not message.get("more_body", False)
                complete = complete or final
                if streaming:
                    flush_sse(final)
                elif final:
                    raw = bytes(buffer)
                    buffer.clear()
                    self.events.append(
                        Event(
                            SERVER,
                            _decode(raw) if raw else None,
                            raw.decode("utf-8", "replace"),
                            response_headers,
                            status,
                            number,
                            self._now(),
                        )
                    )
            await send(message)

        if early:  # the client was gone before its body was read
            request.closed = self._now()
            disconnected.set()
            await self.app(scope, recording_receive, recording_send)
            return
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(watch)
            await self.app(scope, recording_receive, recording_send)
            tasks.cancel_scope.cancel()


def read_tap(path: Path) -> list[Event]:
    """The events of a tap record (see ``tap.py``); a missing file is no event."""
    events: list[Event] = []
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return events
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # the last line, cut by a kill
        raw = str(entry.get("line", ""))
        if not raw.strip():
            continue
        source = CLIENT if entry.get("from") == "client" else SERVER
        events.append(Event(source, _decode(raw.encode()), raw, t=float(entry.get("t", 0.0))))
    return events
