"""Replaying a recorded session (``jsonrpc-mcp trace --format jsonl``) against a server.

Theory of operation
-------------------
A recording is the conversation as the tap saw it, frame by frame. :func:`replay` plays the
client's side of it against a live server, in the recorded order, and compares what comes back:

- a client request or notification is sent as recorded (same ids: the client owns them);
- a recorded *answer* from the server is awaited by its id, then compared with the live one;
- a recorded *request* from the server (handshake-era sampling, elicitation, roots) is awaited by
  method, and the client's recorded answer to it is sent with the live request's id (the server
  owns those ids, so they may differ);
- server notifications are not awaited (their number and timing are not the server's contract);
  live ones are read and counted, never compared.

Two answers agree when they are the same kind (result or error), errors carry the same code, and
results have the same shape: the same keys, the same JSON types, lists of the same length, and the
same values where a value is the contract (``isError``, ``resultType``, ``protocolVersion``).
Volatile values are not compared at all: ``_meta``, ``requestState``, cursors, ``serverInfo``
versions. Each wait is bounded by ``timeout``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

__all__ = ["Difference", "ReplayResult", "ServerGone", "compare", "load_recording", "replay"]

_VOLATILE = {"_meta", "requestState", "nextCursor", "cursor", "version", "instructions"}
_CONTRACT = {"isError", "resultType", "protocolVersion", "action", "code"}


class RecordingError(Exception):
    """The file is not a recording the tap wrote."""


class ServerGone(Exception):
    """The server stopped reading before the replay was over (it exited, or closed its input);
    ``received``: the frames it had sent until then."""

    def __init__(self, received: int) -> None:
        super().__init__("the server closed its input")
        self.received = received


@dataclass
class Difference:
    """Where a live answer departs from the recorded one."""

    frame: int  # the 1-based line of the recording
    what: str


@dataclass
class ReplayResult:
    answers: int = 0  # recorded answers compared
    differences: list[Difference] = field(default_factory=list)
    notifications: int = 0  # live notifications read (not compared)
    received: int = 0  # frames the server sent
    ended: bool = False  # the server closed its output before the replay was over

    @property
    def ok(self) -> bool:
        return not self.differences


def load_recording(path: Path) -> list[dict[str, Any]]:
    """The frames of a JSONL recording, each with ``from``, ``kind`` and ``message``."""
    frames = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            frame = json.loads(line)
        except ValueError as exc:
            raise RecordingError(f"{path}:{number}: not JSON ({exc})") from None
        if (
            not isinstance(frame, dict)
            or frame.get("from") not in ("client", "server")
            or "kind" not in frame
        ):
            raise RecordingError(f"{path}:{number}: not a frame of a trace recording (no from/kind)")
        frame["line"] = number
        frames.append(frame)
    return frames


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def compare(recorded: Any, live: Any, path: str = "") -> list[str]:
    """How ``live`` differs in shape from ``recorded`` (see the module docs); [] when they agree."""
    where = path or "the answer"
    if _type(recorded) != _type(live):
        return [f"{where}: {_type(recorded)} recorded, {_type(live)} now"]
    if isinstance(recorded, dict):
        out = []
        keys = (set(recorded) | set(live)) - _VOLATILE
        for key in sorted(keys):
            if key not in live:
                out.append(f"{path}/{key}: recorded, now missing")
            elif key not in recorded:
                out.append(f"{path}/{key}: new, not in the recording")
            else:
                out += compare(recorded[key], live[key], f"{path}/{key}")
                if key in _CONTRACT and recorded[key] != live[key]:
                    out.append(
                        f"{path}/{key}: {json.dumps(recorded[key])} recorded, {json.dumps(live[key])} now"
                    )
        return out
    if isinstance(recorded, list):
        if len(recorded) != len(live):
            return [f"{where}: {len(recorded)} items recorded, {len(live)} now"]
        return [
            d
            for i, (a, b) in enumerate(zip(recorded, live, strict=True))
            for d in compare(a, b, f"{path}/{i}")
        ]
    return []


class _Live:
    """The server's live frames, read in the background and sorted for the replay to wait on."""

    def __init__(self) -> None:
        self.answers: dict[str, dict[str, Any]] = {}
        self.requests: list[dict[str, Any]] = []
        self.notifications = 0
        self.changed = anyio.Event()
        self.ended = False
        self.received = 0

    def add(self, message: Any) -> None:
        self.received += 1
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict):
                continue
            if "method" in item and "id" in item:
                self.requests.append(item)
            elif "method" in item:
                self.notifications += 1
            else:
                self.answers[json.dumps(item.get("id"), sort_keys=True)] = item
        self.changed.set()
        self.changed = anyio.Event()

    async def wait(self, found: Any, timeout: float) -> Any:
        with anyio.move_on_after(timeout):
            while True:
                value = found()
                if value is not None or self.ended:
                    return value
                await self.changed.wait()
        return None


async def replay(frames: Sequence[dict[str, Any]], stream: Any, *, timeout: float = 10.0) -> ReplayResult:
    """Play the client's side of ``frames`` over ``stream`` (a MessageStream of bytes); raises
    :class:`ServerGone` when the server stops reading before the last frame is sent."""
    live = _Live()
    result = ReplayResult()
    server_ids: dict[str, Any] = {}  # recorded server request id -> the live one

    async def read() -> None:
        try:
            while True:
                raw = await stream.receive()
                try:
                    live.add(json.loads(raw))
                except ValueError:
                    continue
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            live.ended = True
            live.changed.set()

    gone = False
    async with anyio.create_task_group() as tg:
        tg.start_soon(read)
        for frame in frames:
            if frame["kind"] not in ("request", "notification", "result", "error", "invalid"):
                continue  # e.g. the HTTP tap's notes of request lines and headers
            message = frame.get("message")
            if frame["from"] == "client":
                if frame["kind"] in ("result", "error") and isinstance(message, dict):
                    recorded_id = json.dumps(message.get("id"), sort_keys=True)
                    if recorded_id in server_ids:
                        message = {**message, "id": server_ids[recorded_id]}
                if frame["kind"] != "invalid":
                    try:
                        await stream.send(json.dumps(message).encode())
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                        gone = True
                        break
                continue
            if frame["kind"] in ("result", "error"):
                result.answers += 1
                key = json.dumps(message.get("id") if isinstance(message, dict) else None, sort_keys=True)
                answer = await live.wait(lambda k=key: live.answers.pop(k, None), timeout)
                if answer is None:
                    result.differences.append(
                        Difference(frame["line"], f"no answer to id {key} within {timeout:g} s")
                    )
                    continue
                for what in compare(message, answer):
                    result.differences.append(
                        Difference(frame["line"], f"{frame.get('method') or key}: {what}")
                    )
            elif frame["kind"] == "request" and isinstance(message, dict):
                method = message.get("method")

                def asked(m: Any = method) -> dict[str, Any] | None:
                    for index, request in enumerate(live.requests):
                        if request.get("method") == m:
                            return live.requests.pop(index)
                    return None

                request = await live.wait(asked, timeout)
                if request is None:
                    result.differences.append(
                        Difference(frame["line"], f"the server did not ask {method} again")
                    )
                else:
                    server_ids[json.dumps(message.get("id"), sort_keys=True)] = request.get("id")
        tg.cancel_scope.cancel()
    if gone:
        raise ServerGone(live.received)
    result.notifications = live.notifications
    result.received = live.received
    result.ended = live.ended
    return result
