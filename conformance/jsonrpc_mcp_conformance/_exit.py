"""How long a stdio server that was told to stop (its stdin closed) is given to exit, on a busy machine.

Theory of operation. "Exits within N s" is judged by the wall clock, and on a machine whose cores are
saturated a server may get only a small share of a core: the interpreter's own shutdown then takes
seconds of wall time for a fraction of a second of CPU. So the wait is N seconds, and then goes on
as long as the evidence says the server is on its way out rather than staying: it is still being
given CPU (its CPU time, read from ``/proc``, grew over the last second) and it has used less than N
seconds of CPU since its input was closed (so a server that works for longer than N s before it
exits, or that keeps working and never exits, fails as on a quiet machine; one that waits idle fails
at N s). Where ``/proc`` cannot be read (not Linux), the wait is N seconds.
"""

from __future__ import annotations

import os

import anyio
import anyio.abc

__all__ = ["cpu_seconds", "wait_for_exit"]

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
_INTERVAL = 1.0  # how often the CPU time is read once the N seconds are over
_LIMIT = 10  # never more than this many times N in all


def cpu_seconds(pid: int) -> float | None:
    """The CPU time (user + system) process ``pid`` has used so far, None when it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


async def wait_for_exit(process: anyio.abc.Process, within: float, since: float | None) -> bool:
    """Whether ``process`` exited: within ``within`` s, or later while it still makes progress
    (see the module's text). ``since``: its CPU time when its input was closed (None: unknown)."""
    with anyio.move_on_after(within):
        await process.wait()
        return True
    if since is None or within <= 0:
        return False
    before = cpu_seconds(process.pid)
    waited = within
    while before is not None and before - since < within and waited < within * _LIMIT:
        with anyio.move_on_after(_INTERVAL):
            await process.wait()
            return True
        waited += _INTERVAL
        now = cpu_seconds(process.pid)
        if now is None or now <= before:
            return process.returncode is not None
        before = now
    return process.returncode is not None
