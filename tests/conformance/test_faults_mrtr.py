"""Several input requests per round (issue 14): each fault fails exactly the requirements it breaks."""

from __future__ import annotations

import functools

import anyio
import pytest

from jsonrpc_mcp_conformance import InProcessTarget, Run, check, load_spec
from jsonrpc_mcp_conformance.faultserver import MODERN, create_server, serve_with_faults
from tests import timeouts

SPEC = load_spec()
SEVERAL = "modern:mrtr:several-inputs-one-round"
PARTIAL = "modern:mrtr:partial-answer-reasks-the-rest"

pytestmark = pytest.mark.anyio


async def _run(faults: list[str]) -> Run:
    target = InProcessTarget(functools.partial(serve_with_faults, create_server(), faults=faults))
    with anyio.fail_after(timeouts.LONG_RUN):
        return await check(target, revisions=[MODERN], timeout=2, spec=SPEC)


def _verdicts(run: Run) -> dict[str, str]:
    return {
        v.id: v.status for v in run.verdicts if v.status in ("fail", "error") or v.id in (SEVERAL, PARTIAL)
    }


async def test_the_several_inputs_requirements_pass_without_faults() -> None:
    assert _verdicts(await _run([])) == {SEVERAL: "pass", PARTIAL: "pass"}


async def test_one_input_per_round_fails_both() -> None:
    assert _verdicts(await _run(["one-input-per-round"])) == {SEVERAL: "fail", PARTIAL: "fail"}


async def test_forgetting_partial_answers_fails_only_the_partial_answer_requirement() -> None:
    assert _verdicts(await _run(["forgets-partial-answers"])) == {SEVERAL: "pass", PARTIAL: "fail"}
