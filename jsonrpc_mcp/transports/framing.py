"""Newline framing, sans-IO: feed bytes in, take whole lines out.

A line longer than the limit is discarded up to its newline and reported once as
:class:`FrameTooLarge`; the lines after it are unaffected. Blank lines are skipped and a trailing
``\\r`` is dropped, so CRLF input works. Bytes are never decoded here: JSON parsing is UTF-8 by
definition (orjson), whatever the locale.
"""

from __future__ import annotations

from collections import deque

from .base import FrameTooLarge

DEFAULT_MAX_LINE = 4 * 1024 * 1024


class LineBuffer:
    """Accumulate bytes and split them into newline-terminated frames."""

    __slots__ = ("_discarding", "_max", "_parts", "_ready", "_size")

    def __init__(self, max_line: int = DEFAULT_MAX_LINE) -> None:
        self._max = max_line
        self._parts: list[bytes] = []
        self._size = 0
        self._discarding = False
        self._ready: deque[bytes | FrameTooLarge] = deque()

    def feed(self, data: bytes) -> None:
        start = 0
        find = data.find
        while True:
            end = find(b"\n", start)
            if end < 0:
                break
            piece = data[start:end]
            start = end + 1
            if self._parts:
                piece = b"".join(self._parts) + piece
                self._parts.clear()
                self._size = 0
            if self._discarding:
                self._discarding = False  # the tail of an oversized line
                continue
            self._push(piece)
        if start < len(data) and not self._discarding:
            rest = data[start:]
            self._parts.append(rest)
            self._size += len(rest)
            if self._size > self._max + 1:  # + 1: room for a "\r" that _push strips
                self._parts.clear()
                self._size = 0
                self._discarding = True
                self._ready.append(FrameTooLarge(f"message exceeds the limit of {self._max} bytes"))

    def feed_eof(self) -> None:
        """The stream ended: an unterminated last line still counts as a message."""
        if self._parts and not self._discarding:
            self._push(b"".join(self._parts))
        self._parts.clear()
        self._size = 0

    def _push(self, line: bytes) -> None:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self._max:
            self._ready.append(FrameTooLarge(f"message exceeds the limit of {self._max} bytes"))
        elif line and not line.isspace():  # (isspace stops at the first other byte; strip copies)
            self._ready.append(line)

    @property
    def pending(self) -> int:
        """Frames (and size errors) waiting to be popped."""
        return len(self._ready)

    def pop(self) -> bytes | None:
        """The next frame, None if none is complete; raises FrameTooLarge for a discarded one."""
        if not self._ready:
            return None
        item = self._ready.popleft()
        if type(item) is not bytes:
            raise item  # type: ignore[misc]
        return item

    def unpop(self, item: bytes | FrameTooLarge) -> None:
        """Put back what :meth:`pop` just returned (or raised), to be popped again first."""
        self._ready.appendleft(item)
