"""The stdio tap: a transparent process between an MCP client and the server it spawns.

Theory of operation
-------------------
The client starts ``jsonrpc-mcp trace -- CMD ...`` instead of ``CMD ...``. The tap starts CMD with
pipes for its stdin and stdout (its stderr is the tap's own) and runs two pump threads: one copies
the client's bytes (the tap's stdin) to CMD's stdin, the other CMD's stdout to the tap's stdout.
Each pump splits what it has read at newlines (stdio frames are newline-delimited), hands each
complete line to the :class:`~.annotate.Tracer` under a lock, and only then writes the chunk on,
unchanged. Annotating first keeps cause before effect: the other side cannot answer a frame the
tracer has not seen yet (writing first would let the client's next request overtake the answer it
reacts to, and be misread as out of order). The cost is one JSON parse per frame. The annotations
go to stderr or a file, never to stdout.

The tap ends when CMD does and exits with CMD's status. The client closing the tap's stdin closes
CMD's stdin (the stdio way of saying "stop"); a SIGTERM or SIGINT to the tap is passed on to CMD.
Blocking reads in threads rather than an event loop: two byte streams, no timers, and the least
latency added to each frame.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any

from .annotate import CLIENT, SERVER, Frame, Tracer

__all__ = ["Sink", "format_frame", "run_stdio_tap"]

_INDENT = " " * 11
_PREVIEW = 240


def format_frame(frame: Frame, *, full: bool = False) -> str:
    """A frame as text: a head line (time, direction, kind, id, method, latency), the meaning, the
    specification link, the frame itself (shortened unless ``full``) and each violation."""
    arrow = "->" if frame.sender == CLIENT else "<-"
    head = f"{frame.t:9.3f}s {arrow} {frame.sender} {frame.kind}"
    if frame.id is not None:
        head += f" #{json.dumps(frame.id)}"
    if frame.method:
        head += f" {frame.method}"
    if frame.latency is not None:
        head += f" ({frame.latency * 1000:.1f} ms)"
    if frame.revision:
        head += f" [{frame.revision}]"
    lines = [head]
    if frame.meaning:
        lines.append(_INDENT + frame.meaning)
    if frame.spec:
        lines.append(_INDENT + frame.spec)
    body = frame.raw
    if not full and len(body) > _PREVIEW:
        body = f"{body[:_PREVIEW]}... ({len(body)} characters)"
    lines.append(_INDENT + body)
    lines += [f"{_INDENT}! {violation}" for violation in frame.violations]
    return "\n".join(lines) + "\n"


class Sink:
    """Where annotations go: text for people, or JSON lines (a recording the replay can read)."""

    def __init__(self, out: IO[str], *, jsonl: bool = False, full: bool = False, keep: bool = False) -> None:
        self.out, self.jsonl, self.full, self.keep = out, jsonl, full, keep
        self.violations = 0
        self.kept: list[Frame] = []  # every frame, with keep (for the HTML page written at the end)

    def write(self, frames: Sequence[Frame]) -> None:
        for frame in frames:
            self.violations += len(frame.violations)
            if self.keep:
                self.kept.append(frame)
            if self.jsonl:
                self.out.write(json.dumps(frame.to_json(), ensure_ascii=False) + "\n")
            else:
                self.out.write(format_frame(frame, full=self.full))
        self.out.flush()


class _Conversation:
    """The tracer and the sink behind one lock: both pumps report here."""

    def __init__(self, sink: Sink, schema_dir: Path | None) -> None:
        self.tracer = Tracer(schema_dir)
        self.sink = sink
        self.lock = threading.Lock()
        self.started = time.monotonic()

    def seen(self, sender: str, line: bytes) -> None:
        with self.lock:
            try:
                frames = self.tracer.feed(sender, line, time.monotonic() - self.started)
                self.sink.write(frames)
            except Exception as exc:  # an annotation bug must never stop the traffic
                self.sink.out.write(
                    f"trace: could not annotate a {sender} frame: {type(exc).__name__}: {exc}\n"
                )


def _pump(source: IO[bytes], target: IO[bytes], sender: str, conversation: _Conversation) -> None:
    """Copy ``source`` to ``target`` chunk by chunk, annotating each complete line."""
    pending = b""
    fd = source.fileno()
    try:
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                if line.strip():
                    conversation.seen(sender, line)
            try:
                target.write(chunk)
                target.flush()
            except (BrokenPipeError, ValueError, OSError):
                break  # the other end has gone: nothing more can be delivered
        if pending.strip():
            conversation.seen(sender, pending)
    finally:
        if sender == CLIENT:  # the client hung up: so does the server's stdin
            with contextlib.suppress(OSError):
                target.close()


def run_stdio_tap(
    command: Sequence[str],
    sink: Sink,
    *,
    schema_dir: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
) -> int:
    """Run ``command`` (in ``env`` and ``cwd``, default ours) behind the tap until it exits; its
    exit status (127: it could not start)."""
    try:
        child = subprocess.Popen(
            list(command),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=0,
            env=dict(env) if env is not None else None,
            cwd=cwd,
        )
    except OSError as exc:
        sink.out.write(f"trace: cannot start {command[0]!r}: {exc.strerror or exc}\n")
        sink.out.flush()
        return 127
    assert child.stdin is not None and child.stdout is not None
    conversation = _Conversation(sink, schema_dir)

    def forward(signum: int, _frame: FrameType | None) -> None:
        if child.poll() is None:
            child.send_signal(signum)

    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            previous[signum] = signal.signal(signum, forward)
    upstream = threading.Thread(
        target=_pump, args=(sys.stdin.buffer, child.stdin, CLIENT, conversation), daemon=True
    )
    downstream = threading.Thread(
        target=_pump, args=(child.stdout, sys.stdout.buffer, SERVER, conversation), daemon=True
    )
    upstream.start()
    downstream.start()
    try:
        status = child.wait()
        downstream.join(timeout=5.0)  # what the server wrote before it exited still goes out
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    return status if status >= 0 else 128 - status
