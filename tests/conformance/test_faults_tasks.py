"""The Tasks extension fixtures (spec/mcp/tasks.json): each fault fails exactly the requirements it
breaks, and the fault server without faults passes them all."""

from __future__ import annotations

import functools

import anyio
import pytest

from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import MODERN, create_server, serve_with_faults
from tests import timeouts

SPEC = load_spec()
TASKS = [  # (the tasks details, wrapped around examples/everything: test_faults_tasks_detail.py)
    "tasks:cancel:empty-ack",
    "tasks:create:durable",
    "tasks:lifecycle:completed-inlines-result",
    "tasks:negotiation:declared",
    "tasks:negotiation:methods-need-extension",
    "tasks:negotiation:no-task-without-extension",
    "tasks:unknown:cancel-32602",
    "tasks:unknown:get-32602",
]

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(target, revisions=[MODERN], timeout=2, only=TASKS, spec=SPEC)


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


def test_the_tasks_area_has_its_fixtures() -> None:
    assert set(TASKS) <= {f.id for f in SPEC.fixtures if f.id.startswith("tasks:")}


async def test_every_tasks_requirement_passes_without_faults() -> None:
    run = await _run([])
    assert {v.id: v.status for v in run.verdicts} == dict.fromkeys(TASKS, "pass")


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        ("tasks-undeclared", {"tasks:negotiation:declared"}),
        (
            "task-forgotten",
            {"tasks:create:durable", "tasks:lifecycle:completed-inlines-result", "tasks:cancel:empty-ack"},
        ),
        ("task-never-completes", {"tasks:lifecycle:completed-inlines-result"}),
        ("cancel-not-empty", {"tasks:cancel:empty-ack"}),
        ("unknown-task-found", {"tasks:unknown:get-32602", "tasks:unknown:cancel-32602"}),
        (
            "tasks-without-extension",
            {"tasks:negotiation:no-task-without-extension", "tasks:negotiation:methods-need-extension"},
        ),
    ],
)
async def test_each_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert _failing(await _run([fault])) == failing
