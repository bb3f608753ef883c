"""The pace of a run: how many fixtures may wait for answers at once (see :class:`Pace`)."""

from __future__ import annotations

import anyio

__all__ = ["Pace"]


class Pace:
    """How many revisions may run a fixture at once: backs off when answers slow down.

    Theory of operation: every fixture (and every session opening) holds a slot of a capacity
    limiter while it runs. The run starts with one slot per revision, or one when the first
    handshake was slow. Any answer slower than ``slow`` seconds (a fifth of the response timeout by
    default: far from a timeout still) takes the width down to one at once, so a server or machine
    that slows down is no longer asked several things at a time; every ``calm`` answers in a row
    quicker than half of that give one slot back, up to ``widest``. Starting a process is not an
    answer (its first answer has the start-up timeout): only answers on connections already heard
    from count. Concurrency never decides a verdict; it only keeps answers far from their timeout."""

    def __init__(self, widest: int, slow: float, calm: int = 10) -> None:
        self.widest = max(widest, 1)
        self.slow = slow
        self.calm = calm
        self.limiter = anyio.CapacityLimiter(self.widest)
        self._quick = 0
        self.narrowed = 0  # how many times the width went down to one (for the tests and the log)

    @property
    def width(self) -> int:
        return int(self.limiter.total_tokens)

    def narrow(self) -> None:
        if self.width > 1:
            self.narrowed += 1
            self.limiter.total_tokens = 1
        self._quick = 0

    def answered(self, seconds: float) -> None:
        """One answer took ``seconds``."""
        if seconds > self.slow:
            self.narrow()
        elif seconds < self.slow / 2:
            self._quick += 1
            if self._quick >= self.calm and self.width < self.widest:
                self.limiter.total_tokens = self.width + 1
                self._quick = 0

    def slot(self) -> anyio.CapacityLimiter:
        """``async with pace.slot():`` around one fixture."""
        return self.limiter
