"""The stateless detail requirements (spec/mcp/modern.json: clientInfo optional, empty params refused,
capabilities that match the handlers, the -32021 error's data, the not-found error's data.uri, list
changes on a subscriptions/listen stream):
examples/everything passes them, and each stateless detail fault of the fault server, wrapped around
examples/everything, fails exactly the requirements it breaks."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance._fault_details import STATELESS_DETAIL_FAULTS
from jsonrpc_mcp_conformance.faultserver import serve_with_faults

SPEC = load_spec()
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"
DETAIL = {
    "modern:resources:read-unknown-names-uri",
    "modern:meta:client-info-optional",
    "modern:meta:empty-params",
    "modern:discover:capabilities-match-handlers",
    "modern:capability:missing-client-capability",
    "modern:listen:tools-list-changed",
    "modern:listen:prompts-list-changed",
}

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    server = load_target(f"{EVERYTHING}:create_server")
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(60):
        return await check(target, timeout=3, only=["modern:*"], spec=SPEC, revisions=["2026-07-28"])


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


async def test_everything_passes_every_modern_requirement_it_applies_to() -> None:
    run = await _run([])
    assert _failing(run) == set()
    assert {v.id for v in run.verdicts if v.status == "pass"} >= DETAIL


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        ("not-found-without-uri", {"modern:resources:read-unknown-names-uri"}),
        # (an unsupported-version probe without clientInfo is refused with the wrong error too)
        ("client-info-required", {"modern:meta:client-info-optional", "modern:version:unsupported"}),
        ("empty-params-served", {"modern:meta:empty-params"}),
        (
            "prompts-undeclared",
            {"modern:discover:capabilities-match-handlers", "modern:capability:prompts-list-undeclared"},
        ),
        ("missing-capability-as-32602", {"modern:capability:missing-client-capability"}),
        ("no-tools-list-changed", {"modern:listen:tools-list-changed"}),
        ("no-prompts-list-changed", {"modern:listen:prompts-list-changed"}),
    ],
)
async def test_each_stateless_detail_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert fault in STATELESS_DETAIL_FAULTS
    assert _failing(await _run([fault])) == failing
