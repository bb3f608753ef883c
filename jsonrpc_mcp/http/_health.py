"""Liveness and readiness probes, and the phases of an app's life that readiness reports.

Theory of operation
-------------------
``GET /healthz`` (liveness) answers 200 as long as the process serves HTTP at all. ``GET /readyz``
(readiness) answers 200 only when the app is *ready*: its lifespan has started, it is not draining,
and every readiness check (e.g. a PING of the Redis it is configured with) passes within a second;
otherwise 503 with the reason. Both are answered before the Host/Origin check and authentication:
a load balancer or an orchestrator probes them by address, with no token.

Phases: an app served with a lifespan is ``starting`` until the lifespan startup completes (an app
mounted without a lifespan is ready at once), then ``ready``; :meth:`McpHttpApp.begin_drain` (the
first SIGTERM of ``jsonrpc-mcp serve``) makes it ``draining`` for good: readiness fails, a new
session is refused with 503 and ``Retry-After``, requests in flight carry on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio
import orjson

from ._asgi import Send

__all__ = ["Lifecycle", "ReadinessCheck", "probe"]

STARTING, READY, DRAINING = "starting", "ready", "draining"
CHECK_TIMEOUT = 1.0  # seconds a readiness check may take before it counts as failed

ReadinessCheck = Callable[[], Awaitable[str | None]]
"""An async check run by each readiness probe: None when fine, else why the app is not ready."""


class Lifecycle:
    """Where an app is in its life: its phase (read by the readiness probe and by the parts that
    open sessions: a draining app opens none), and the signal that it is shutting down (long-lived
    streams end on it). One per app, shared by its parts."""

    __slots__ = ("phase", "shutting_down")

    def __init__(self) -> None:
        self.phase = READY  # starting (during the lifespan startup), ready, draining
        self.shutting_down = anyio.Event()


async def probe(send: Send, *, head: bool, phase: str | None, checks: list[ReadinessCheck]) -> None:
    """Answer a probe: liveness when ``phase`` is None, else readiness in that phase."""
    reason: str | None = None
    if phase is not None:
        if phase != READY:
            reason = phase
        for check in checks:
            if reason is not None:
                break
            try:
                with anyio.fail_after(CHECK_TIMEOUT):
                    reason = await check()
            except TimeoutError:
                reason = f"a readiness check took longer than {CHECK_TIMEOUT:g} s"
            except Exception as exc:
                reason = f"a readiness check failed: {type(exc).__name__}: {exc}"
    status = 200 if reason is None else 503
    body = orjson.dumps({"status": "ok"} if reason is None else {"status": "unavailable", "reason": reason})
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    if reason is not None:
        headers.append((b"retry-after", b"5"))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if head else body})
