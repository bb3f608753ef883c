"""The blind spots of issue 13: each new fault fails exactly the requirements it breaks, by default."""

from __future__ import annotations

import functools

import anyio
import pytest

from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import FIXED_VERSION, create_server, serve_with_faults

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SPEC = load_spec()


async def _run(faults: list[str]) -> Run:
    """A run with the default revisions (none named: a revision the server does not speak is left out)."""
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(90):
        return await check(target, timeout=2, spec=SPEC)


def _failed(run: Run) -> set[tuple[str, str]]:
    return {(v.id, v.revision) for v in run.verdicts if v.status in ("fail", "error")}


@pytest.mark.anyio
async def test_a_fixed_version_answer_fails_version_negotiation_for_every_listed_revision() -> None:
    run = await _run(["fixed-version"])
    assert all(r.supported for r in run.revisions)  # listed in server/discover: not "not supported"
    others = [r for r in REVISIONS[:-1] if r != FIXED_VERSION]
    assert _failed(run) == {
        (rid, revision)
        for rid in (
            "lifecycle:initialize:version-negotiation",
            "lifecycle:initialize:unknown-client-capabilities",
        )
        for revision in others
    }
