"""The tasks detail requirements (spec/mcp/tasks.json: removed methods, tools that are no task, statuses
of failing tools, acks, wire field names, input requests on tasks): examples/everything passes them, and
each tasks detail fault of the fault server, wrapped around examples/everything, fails exactly the
requirements it breaks."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance._fault_details import TASKS_DETAIL_FAULTS
from jsonrpc_mcp_conformance.faultserver import serve_with_faults
from jsonrpc_mcp_conformance.match import match

SPEC = load_spec()
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"
TASKS = sorted(f.id for f in SPEC.fixtures if f.id.startswith("tasks:") and "inprocess" in f.transports)

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    server = load_target(f"{EVERYTHING}:create_server")
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(90):
        return await check(target, timeout=3, only=["tasks:*"], spec=SPEC, revisions=["2026-07-28"])


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


async def test_everything_passes_every_tasks_requirement() -> None:
    run = await _run([])
    assert {(v.id, v.status) for v in run.verdicts} == {(i, "pass") for i in TASKS}


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        ("tasks-removed-methods-served", {"tasks:dispatch:removed-methods"}),
        (
            "sync-results-carry-task-id",
            {"tasks:dispatch:sync-tool", "tasks:negotiation:no-task-without-extension"},
        ),
        (
            "sync-result-untyped",
            {
                "tasks:dispatch:sync-tool",
                "tasks:dispatch:acks-complete",
                "tasks:negotiation:no-task-without-extension",
            },
        ),
        ("tool-error-task-failed", {"tasks:lifecycle:tool-error-completed"}),
        ("failed-task-with-result", {"tasks:lifecycle:protocol-error-failed"}),
        ("cancel-terminal-32602", {"tasks:cancel:terminal-ack"}),
        ("legacy-task-fields", {"tasks:wire:field-names"}),
        ("related-task-meta", {"tasks:wire:inlined-result"}),
        ("update-ack-task-envelope", {"tasks:input:update-resumes", "tasks:input:partial-update"}),
        ("answered-key-kept", {"tasks:input:partial-update"}),
        (  # (an older fault: requests are served as if they declared the extension)
            "tasks-without-extension",
            {
                "tasks:negotiation:required-task-32021",
                "tasks:negotiation:no-task-without-extension",
                "tasks:negotiation:methods-need-extension",
            },
        ),
    ],
)
async def test_each_tasks_detail_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert fault in TASKS_DETAIL_FAULTS or fault == "tasks-without-extension"
    assert _failing(await _run([fault])) == failing


@pytest.mark.parametrize(
    ("result", "ok"),
    [
        ({"ttlMs": None}, True),
        ({"ttlMs": 5000, "pollIntervalMs": 100}, True),
        ({"ttlMs": 5000, "pollIntervalMs": 0.5}, False),
        ({"ttlMs": 5000, "pollIntervalMs": None}, False),
        ({"ttlMs": 0}, False),
        ({}, False),
        ({"ttlMs": 5000, "ttl": 5000}, False),
    ],
)
def test_the_wire_field_pattern_reads_the_optional_poll_interval(result: dict[str, Any], ok: bool) -> None:
    fixture = SPEC.by_id()["tasks:wire:field-names"]
    (pattern,) = [s["expect"]["result"] for s in fixture.steps if s.get("expect", {}).get("id") == "twf"]
    probe = {k: v for k, v in pattern.items() if k not in ("resultType",)}
    assert (match(result, probe) == []) is ok
