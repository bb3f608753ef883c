"""Every time limit of the test suite, in one place, in a few named levels.

A limit here bounds one step (one exchange, one process starting, one command running): it is how long
a test waits before it calls the step hung, never a claim about how fast the step is, so the values are
generous and a test asserts what happened, not how long it took. Use them as::

    from tests.timeouts import STEP, STARTUP

    with anyio.fail_after(STEP):
        result = await client.call_tool("echo", {"text": "hi"})
    done = subprocess.run(argv, capture_output=True, timeout=RUN)

On a slow or busy machine, multiply every level by one factor: ``JSONRPC_MCP_TEST_TIMEOUT_SCALE=3 make
test``. (``tests/under_load.sh`` runs the suite beside four CPU burners; the default levels are meant to
pass there.) Durations that are part of what a test checks (a server's request timeout, a keep-alive
period, "nothing arrives within 0.2 s") are not limits and stay in the test, unscaled.
"""

from __future__ import annotations

import os

SCALE_VARIABLE = "JSONRPC_MCP_TEST_TIMEOUT_SCALE"


def _scale() -> float:
    text = os.environ.get(SCALE_VARIABLE, "").strip()
    if not text:
        return 1.0
    try:
        factor = float(text)
    except ValueError:
        raise ValueError(f"{SCALE_VARIABLE} must be a number, not {text!r}") from None
    if not factor > 0:
        raise ValueError(f"{SCALE_VARIABLE} must be positive, not {text!r}")
    return factor


SCALE: float = _scale()
"""The factor every level below is multiplied by (``JSONRPC_MCP_TEST_TIMEOUT_SCALE``, default 1)."""

STEP: float = 10.0 * SCALE
"""One step: an exchange in process or with a server already running, an event awaited, a stream read."""

STARTUP: float = 30.0 * SCALE
"""A subprocess starting (importing everything, binding its port, the SDK's slow imports) and being
connected to; also a subprocess or a server stopping."""

RUN: float = 60.0 * SCALE
"""A whole short subprocess run from start to end: a CLI command, a driver script, a docs block, a
conformance run against a small server."""

LONG_RUN: float = 300.0 * SCALE
"""A long subprocess run: the conformance harness over every check, a benchmark smoke run."""

BUILD: float = 600.0 * SCALE
"""Building the wheel and installing it into a fresh virtual environment (dependencies may come from
the network)."""
