"""Subprocess servers bind port 0 themselves and say which port they got: this reads what they say.

A test never picks a free port for a server (finding one free, closing it and handing the number to a
subprocess is a race: anything may take the port in between). Every server the tests start binds
``127.0.0.1`` port 0 and prints its URL once it listens:

- ``jsonrpc-mcp serve TARGET --http --port 0``: ``jsonrpc-mcp: serving NAME at http://127.0.0.1:PORT/mcp``
  (:data:`SERVE_LINE`), on stderr;
- ``jsonrpc-mcp trace --http --port 0 ...``: ``trace: http://127.0.0.1:PORT -> UPSTREAM``
  (:data:`TRACE_LINE`);
- ``python -m jsonrpc_mcp_conformance.faultserver --port 0``: ``faultserver: serving at URL``
  (:data:`FAULTSERVER_LINE`).

Usage::

    process = subprocess.Popen([..., "--port", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    output = Output(process.stderr)
    url = output.wait_for(SERVE_LINE, process).group("url").decode()  # bounded by timeouts.STARTUP
    ...
    output.text()  # all of stderr so far (the pipe is read by a thread: it never fills up)
    # the process stopped: output.close() reads the rest and closes the pipe
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from typing import IO
from urllib.parse import urlsplit

from tests import timeouts

SERVE_LINE = re.compile(rb"jsonrpc-mcp: serving .* at (?P<url>https?://\S+)")
TRACE_LINE = re.compile(rb"trace: (?P<url>http://\S+) -> ")
FAULTSERVER_LINE = re.compile(rb"faultserver: serving at (?P<url>http://\S+)")


class Output:
    """A subprocess's output stream (a pipe), read line by line by a daemon thread until it ends,
    kept whole; :meth:`wait_for` waits until a line matches (or the stream ends, or time runs out)."""

    def __init__(self, stream: IO[bytes] | None) -> None:
        if stream is None:
            raise ValueError("the stream must be a pipe (stdout=/stderr=subprocess.PIPE)")
        self._stream = stream
        self._lines: list[bytes] = []
        self._ended = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[bytes]) -> None:
        try:
            for line in iter(stream.readline, b""):
                with self._changed:
                    self._lines.append(line)
                    self._changed.notify_all()
        finally:
            with self._changed:
                self._ended = True
                self._changed.notify_all()

    def close(self, timeout: float = timeouts.STEP) -> None:
        """Once the process has exited: wait for the rest of the stream, then close the pipe."""
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._stream.close()

    def rest(self, timeout: float = timeouts.STEP) -> bytes:
        """Once the process has exited: everything it wrote (the reader thread may still be
        reading what the pipe holds; waited for, bounded)."""
        self._thread.join(timeout)
        return self.text()

    def text(self) -> bytes:
        """Everything read so far."""
        with self._changed:
            return b"".join(self._lines)

    def wait_for(
        self,
        pattern: re.Pattern[bytes],
        process: subprocess.Popen[bytes] | None = None,
        timeout: float = timeouts.STARTUP,
    ) -> re.Match[bytes]:
        """The first line matching ``pattern``; RuntimeError if the stream ends first (the process
        exited: its output is in the message), TimeoutError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        seen = 0
        with self._changed:
            while True:
                for line in self._lines[seen:]:
                    found = pattern.search(line)
                    if found is not None:
                        return found
                seen = len(self._lines)
                if self._ended:
                    status = "" if process is None else f" (exit status {process.wait(timeout)})"
                    raise RuntimeError(
                        f"the process ended before saying {pattern.pattern!r}{status}:\n"
                        + b"".join(self._lines).decode(errors="replace")
                    )
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no line matched {pattern.pattern!r} within {timeout} s")
                self._changed.wait(left)


def base_url(url: bytes | str) -> str:
    """``scheme://host:port`` of an announced URL (its path dropped)."""
    parts = urlsplit(url.decode() if isinstance(url, bytes) else url)
    return f"{parts.scheme}://{parts.netloc}"
