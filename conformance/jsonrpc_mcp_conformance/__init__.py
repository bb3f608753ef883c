"""The MCP conformance harness: the fixtures in ``spec/`` run against any MCP server.

From pytest, in-process::

    from jsonrpc_mcp_conformance import InProcessTarget, check
    run = await check(InProcessTarget.from_server(server), revisions=["2025-11-25"])
    assert not run.failures()
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .fixtures import Fixture, FixtureError, Spec, load_spec, select_ids
from .httptarget import HttpTarget
from .runner import Options, Run, Verdict, run_conformance
from .targets import InProcessTarget, StdioTarget, Target

__all__ = [
    "Fixture",
    "FixtureError",
    "HttpTarget",
    "InProcessTarget",
    "Options",
    "Run",
    "Spec",
    "StdioTarget",
    "Target",
    "Verdict",
    "check",
    "load_spec",
]


async def check(
    target: Target,
    *,
    revisions: Sequence[str] | None = None,
    only: Sequence[str] = (),
    skip: Sequence[str] = (),
    timeout: float = 5.0,
    schema_dir: Path | None = None,
    spec: Spec | None = None,
    startup_timeout: float | None = None,
) -> Run:
    """Run the (selected) fixtures against ``target`` and return the verdicts (``startup_timeout``:
    for spawning and the handshake, default ``timeout``)."""
    spec = spec or load_spec()
    fixtures = select_ids(spec.fixtures, only, skip)
    options = Options(
        revisions=revisions, timeout=timeout, schema_dir=schema_dir, startup_timeout=startup_timeout
    )
    return await run_conformance(target, spec, fixtures, options)
