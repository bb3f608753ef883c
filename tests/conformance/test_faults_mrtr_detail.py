"""The MRTR detail requirements (spec/mcp/modern.json: what the official suite's
test_input_required_result_* fixtures answer, and how retries with missing, extra or malformed
answers are met): examples/everything passes them, and each MRTR detail fault of the fault server,
wrapped around examples/everything, fails exactly the requirements it breaks."""

from __future__ import annotations

import functools
from pathlib import Path

import anyio
import pytest

from jsonrpc_mcp.cli import load_target
from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance._fault_details import MRTR_DETAIL_FAULTS
from jsonrpc_mcp_conformance.faultserver import serve_with_faults

SPEC = load_spec()
EVERYTHING = Path(__file__).resolve().parents[2] / "examples" / "everything" / "server.py"
MRTR = sorted(f.id for f in SPEC.fixtures if f.id.startswith("modern:mrtr:"))

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    server = load_target(f"{EVERYTHING}:create_server")
    target = InProcessTarget(functools.partial(serve_with_faults, server, faults=faults))
    with anyio.fail_after(60):
        return await check(target, timeout=3, only=MRTR, spec=SPEC, revisions=["2026-07-28"])


def _failing(run: Run) -> set[str]:
    return {v.id for v in run.verdicts if v.status in ("fail", "error")}


async def test_everything_passes_every_mrtr_requirement() -> None:
    assert len(MRTR) >= 11
    run = await _run([])
    assert {(v.id, v.status) for v in run.verdicts} == {(i, "pass") for i in MRTR}


@pytest.mark.parametrize(
    ("fault", "failing"),
    [
        (
            "input-requests-rekeyed",
            {"modern:mrtr:elicitation-request", "modern:mrtr:partial-answer-reasks-the-rest"},
        ),
        (
            "input-requests-as-elicitation",
            {
                "modern:mrtr:sampling-request",
                "modern:mrtr:list-roots-request",
                "modern:mrtr:several-inputs-one-round",
                "modern:mrtr:partial-answer-reasks-the-rest",
            },
        ),
        (
            "no-request-state",
            {
                "modern:mrtr:request-state",
                "modern:mrtr:multi-round-first",
                "modern:mrtr:several-inputs-one-round",
            },
        ),
        ("mrtr-only-for-tools", {"modern:mrtr:prompt-request"}),
        (
            "reasks-as-error",
            {"modern:mrtr:missing-answer-reasked", "modern:mrtr:partial-answer-reasks-the-rest"},
        ),
        ("extra-answers-refused", {"modern:mrtr:extra-answers-ignored"}),
        ("malformed-answers-accepted", {"modern:mrtr:malformed-answers-refused"}),
    ],
)
async def test_each_mrtr_detail_fault_fails_what_it_breaks(fault: str, failing: set[str]) -> None:
    assert fault in MRTR_DETAIL_FAULTS
    assert _failing(await _run([fault])) == failing
