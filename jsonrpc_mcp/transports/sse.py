"""Server-Sent Events, sans-IO: encode events, and parse an event stream back into events.

The wire format (WHATWG HTML, "server-sent events"): UTF-8 lines of ``field: value`` ended by CRLF,
LF or CR; an event ends with a blank line; ``data`` may repeat (joined with newlines); lines starting
with ``:`` are comments (keep-alives); a leading byte order mark is ignored. Our JSON messages never
contain a newline, so each message is one ``data`` line.

One deliberate difference from a browser's EventSource: an event made only of ``id`` or ``retry``
fields (no ``data``) is still reported (with empty data), so a reader sees every cursor the server set.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KEEPALIVE", "SseEvent", "SseEventTooLarge", "SseParser", "encode_event"]

KEEPALIVE = b": keep-alive\n\n"

_BOM = b"\xef\xbb\xbf"


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


class SseEventTooLarge(ValueError):
    """An event (or a line still being received) grew past the parser's ``max_event_size``."""


class SseParser:
    """Feed bytes; take complete events. Tracks what a reconnecting client needs: the last event id
    (``last_event_id``; ``""`` once the server reset it) and the last ``retry`` value in milliseconds.

    ``max_event_size`` bounds the bytes one event (its lines, fields included) may take: past it,
    :meth:`feed` raises :class:`SseEventTooLarge` (the stream cannot be trusted any more).
    """

    def __init__(self, max_event_size: int | None = None) -> None:
        self._buffer = bytearray()
        self._scan = 0  # where to resume looking for a line end in the buffer
        self._bom_checked = False
        self._max = max_event_size
        self._size = 0
        self._data: list[bytes] = []
        self._event = ""
        self._id: str | None = None
        self._retry: int | None = None
        self._has_fields = False
        self.last_event_id: str | None = None
        self.retry: int | None = None

    def feed(self, chunk: bytes) -> list[SseEvent]:
        buf = self._buffer
        buf += chunk
        if not self._bom_checked:
            if len(buf) < len(_BOM) and _BOM.startswith(bytes(buf)):
                return []
            if buf.startswith(_BOM):
                del buf[: len(_BOM)]
            self._bom_checked = True
        events: list[SseEvent] = []
        n = len(buf)
        pos = 0
        # Positions of the next LF and CR at or after pos (-1: none left in this buffer).
        lf = cr = -2
        start = self._scan
        while True:
            if lf != -1 and lf < pos:
                lf = buf.find(b"\n", max(pos, start))
            if cr != -1 and cr < pos:
                cr = buf.find(b"\r", max(pos, start))
            if cr == -1 or (lf != -1 and lf < cr):
                if lf == -1:
                    break
                end, after = lf, lf + 1
            elif cr + 1 == n:
                break  # a CR at the very end may be the first half of a CRLF: wait for more
            else:
                end, after = cr, (cr + 2 if buf[cr + 1] == 0x0A else cr + 1)
            line = bytes(buf[pos:end])
            pos = after
            if not line:
                event = self._dispatch()
                if event is not None:
                    events.append(event)
            elif line[0] != 0x3A:  # not a comment
                self._line(line)
        if pos:
            del buf[:pos]
        # Everything left is one incomplete line: next time, look only at what is new (and a final CR).
        self._scan = max(len(buf) - 1, 0)
        if self._max is not None and self._size + len(buf) > self._max:
            raise SseEventTooLarge(f"an SSE event exceeded {self._max} bytes")
        return events

    def end(self) -> list[SseEvent]:
        """The stream ended: a final CR held back (it might have been half of a CRLF) ends its line.

        An event not terminated by a blank line is discarded, as the standard says.
        """
        if self._buffer.endswith(b"\r"):
            return self.feed(b"\n")
        return []

    def _line(self, line: bytes) -> None:
        self._size += len(line) + 1
        if self._max is not None and self._size > self._max:
            raise SseEventTooLarge(f"an SSE event exceeded {self._max} bytes")
        colon = line.find(b":")
        if colon == -1:
            field, value = line, b""
        else:
            field, value = line[:colon], line[colon + 1 :]
            if value[:1] == b" ":
                value = value[1:]
        if field == b"data":
            self._data.append(value)
            self._has_fields = True
        elif field == b"event":
            self._event = value.decode("utf-8", errors="replace")
            self._has_fields = True
        elif field == b"id":
            if b"\0" not in value:
                self._id = value.decode("utf-8", errors="replace")
                self.last_event_id = self._id
            self._has_fields = True
        elif field == b"retry" and value.isdigit():  # bytes.isdigit: ASCII digits only
            self._retry = int(value)
            self.retry = self._retry
            self._has_fields = True

    def _dispatch(self) -> SseEvent | None:
        self._size = 0
        if not self._has_fields:
            return None
        data = b"\n".join(self._data).decode("utf-8", errors="replace")
        event = SseEvent(data, self._event or "message", self._id, self._retry)
        self._data = []
        self._event = ""
        self._id = None
        self._retry = None
        self._has_fields = False
        return event
