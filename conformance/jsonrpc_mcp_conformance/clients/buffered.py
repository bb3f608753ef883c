"""A request body read whole by an ASGI wrapper, then handed on to the app as if unread."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["read_body"]


async def read_body(receive: Callable[[], Awaitable[Any]]) -> tuple[bytes, Callable[[], Awaitable[Any]]]:
    """The whole body, and a ``receive`` for the app that gives it once more, then the real one's."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body", False):
            break
    replay = [{"type": "http.request", "body": body, "more_body": False}]

    async def replayed() -> Any:
        return replay.pop(0) if replay else await receive()

    return body, replayed
