"""Server-Sent Events, sans-IO: encode events, and parse an event stream back into events.

The wire format (WHATWG HTML, "server-sent events"): UTF-8 lines of ``field: value``; an event ends
with a blank line; ``data`` may repeat (joined with newlines); lines starting with ``:`` are comments
(keep-alives). Our JSON messages never contain a newline, so each message is one ``data`` line.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KEEPALIVE", "SseEvent", "SseParser", "encode_event"]

KEEPALIVE = b": keep-alive\n\n"


def encode_event(
    data: bytes = b"", *, event: str | None = None, id: str | None = None, retry: int | None = None
) -> bytes:
    """One event. ``data`` may hold newlines (each line becomes a ``data:`` line)."""
    parts: list[bytes] = []
    if id is not None:
        if "\n" in id or "\r" in id or "\0" in id:
            raise ValueError("an SSE event id cannot contain a newline or NUL")
        parts.append(b"id: " + id.encode())
    if event is not None:
        if "\n" in event or "\r" in event:
            raise ValueError("an SSE event name cannot contain a newline")
        parts.append(b"event: " + event.encode())
    if retry is not None:
        parts.append(b"retry: %d" % retry)
    for line in data.split(b"\n") if data else [b""]:
        parts.append(b"data: " + line)
    return b"\n".join(parts) + b"\n\n"


@dataclass(slots=True)
class SseEvent:
    """One parsed event. ``id`` is the event's own id field (None if it had none)."""

    data: str
    event: str = "message"
    id: str | None = None
    retry: int | None = None


class SseParser:
    """Feed bytes; take complete events. Tracks the last event id, as a reconnecting client must."""

    def __init__(self) -> None:
        self._buffer = b""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False
        self.last_event_id: str | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        self._buffer += chunk
        events: list[SseEvent] = []
        while True:
            cut = _line_end(self._buffer)
            if cut is None:
                return events
            end, after = cut
            line = self._buffer[:end].decode("utf-8", errors="replace")
            self._buffer = self._buffer[after:]
            if not line:
                event = self._dispatch()
                if event is not None:
                    events.append(event)
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            self._field(field, value)

    def _field(self, field: str, value: str) -> None:
        if field == "data":
            self._data.append(value)
            self._has_fields = True
        elif field == "event":
            self._event = value
            self._has_fields = True
        elif field == "id":
            if "\0" not in value:
                self._id = value
                self.last_event_id = value
            self._has_fields = True
        elif field == "retry" and value.isdigit():
            self._retry = int(value)
            self._has_fields = True

    def _dispatch(self) -> SseEvent | None:
        if not self._has_fields:
            return None
        event = SseEvent("\n".join(self._data), self._event or "message", self._id, self._retry)
        self._data = []
        self._event = ""
        self._id = None
        self._retry = None
        self._has_fields = False
        return event


def _line_end(buffer: bytes) -> tuple[int, int] | None:
    """(end of the first line, start of the next) for CRLF, LF or CR line endings."""
    lf = buffer.find(b"\n")
    cr = buffer.find(b"\r")
    if cr == -1 or (lf != -1 and lf < cr):
        return None if lf == -1 else (lf, lf + 1)
    if cr + 1 == len(buffer):
        return None  # a CR at the end may be the first half of a CRLF: wait for more
    return cr, cr + 2 if buffer[cr + 1] == 0x0A else cr + 1
