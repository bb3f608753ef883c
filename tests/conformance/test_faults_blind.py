"""The blind spots of issue 13: each new fault fails exactly the requirements it breaks, by default."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import FIXED_VERSION, create_server, serve_with_faults
from tests import timeouts

REVISIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]
SPEC = load_spec()
ROOT = Path(__file__).resolve().parents[2]


async def _run(faults: list[str]) -> Run:
    """A run with the default revisions (none named: a revision the server does not speak is left out)."""
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(timeouts.LONG_RUN):
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


PAGINATION = "features:pagination:tools-list-complete"
BOUNDS = [f.id for f in SPEC.fixtures if f.id.startswith("features:tools:bounds-")]


@pytest.mark.anyio
async def test_a_server_that_never_validates_fails_exactly_the_schema_bounds_requirements() -> None:
    assert len(BOUNDS) == 4
    clean = await _run([])
    assert {(v.id, v.revision) for v in clean.verdicts if v.id in BOUNDS and v.status == "pass"} == {
        (rid, revision) for rid in BOUNDS for revision in REVISIONS
    }
    assert _failed(await _run(["no-validation"])) == {
        (rid, revision) for rid in BOUNDS for revision in REVISIONS
    }


@pytest.mark.anyio
async def test_the_memory_example_passes_the_bounds_of_recall() -> None:
    server = load_target(str(ROOT / "examples" / "memory" / "server.py"))
    with anyio.fail_after(timeouts.LONG_RUN):
        run = await check(InProcessTarget.from_server(server), only=BOUNDS, spec=SPEC)
    assert [v.key for v in run.failures()] == []
    passed = {v.id for v in run.verdicts if v.status == "pass"}
    assert passed == {"features:tools:bounds-maximum", "features:tools:bounds-minimum"}


@pytest.mark.anyio
async def test_a_cursor_back_to_the_first_page_fails_the_pagination_walk() -> None:
    clean = await _run([])
    assert {v.revision for v in clean.verdicts if v.id == PAGINATION and v.status == "pass"} == set(REVISIONS)
    failed = _failed(await _run(["repeats-page"]))
    assert {(PAGINATION, revision) for revision in REVISIONS} <= failed
    unique = {  # every walk of tools/list that insists on each tool once
        f.id
        for f in SPEC.fixtures
        if any(
            s.get("paginate", {}).get("method") == "tools/list" and "unique" in s["paginate"] for s in f.steps
        )
    }
    assert unique == {PAGINATION, "features:tools:name-format"}
    ran = {(v.id, v.revision) for v in clean.verdicts if v.status == "pass"}
    assert failed == {(rid, revision) for rid, revision in ran if rid in unique}
